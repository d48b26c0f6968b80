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
# # 07 · alawad: a registry-invariant CNN shared across cancer registries
#
# Alawad et al. 2020, highlight *Adversarial Training for Privacy-Preserving Deep Learning Model
# Distribution*. A multi-window CNN (1-D convolutions over 3, 4 and 5 words, temporal max-pool,
# softmax) classifies pathology reports by subsite, trained four ways:
#
# | approach | what leaves a registry |
# |---|---|
# | single-registry | nothing |
# | centralized | all training reports (the non-private reference) |
# | shared–private | after each visit, to the next registry: the shared encoder and the registry discriminator, with the discriminator's gradient summed over the cycle (nothing else) |
# | shared–private, no adversary | the same, with adversarial weight λ = 0 (control) |
#
# The shared layers move by cyclical weight transfer: they visit the registries in turn, each trains a batch
# of its own reports, then hands them on. The shared encoder reads public word vectors (a frozen table every
# registry holds), so the shared layers work on one input space; each registry's private encoder reads its
# own trainable embedding. The discriminator sums its gradient over a cycle (one batch of every registry)
# before it steps, so its loss covers every registry's label (a single registry holds only one).
#
# The highlight claims: shared–private is significantly better than single-registry, statistically
# indistinguishable from centralized (micro and macro F1), with the largest gains on rarely seen
# classes. Here also: an equivalence test against centralized, a registry-identification attack on the
# frozen shared representation next to the no-adversary control, and the log of every hand-off. Token ids come from a public hash (no registry's vocabulary is built or shipped);
# embedding rows, private encoder and head never leave their registry. All computation lives in
# `deidlib.studies.alawad` and `deidlib.collaborative` (`registries`, `shared_private`,
# `registry_eval`); their docstrings list every choice the highlight leaves open.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper: registries' size, CNN size, epochs, seeds
corpus = "synthetic"  # synthetic (pathology reports, one registry per generator site) | abstracts (medical_abstracts_tc)
data_dir = None  # abstracts: the medical_abstracts_tc folder; None: $DEIDLIB_DATA_DIR or ../shared/data
seed = 0  # first seed
n_seeds = None  # seeds seed, ..., seed+n_seeds-1 (each re-draws the registries); None: the profile's number
device = "cpu"  # unused: the CNNs train on the CPU
out_dir = None  # figures, tables and the results JSON are written here (None: runs/<profile>/<name> of the checkout, from any working folder)
n_registries = None  # None: the profile's number of registries (paper: 2)
patients = None  # synthetic: pathology reports generated before prevalence thinning; None: the profile's
concentration = None  # Dirichlet concentration of the registries' label prevalence; None: the profile's
epochs = None  # passes over the data (every approach; shared-private hands its shared layers on after every batch); None: the profile's
lr = None  # Adam learning rate; None: the profile's value
adv_weight = None  # weight λ of the shared encoder's adversarial term; None: the profile's (1.0)
adversary = None  # "confusion" (encoder aims at a uniform discriminator output) | "reversal" (gradient reversal); None: the profile's
min_support = None  # most/least represented classes among those with this many training reports; None: the profile's
equivalence_margin = None  # TOST margin (F1) of "indistinguishable from centralized"; None: the profile's (0.03)

# %%
# ruff: noqa: E402, B018  (notebook: parameters cell first, tables displayed as cell results)

import matplotlib.pyplot as plt

from deidlib.plotting import savefig
from deidlib.reporting import (
    claims_for_profile,
    run_folder,
    verdict_counts,
    write_json,
    write_result,
    write_table,
)
from deidlib.studies import alawad

out = run_folder(out_dir, profile, "07_alawad_registries")
params = alawad.params_for(profile, n_seeds=n_seeds, n_registries=n_registries, patients=patients,
                           concentration=concentration, epochs=epochs, lr=lr, adv_weight=adv_weight,
                           adversary=adversary, min_support=min_support, equivalence_margin=equivalence_margin)
seeds = [seed + i for i in range(params.n_seeds)]
print(f"profile={profile} corpus={corpus} seeds={seeds}")
params

# %%
results = alawad.run_study(params, corpus=corpus, data_dir=data_dir, seeds=seeds)
print(alawad.scale_note(results))

# %% [markdown]
# ## The registries: size and label prevalence

# %%
reg = alawad.registries_table(results)
write_table(reg, "alawad_registries", out)
reg

# %% [markdown]
# ## Micro / macro F1 of the three approaches (and the no-adversary control)

# %%
f1 = alawad.f1_table(results)
write_table(f1, "alawad_f1", out, index=True)
fig = alawad.figure_f1(results)
savefig(fig, "alawad_f1", out)
plt.show()
f1.round(3)

# %% [markdown]
# ## Significance: Δ = F1(b) − F1(a), paired bootstrap and McNemar
# Seed `all`: the test reports of every seed together (pairs are (seed, report)).

# %%
sig = alawad.significance_table(results)
write_table(sig, "alawad_significance", out)
sig.round(4)

# %% [markdown]
# ## Equivalence with centralized: TOST within ± `equivalence_margin` F1
# "Statistically indistinguishable" as a test: two one-sided tests on the paired bootstrap of
# Δ = F1(shared–private) − F1(centralized); equivalent when p < 0.05 (the 90 % interval lies inside the margin).

