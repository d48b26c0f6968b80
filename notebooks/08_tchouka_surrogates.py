# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 08 · tchouka: differentially private surrogate generation
#
# Tchouka, Couchot & Laiymani (2023), *An Easy-to-use and Robust Approach for the Differentially
# Private De-Identification of Clinical Textual Documents*, section 4. Detected PHI is replaced by
# surrogates: names and identifiers at random (memoised), **dates and ages** with the ε·d-private
# Laplace mechanism in the unit they are written in (section 4.1), **cities** with the exponential
# mechanism of Algorithm 1 over places that are close geographically *and* in statistical/medical
# features (section 4.2). The note's ε is split uniformly over its entities.
#
# | part | what | library (`tchouka.run_study` runs them all; `res.<field>`) |
# |---|---|---|
# | (a) | the paper's thread example end to end (French), Figure 6 analog | `thread.thread_example`, `thread.figure6_data` (`res.thread`, `res.figure6`) |
# | (b) | utility vs ε: dates, ages, stays; cities | `utility.date_utility`, `utility.location_utility` |
# | (c) | privacy: known-one-date attack, empirical ε·d checks | `privacy.known_date_attack`, `privacy.guarantee_checks` |
# | (d) | a synthetic note before / after | `thread.before_after` |
# | (e) | the thread as values: Figure 5 analog, one synthetic patient's notes | `thread_values.thread_table`, `plot_thread` |
# | (f) | Table 2 analog: the NER that feeds the surrogates, per PHI type | `ner.default_tagger_predictions`, `ner.table2` |
#
# Baselines: uniform per-patient date shift (Stubbs et al. 2015, used for i2b2 2014), bounded-Laplace
# LDP in three time categories and geo-indistinguishability (Tchouka et al. 2022), uniform random place,
# no change. Two variants of Algorithm 1: **as published** (candidates = the k nearest places of the
# secret city: the candidate set depends on the secret, so the paper's ε·d proof does not hold) and with
# a **fixed public candidate set** and `exp(-ε d / 2)` (a valid ε·d-private exponential mechanism).
# All computation lives in `deidlib.studies.tchouka` and `deidlib.surrogates`; only synthetic notes are
# shown.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper: sizes of the simulations (see deidlib/studies/tchouka/params.py)
corpus = "synthetic"  # the before/after example always uses the synthetic corpus (no real note is shown)
data_dir = None  # unused (the optional Eurostat hospital table is looked up with find_data_dir)
seed = 0  # seed of every simulation and surrogate draw
device = "cpu"  # unused: NumPy only
out_dir = None  # figures, tables and the results JSON are written here (None: runs/<profile>/<name> of the checkout, from any working folder)
epsilon = None  # thread example: ε of the whole note (None: the profile's value, 1.0)

# %%
# ruff: noqa: E402, B018  (notebook: parameters cell first, tables displayed as cell results)
import json

import matplotlib.pyplot as plt
from IPython.display import HTML, display

from deidlib.plotting import savefig
from deidlib.reporting import (
    annotated_html,
    claims_for_profile,
    run_folder,
    verdict_counts,
    write_result,
    write_table,
)
from deidlib.studies import tchouka

out = run_folder(out_dir, profile, "08_tchouka_surrogates")
params = tchouka.params_for(profile, epsilon=epsilon)
res = tchouka.run_study(params, seed=seed)
places, places_desc = res.places, res.places_desc
print(f"profile={profile} seed={seed}; French places: {len(places)} ({places_desc})")
params

# %% [markdown]
# ## (a) The thread example, French locale
# "Mr. Durand born in Dijon, 40 years old, was admitted to the hospital from 12/02/2020 to February 26,
# 2020 following a road accident in Dijon". Two dates (noised in days), one age (in years) and one city
# (two mentions, memoised) share ε: ε/4 each; the name is replaced at random and uses no budget.
# Paper's result (its draw): "Mr. Julien born in Besançon, 37 years old, ... from 02/20/2020 to March 01, 2020
# ... in Besançon". Numeric dates are read day first (French).

# %%
thread = res.thread
print("before:", thread["document"].text)
print("after: ", thread["surrogate"].text)
print("budget:", thread["budget"])
print("entities sharing ε:", thread["entities"])
thread["spans"]

