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
# # 06 · friedrich: adversarially learned private representations (ACL 2019, §5, §7.3, Figure 5)
#
# A representation R = N_out + BiLSTM(E + N_in) (trainable Gaussian noise, d = 50) feeds the
# BiLSTM-CRF de-identification head (+ casing); two adversaries (T1: embeddings vs
# representation, T2: two representations + cosines) try to tell a sentence from the same
# sentence with one PHI token moved to one of its N − 1 nearest neighbours. Trained with
# Feutry et al.'s three phases or with DANN (gradient reversal). Privacy is measured as in the
# paper: the adversaries keep training on the *frozen* representation for K more epochs and
# their accuracy on held-out pairs is reported (chance 0.5).
#
# Paper's shape (i2b2 2014): F1 ≥ 0.95 for N up to 1,000; the three-phase adversary stays near
# chance up to N ≈ 500 and breaks above; DANN's adversary reaches > 0.8 (K = 20).
# Controls (every seed): the same attack on representations without privacy training (raw
# embeddings, a noise-free BiLSTM trained on de-identification only) — the attack's yardstick:
# a "near chance" result says something only where the controls are attacked at ≥ 0.8.
# The frozen adversary trains K = 50 epochs (the paper) on the real/fake pairs of
# `attack_sentences` PHI sentences of the training split (a fresh fake per sentence and epoch; cpu:
# 1,000 sentences, its own learning rate 0.01) and is scored on pairs of PHI test sentences none of
# which it trained on.
# Library: `deidlib.privacy.adversarial`; study: `deidlib.studies.friedrich.adversarial`.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper: corpus size, model size, N grid, seeds, epochs
corpus = "synthetic"  # synthetic | physionet | i2b2
data_dir = None  # folder of the real corpus; None: $DEIDLIB_DATA_DIR or ../shared/data
seed = 0  # first seed
adv_seeds = None  # None: the profile's number of seeds per point (cpu 3, paper 5)
adv_embeddings = None  # None: the profile's embeddings, e.g. ("glove", "fasttext") (cpu: GloVe only)
device = "cpu"  # torch device (the study runs on CPU)
out_dir = None  # figures, tables and results JSON are written here (None: runs/<profile>/<name> of the checkout, from any working folder)
adv_neighbours = None  # None: the profile's N grid of the invariance requirement (cpu 10, 100, 500, 1000)
frozen_epochs = None  # None: the profile's K, adversary epochs on the frozen representation (cpu and paper 50)
max_train_sentences = None  # None: the profile's cap on training sentences (cpu 800)
max_test_sentences = None  # None: the profile's cap on test sentences (cpu 600)
attack_sentences = None  # None: the profile's PHI training sentences the frozen adversary trains on (cpu 1000)
attack_heldout = None  # None: the profile's PHI test sentences whose held-out pairs score it (cpu 400)
negatives_per_positive = None  # None: all; k keeps every PHI sentence and k PHI-free ones per PHI sentence

# %%

import torch

from deidlib.plotting import savefig
from deidlib.reporting import (
    claims_for_profile,
    run_folder,
    verdict_counts,
    write_json,
    write_result,
    write_table,
)
from deidlib.studies import friedrich

if device != "cpu":
    raise ValueError("the friedrich study runs on CPU here (device='cpu')")
torch.set_num_threads(1)
out = run_folder(out_dir, profile, "06_friedrich_adversarial")
if isinstance(adv_embeddings, str):  # one name, e.g. -p adv_embeddings=fasttext
    adv_embeddings = (adv_embeddings,)
params = friedrich.params_for(profile, adv_seeds=adv_seeds, adv_neighbours=adv_neighbours,
                              adv_embeddings=None if adv_embeddings is None else tuple(adv_embeddings),
                              frozen_epochs=frozen_epochs, max_train_sentences=max_train_sentences,
                              max_test_sentences=max_test_sentences, negatives_per_positive=negatives_per_positive,
                              attack_sentences=attack_sentences, attack_heldout=attack_heldout)
params

# %%
res = friedrich.run_study(params, experiment="adversarial", corpus=corpus, data_dir=data_dir, seed=seed)
print(f"{res['seconds']:.0f} s; sentences {res['sizes']}; {friedrich.adv_scale_note(params, res['sizes'], corpus)}")

# %% [markdown]
# ## Figure 5 analog: F1 (left) and frozen-adversary accuracy (right) vs N

# %%
fig = friedrich.figure5(res)
savefig(fig, "friedrich_figure5", out)
write_table(res["summary"], "friedrich_figure5", out)
res["summary"].round(3)

# %% [markdown]
# ## What limits the attack: the controls' held-out accuracy against the pairs seen
# Measured every K/5 epochs of the frozen adversary on the two controls (one line per seed).

# %%
fig = friedrich.attack_curve_figure(res)
savefig(fig, "friedrich_attack_curve", out)
write_table(res["attack_curve"], "friedrich_attack_curve", out)
res["attack_curve"].groupby(["procedure", "epoch"]).agg(pairs_seen=("pairs_seen", "mean"),
                                                       accuracy=("accuracy", "mean")).round(3)

# %% [markdown]
# ## The paper's statements next to ours; every run
# `control_accuracy` is the weaker control's mean held-out accuracy (same embedding); `reading` reads each
# procedure row against it: near chance means private against this attack only where the controls are
# attacked at ≥ 0.8, otherwise the attack is too weak to judge.

# %%
checks = friedrich.adv_shape_checks(res)
write_table(checks, "friedrich_figure5_shape", out)
write_table(res["runs"], "friedrich_adversarial_runs", out)
checks.round(3)

# %% [markdown]
# ## Paper vs ours
# Figure 5's statements on the frozen adversary's accuracy (chance = 0.5). "Breaks above N = 500" is read as the
# rise from the largest N ≤ 500 to the largest N > 500, so a representation already broken at 500 does not pass it.
# Each verdict is computed from this run's numbers by `deidlib.reporting.verdict` under the rule in its row
# (the [verdict legend](../docs/verdicts.md) says what each verdict means).
# The table is also written as `friedrich_adv_claims.csv`.
#
# The interval of each row is the min–max over seeds. The two yardstick rows come first in reading: a
# three-phase row "near chance" means privacy only if the controls' rows are attacked at ≥ 0.8 —
# otherwise the attack, not the representation, is what stays at chance.

# %%
claims = claims_for_profile(friedrich.adv_paper_vs_ours(checks), profile)
write_table(claims, "friedrich_adv_claims", out, index=False, markdown=True)
print(verdict_counts(claims))
claims

# %%
write_json(res, out / "results.json")
write_result(out, "friedrich_adv", "adversarial_representation", params={**res["params"], "corpus": corpus},
             metrics={k: res[k] for k in ("summary", "runs", "attack_curve")},
             seeds=[seed + k for k in range(params.adv_seeds)], data_fingerprint=res["fingerprint"])