# %%
eq = alawad.equivalence_table(results)
write_table(eq, "alawad_equivalence", out)
eq.round(4)

# %% [markdown]
# ## Per-class F1: most and least represented classes (≥ `min_support` training reports)

# %%
pc = alawad.per_class_table(results)
write_table(pc, "alawad_per_class", out)
write_table(alawad.per_class_table(results, roles_only=False), "alawad_per_class_all", out)
fig = alawad.figure_per_class(results)
savefig(fig, "alawad_per_class", out)
plt.show()
pc.round(3)

# %% [markdown]
# ## Where the gains are: mean per-class F1 by class size (thirds of the classes by pooled training count)

# %%
cs = alawad.class_size_table(results)
write_table(cs, "alawad_class_size", out, index=True)
cs.round(3)

# %% [markdown]
# ## Privacy evidence: registry identification from the shared representation
# A fresh classifier trained on the frozen shared features of half the test reports and tested on the
# other half, and the trained (shared) discriminator itself; chance is 1 / registries.

# %%
att = alawad.attack_table(results)
write_table(att, "alawad_attack", out)
fig = alawad.figure_attack(results)
savefig(fig, "alawad_attack", out)
plt.show()
att.round(3)

# %% [markdown]
# How low can the attack go? Registries differ in label mix, so a report's class alone names its registry
# as often as the row *the class label alone* shows (the registry with the most training reports of that
# class); shared features that serve the task carry at least this much registry information, whatever the
# adversary does. An adversary can only remove what lies above that floor.
#
# ### Does the trained discriminator learn at all?
# In the no-adversary control nothing fights the discriminator, so it must beat the majority rate; a
# discriminator stuck at the majority rate there means the adversarial game is broken (flagged below).
# With the adversary on, a discriminator near the majority rate is the goal only if the fresh attacker is
# also near it; a fresh attacker far above it means the encoder fools this discriminator, not every one.

# %%
disc = alawad.discriminator_check(results)
write_table(disc, "alawad_discriminator", out)
control = disc[disc.approach == "shared_private_no_adv"]
if len(control) and bool(control.stuck.iloc[0]):
    print("BUG SIGNAL: the no-adversary discriminator is stuck at the majority rate; it never learned the registry")
for _, r in disc.iterrows():
    print(f"{r.approach}: discriminator {r.discriminator:.3f}, fresh attacker {r.fresh_attacker:.3f}, "
          f"majority {r.majority:.3f}, class-label floor {r.class_label_floor:.3f}"
          f"{'  <- stuck at the majority rate' if r.stuck else ''}")
disc.round(3)

# %% [markdown]
# ### Reading the attack
# Three comparisons decide what the adversary achieved: the fresh attacker on shared–private against the
# same attacker on the no-adversary control (the adversary's effect; the claims table below computes it),
# both against the class-label floor (what no task-useful representation can hide here), and the trained
# discriminator against the fresh attacker (a discriminator near the majority rate while a fresh attacker is
# far above it means the encoder fools the discriminator it trains against, not every classifier). The
# significance table's row `shared_private_no_adv` → `shared_private` gives the adversary's price in F1.

# %% [markdown]
# ## What left each registry (first seed)
# Per registry: how often it handed the shared layers on, which tensors, and how many values;
# `private_tensors` counts handed-on tensors outside the shared layers (computed from the names).

# %%
up = alawad.uploads_table(results)
write_table(up, "alawad_uploads", out)
print(f"private tensors uploaded in all rounds and seeds: {sum(u['private_tensors'] for u in results.uploads)}")
up

# %% [markdown]
# ## Paper vs ours
# The abstract's two findings: shared-private beats single-registry models (significantly) and is statistically
# indistinguishable from the centralized model (here: equivalent within the margin); and the overview's: the
# adversary makes the shared features registry-agnostic (a fresh attacker does worse than on the control's).
# Each verdict is computed from this run's numbers by `deidlib.reporting.verdict` under the rule in its row
# (the [verdict legend](../docs/verdicts.md) says what each verdict means).
# The table is also written as `alawad_claims.csv`.
#
# If the rows against single-registry models hold while the rows against the centralized model contradict, the shared layers carry part, not all, of the pooled data's benefit at this scale.

# %%
claims = claims_for_profile(alawad.paper_vs_ours(f1, sig, "all" if len(seeds) > 1 else str(seeds[0]), eq, att), profile)
write_table(claims, "alawad_claims", out, index=False, markdown=True)
print(verdict_counts(claims))
claims

# %%
pooled = sig[sig.seed.astype(str) == ("all" if len(seeds) > 1 else str(seeds[0]))]
write_result(out, "alawad", "registries", params={**results.params, "corpus": corpus},
             metrics={"f1": f1, "significance": pooled, "equivalence": eq, "per_class": pc, "class_size": cs,
                      "attack": att, "discriminator": disc},
             seeds=seeds, data_fingerprint=results.data[0]["fingerprint"])
write_json(results, out / "alawad_runs.json", indent=None)
print("written to", out)