# %% [markdown]
# The same note with the fixed-candidate variant (all French places are candidates; ε/4 = 0.25 on a
# normalised distance in [0, 1] is a weak preference for close places, hence a far-away substitute is
# likely at this ε):

# %%
thread_fixed = res.thread_fixed
print("after (fixed):", thread_fixed["surrogate"].text)

# %% [markdown]
# ### Figure 6 analog: Algorithm 1 around Dijon
# The k = 10 candidates (within 100 km, smallest normalised distance d over latitude, longitude and
# features), score U = 1 − d and the probability ∝ exp(ε U) for several ε per city. The paper's
# features (population, cancer incidence, strokes) are replaced by log10 population and, when the
# Eurostat healthcare table is on this machine, log1p hospitals and beds per city.

# %%
fig6 = res.figure6
write_table(fig6, "tchouka_figure6", out, index=False)
fig = tchouka.plot_figure6(fig6, "Dijon")
savefig(fig, "tchouka_figure6", out)
plt.show()
fig6.round(4)

# %% [markdown]
# ## (b) Utility against ε
# Simulated patient timelines (1–4 stays over 20 years, one age per patient; see the module docstring).
# ε is per entity (after the budget split). `shift` and `none` do not depend on ε.

# %%
timelines = res.timelines
print(f"{timelines.n_patients} patients, {len(timelines.days)} dates, {len(timelines.admission)} stays")
du = res.date_utility
write_table(du, "tchouka_date_utility", out, index=False)
fig = tchouka.plot_date_utility(du)
savefig(fig, "tchouka_dates_utility", out)
plt.show()
du.round(3)

# %% [markdown]
# Cities: expected distance between a secret city and its substitute (normalised feature distance d and
# km) and the probability of keeping the city. `fixed`, `paper` and `uniform` are exact expectations
# over their output laws; geo-indistinguishability is sampled, with ε per km = ε / L (L = km per unit
# of d on the coordinates, `res.km_per_unit`).

# %%
lu = res.location_utility
write_table(lu, "tchouka_location_utility", out, index=False)
print(f"L = {res.km_per_unit:.0f} km per unit of d")
fig = tchouka.plot_location_utility(lu)
savefig(fig, "tchouka_locations_utility", out)
plt.show()
lu.round(4)

# %% [markdown]
# ## (c) Privacy
# **Known-one-date attack** (section 2: with a uniform shift "an attacker only needs to know one date in
# file to reconstruct the others"): the attacker knows each patient's first true date and its surrogate.
# **Guarantee checks**: for each mechanism two neighbouring inputs, the claimed bound L = ε·d, the exact
# maximum log-ratio of the output laws (where known) and the empirical ratio test on sampled outputs
# (`deidlib.surrogates.audit.ratio_test`; `ratio_test_passed` = no output bin rejects the bound at family-wise
# level α). `passed` follows the exact log-ratio where it is known (`exact_within_bound`), the ratio test elsewhere.

# %%
attack = res.attack
write_table(attack, "tchouka_attack", out, index=False)
attack.round(3)

# %%
checks, hists = res.checks, res.hists
write_table(checks, "tchouka_guarantee_checks", out, index=False)
fig = tchouka.plot_privacy(attack, checks, hists)
savefig(fig, "tchouka_privacy", out)
plt.show()
checks.round(4)

# %% [markdown]
# ## (e) The thread as values (Figure 5 analog)
# Figure 5 of the paper shows the dates and the age of the thread example before and after (its draw:
# 40 → 37 years, 12/02/2020 → 20/02/2020 (+8 days), February 26 → March 01 (+4 days)). Below, this run's
# draw for the same note (ε = `epsilon` per note, ε/4 per value) and, for a thread of several notes, one
# synthetic patient's notes surrogated together (`memo_scope="patient"`: one ε and one memo for the
# patient, so a date or age repeated in several notes, in any format, gets the same surrogate). `shift` is
# surrogate − original in the unit the mechanism noised (days, months or years for dates, years for
# ages); names and cities are listed with their replacement. Surrogate draws are seeded (`seed`); the
# CLI draws from a secure generator unless `--seed` is given.

