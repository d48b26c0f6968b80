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
# # 09 · Privacy audits: every method attacked the same way, next to its utility
#
# Each paper argues its privacy in its own terms (ε for DP-SGD, θ_u for DSSGD, ε·d for surrogates).
# Here every method is attacked on one synthetic corpus and shown next to its utility
# (binary-token F1 on the test notes):
#
# | method | attack | library |
# |---|---|---|
# | DP-SGD through a recipe that learns (frozen public MiniLM + small head, `minilm`, at several ε — cpu profile 1, 4, 8 — and its non-private reference), and for contrast a small tagger from scratch (non-private, and DP-SGD at σ = 1 at the cpu profile) | membership inference per sentence and per patient (loss threshold, offline LiRA; TPR at 1 % / 0.1 % FPR), canary exposure (k = 1, 4, 16 copies) | `deidlib.audits.membership`, `.canary` |
# | DSSGD θ_u, DSSGD + DP upload | the server reads the words of a site's batch from its upload (non-zero word-embedding rows) | `deidlib.audits.reconstruction` |
# | pseudonymization with N neighbours (Friedrich et al. §4) | recovering the original PHI word from its pseudonym (the pseudonym and its nearest GloVe neighbours as guesses) | `deidlib.audits.recovery` |
# | surrogates ε (memo per note / per patient) | note linkage by shared surrogate names and places; equal-value disclosure | `deidlib.audits.linkage` |
# | adversarial representation (Friedrich et al. §5, three-phase at N = 100; notebook 06's functions), with its two controls without privacy training (control P1: a noise-free BiLSTM trained on de-identification only, the non-private reference; control raw: the public GloVe vectors) | the frozen-representation adversary: trained on the frozen representation, scored on held-out real/fake pairs (accuracy; chance 0.5) | `deidlib.privacy.adversarial`, `deidlib.studies.friedrich.adversarial` |
# | shared layers (Alawad et al., shared–private CNN with its registry adversary; notebook 07's study), with the same layers trained without the adversary (λ = 0) and the centralized CNN (the non-private reference, its whole encoder attacked) | a fresh registry classifier on the frozen shared features (accuracy on held-out reports; chance 1/3, and the class-label floor: how often a report's class alone names its registry) | `deidlib.collaborative.shared_private`, `deidlib.studies.alawad` |
# | DP-SGD's accountant | empirical ε lower bounds at 95 %: one step with a gradient canary (Clopper–Pearson, Jagielski et al. 2020), and one whole `train_dp` run with many Dirac gradient canaries (one-run audit, Steinke, Nasr & Jagielski 2023) | `deidlib.audits.epsilon`, `.one_run` |
#
# The two representation rows run their own studies' code on their own synthetic corpora (friedrich's
# sentences; alawad's pathology reports of three registries) at notebooks 06-07's scale (cpu profile), one setting
# each (notebook 06 sweeps N and DANN; printed below). Alawad's task is the *subsite classification* of pathology reports, not
# de-identification: its utility is the micro F1 of that classification, and its cost is measured against
# its own centralized CNN.
#
# Set-up and choices: `deidlib.studies.audits`' docstring. The study raises if an audit of a correct
# mechanism ever proves a larger ε than the accountant's (that would be a bug).
#
# Every part but the ε audits runs on several seeds (`seed`, `seed + 1`, …; each its own corpus,
# coins, initialisation and noise): points are means over seeds, bars and brackets the min–max over
# seeds, and the F1 cost is the mean paired (same-seed) difference with its 95 % t interval.
#
# **What the membership attacks attack.** DP-SGD's guarantee covers one *training sentence* of what
# it trains. In the recipe rows that is the head on the frozen public encoder: the encoder and its
# WordPiece vocabulary are public and saw no private text, so the attacked sentences are exactly the
# protected units. A canary inserted k times is k units (group privacy: k·ε).

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper: corpus size, tagger size, epochs, number of reference models
corpus = "synthetic"  # synthetic only: the attacks need the ground truth of membership and many trainings
data_dir = None  # unused (synthetic corpus); kept for the common notebook interface
seed = 0  # data, coins, initialisation and noise seed
device = "cpu"  # the audits run on CPU
out_dir = None  # tables, figures and results JSON are written here (None: runs/<profile>/<name> of the checkout, from any working folder)
epochs = None  # None: the profile's value (cpu 10)
references = None  # None: the profile's number of LiRA reference models per setting (cpu 2)

# %%

import pandas as pd
import torch
from IPython.display import display