# %%
thread_tab = res.thread_table
write_table(thread_tab, "tchouka_thread", out, index=False)
fig = tchouka.plot_thread(thread_tab, params.epsilon, params.epsilon)
savefig(fig, "tchouka_thread", out)
plt.show()
thread_tab[thread_tab.type.isin(["DATE", "AGE"])].head(20)

# %% [markdown]
# ## (f) Table 2 analog: the NER that feeds the surrogates
# `deidlib deidentify --model gru` finds the PHI with the package's GRU-CRF recipe (`deidlib.pipeline.default_model`:
# a typed GRU-CRF trained on synthetic notes only); `deidlib surrogate` takes spans already found. We score that
# model on the synthetic test split of its own corpus with the i2b2 scorer (strict: typed, exact offsets),
# per label of the paper's Table 1 (section 3.4, Table 2), after mapping the i2b2 TYPEs to those labels on
# both sides (PER: PATIENT, DOCTOR; ORG: HOSPITAL, ORGANIZATION, DEPARTMENT; LOC: the other LOCATION
# TYPEs; TEL: PHONE, FAX; QID: the ID TYPEs and USERNAME; REF has no i2b2 TYPE; PROFESSION, EMAIL, URL,
# IPADDR, OTHER are left out). The smoke profile trains the same recipe on the smoke corpus for one epoch
# (its numbers mean nothing); cpu and paper use the gru model itself (built once and cached). The
# paper's numbers are on French hospital notes (HNFC) and i2b2: a different corpus, so the comparison is
# of levels only. The gru model replaces a token when its PHI probability exceeds 0.03 (a
# recall-oriented threshold saved in the model, see `GRU_MODEL_RECIPE`), which costs precision on
# some types (LOC at the cpu profile). Time: about a minute on one thread to build the model when it is
# not cached yet.

# %%
ner_run, t2 = res.ner, res.table2
write_table(t2, "tchouka_table2", out, index=False)
print(f"{ner_run['model']}: {len(ner_run['gold'])} synthetic test notes")
t2[["label", "i2b2_types", "gold", "precision", "recall", "f1",
    "paper_proposal_precision", "paper_proposal_recall", "paper_proposal_f1", "paper_dernoncourt2016_f1"]].round(3)

# %% [markdown]
# ## Paper vs ours
# The paper's NER statement (section 3.4: overall F1 97.4, "at the level of those in English") against the overall F1 of (f), and its privacy statements against the exact maximum log-ratio of each mechanism's output laws (the empirical one where no exact value exists); the reference is the bound ε·d.
# Each verdict is computed from this run's numbers by `deidlib.reporting.verdict` under the rule in its row
# (the [verdict legend](../docs/verdicts.md) says what each verdict means).
# The table is also written as `tchouka_claims.csv`.
#
# The Algorithm 1 row is computed exactly: its candidate set depends on the secret city, so some output has probability 0 under one input and not the other, and no finite ε·d bounds the ratio.

# %%
claims = claims_for_profile(tchouka.paper_vs_ours(checks, t2), profile)
write_table(claims, "tchouka_claims", out, index=False, markdown=True)
print(verdict_counts(claims))
claims

# %% [markdown]
# ## (d) A synthetic note before and after (gold PHI surrogated, ε = 1 per note, en_US)

# %%
ba = res.before_after
print(
    f"{ba['documents']} synthetic notes, {ba['entities']} PHI mentions; mean ε per DP entity "
    f"{ba['epsilon_per_entity']:.3f}"
)
display(ba["corpus"].to_frame())
display(HTML("<h4>before</h4>" + annotated_html(ba["original"], max_chars=2500)))
display(HTML("<h4>after</h4>" + annotated_html(ba["surrogate"], max_chars=2500)))
ba["replacements"]

# %%
summary = res.summary
write_result(out, "tchouka", "surrogates", params={**vars(params), "corpus": corpus}, metrics=summary, seeds=[seed])
print(json.dumps({k: summary[k] for k in ("thread",)}, ensure_ascii=False, indent=1, default=str)[:1500])
print("written to", out)