from deidlib.plotting import savefig
from deidlib.reporting import (
    claims_for_profile,
    run_folder,
    verdict_counts,
    write_json,
    write_result,
    write_table,
)
from deidlib.studies import audits as au

torch.set_num_threads(1)
if corpus != "synthetic":
    raise ValueError("notebook 09 runs on the synthetic corpus only (it needs membership ground truth)")
out = run_folder(out_dir, profile, "09_privacy_frontier")
params = au.params_for(profile, epochs=epochs, references=references)
print(f"profile={profile} seeds={params.seeds} references={params.references} | recipe {params.dp_recipe} at "
      f"ε={params.dp_recipe_epsilons} and ∞ | from scratch: {params.kind}, {params.epochs} epochs, σ={params.dp_noises}")
fp, ap = au.friedrich_params(params), au.alawad_params(params)
print(f"friedrich §5: three-phase at N={params.representation_n}, ≤{fp.max_train_sentences} train sentences, "
      f"P1/P2/P3 ≤{fp.p1_epochs}/{fp.p2_epochs}/{fp.p3_epochs} epochs, d={fp.d}, frozen adversary K={fp.frozen_epochs} "
      f"epochs on {fp.attack_sentences} train / {fp.attack_heldout} held-out PHI sentences | alawad: "
      f"{ap.n_registries} registries, {ap.patients} patients, {ap.epochs} epochs, attack {ap.attack_epochs} epochs")

# %%
res = au.run_study(params, seed=seed)
print(f"{res.seconds:.1f} s; population {res.population}")

# %% [markdown]
# ## The frontier: utility against attack success
# One panel per attack family, so that no axis mixes metrics: membership (TPR at 1 % FPR, the
# stronger of the loss threshold and offline LiRA, per sentence), canary exposure (bits, the canaries
# inserted most often), word reconstruction from DSSGD uploads (F1 of the recovered words),
# recovery of pseudonymized PHI words (share recovered), note linkage of surrogates (F1 of
# same-patient note pairs), the frozen-representation adversary on real/fake pairs (accuracy; chance 0.5,
# dotted), the registry classifier on alawad's shared features (accuracy; chance dotted, class-label floor
# dash-dotted). One point per method and setting: the mean over seeds, bars the min–max over seeds.
# Utility: binary-token F1 on the test notes; in the registry panel the micro F1 of alawad's subsite
# classification (each panel's utility axis says which).

# %%
fr = res.frontier
seeds_text = f"seeds {res.seeds[0]}–{res.seeds[-1]}" if len(res.seeds) > 1 else f"seed {res.seeds[0]}"
fig = au.plot_frontier(fr, title=f"privacy audits ({profile} profile, synthetic): "
                       f"{res.population['sentences']} sentences of {res.population['patients']} patients, "
                       f"{res.population['test_documents']} test notes (first seed), {params.references} LiRA "
                       "reference models", seed=seeds_text)
savefig(fig, "audits_frontier", out)
write_table(fr, "audits_frontier", out)
fr.round(3)

# %% [markdown]
# ## What each method protects, what the attacks found, and what it cost
# Built from this run's numbers (`deidlib.studies.audits.method_statements`): the unit and threat each
# method protects against, every attack's result (mean [min–max over seeds]), the F1 (mean [min–max])
# and the F1 cost against the method's non-private reference (mean paired difference [95 % t interval],
# n seeds). The DSSGD and surrogate rows are measured against the non-private from-scratch tagger
# trained on half the population (a different training set size: read their cost as indicative).

# %%
statements = res.statements
write_table(statements, "audits_statements", out, index=False, markdown=True)
with pd.option_context("display.max_colwidth", None):
    display(statements)

# %% [markdown]
# ### Every privacy method of the package is on the frontier
# `deidlib.studies.audits.METHODS` lists every privacy method (with its non-private reference and
# controls) and its attack family; the notebook stops if one lacks a row on every seed.

# %%
lacking = au.missing_methods(fr, len(res.seeds), params.dp_recipe)
if lacking:
    raise RuntimeError(f"the frontier lacks {', '.join(lacking)}")
print(f"all {len(au.METHODS)} methods on {len(res.seeds)} seed(s)")

# %% [markdown]
# ## Adversarial representation (friedrich §5) and its controls
# Per seed: the head's binary-token F1 on the raw test sentences and the frozen adversary's accuracy on
# held-out real/fake pairs (chance 0.5) and on its own training pairs. The controls show that the attack
# works where nothing hides the PHI word.

# %%
reps = pd.DataFrame(res.representations)
write_table(reps, "audits_representations", out)
reps.round(3)

# %% [markdown]
# ## Shared layers (alawad) and their controls
# Per seed: micro/macro F1 of the subsite classification and the fresh registry classifier's accuracy on
# the frozen shared features (centralized: its whole encoder), next to chance, the majority-registry rate
# and the class-label floor.

# %%
shared = pd.DataFrame(res.shared_layers)
write_table(shared, "audits_shared_layers", out)
shared.round(3)

# %% [markdown]
# ## Membership inference (per sentence and per patient)

# %%
write_table(res.membership_table, "audits_membership", out)
res.membership_table.round(3)

# %% [markdown]
# ## Canary exposure (Carlini et al. 2019): exposure = log2 |candidates| − log2 rank

# %%
write_table(res.canary_table, "audits_canaries", out)
res.canary_table.groupby(["method", "setting", "copies"], sort=False).exposure.agg(["mean", "min", "max"]).round(2)

# %% [markdown]
# ## DSSGD: the words of a site's batch from its upload

# %%
dssgd = pd.DataFrame(res.dssgd)
write_table(dssgd, "audits_dssgd", out)
dssgd.round(3)

# %% [markdown]
# ## Pseudonymization: recovering the original PHI word

# %%
pseudo = pd.DataFrame(res.pseudonyms)
write_table(pseudo, "audits_pseudonyms", out)
pseudo.round(3)

# %% [markdown]
# ## Surrogates: note linkage and equal-value disclosure

# %%
sur = pd.DataFrame(res.surrogates)
write_table(sur, "audits_surrogates", out)
sur.round(3)

# %% [markdown]
# ## Audited ε lower bounds next to the accountant's ε
# A correct mechanism's lower bound must stay at or below the accountant's ε (the study raises
# otherwise); the deliberately broken ones (noise 10× smaller than claimed) must exceed it.
#
# Two audits. *One DP-SGD step*: many trials of the library's noise step with and without a
# gradient canary, Clopper–Pearson on the error rates (`trials` pairs). *One-run* (Steinke, Nasr &
# Jagielski 2023): a single real `train_dp` run (full batch, σ calibrated by `train_dp` to the
# accountant ε, its clipping, noise and ledger) with `canaries` Dirac gradient canaries, each in
# the training set with probability 1/2; a canary's clipped gradient is C along a parameter
# coordinate of its own, its score is that coordinate after training. The auditor guesses the
# highest tenth IN and the lowest tenth OUT (`guesses`); `correct` of them are right, and Theorem
# 5.2 of the paper turns that count into the ε lower bound at 95 %.

# %%
eps = res.epsilon_audits
write_table(eps, "audits_epsilon", out)
print(f"one-run audits: {params.one_run_canaries} canaries, {params.one_run_steps} steps (full batch), "
      f"accountant {params.accountant}")
eps[["audit", "claimed_noise_multiplier", "actual_noise_multiplier", "accountant", "accountant_epsilon",
     "epsilon_lower_bound", "confidence", "trials", "canaries", "steps", "guesses", "correct", "violated"]].round(3)

# %% [markdown]
# ## Paper vs ours
# No paper states these: they are the package's promises, with the accountant's ε as the reference. A correct mechanism must stay at or below it; the broken one must be caught.
# Each verdict is computed from this run's numbers by `deidlib.reporting.verdict` under the rule in its row
# (the [verdict legend](../docs/verdicts.md) says what each verdict means).
# The table is also written as `audits_claims.csv`.
#
# A contradicted correct-mechanism row would mean the accountant under-reports ε (or the audit is wrong); a contradicted broken-mechanism row would mean the audit is too weak to catch a 10× noise error.

# %%
claims = claims_for_profile(au.paper_vs_ours(eps), profile)
write_table(claims, "audits_claims", out, index=False, markdown=True)
print(verdict_counts(claims))
claims

# %%
write_json(res, out / "results.json")
write_result(
    out,
    "audits",
    "privacy_frontier",
    params=res.params,
    metrics={k: getattr(res, k) for k in ("frontier", "statements", "membership_table", "canary_table", "dssgd",
                                 "surrogates", "pseudonyms", "representations", "shared_layers", "epsilon_audits")},
    seeds=res.seeds,
    data_fingerprint=res.fingerprint,
    privacy_ledger={"dp_sgd": [m["ledger"] for m in res.membership if m["ledger"]],
                    "note": "seeded noise (reproducible study): the ε does not hold against anyone holding the seed"},
)
