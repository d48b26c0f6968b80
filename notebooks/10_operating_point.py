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
# # 10 · A recall-oriented operating point
#
# Recall decides whether PHI leaks. A tagger's own decision (Viterbi for the CRF) is tuned for
# F1; here one GRU-CRF is trained, its binary-token **precision–recall curve** is traced over
# thresholds on the PHI marginal `1 − P(O)` (exact CRF posteriors), a threshold is chosen on
# the **dev** split for a target recall (as `deidlib train --target-recall R` does) and the
# **test** split is scored at that threshold and at the model's own decision.
#
# Target, on the PhysioNet nursing notes' 486 test notes: recall ≥ 0.92 at precision
# ≥ 0.85. On the synthetic corpus both decisions are near 1 and the curve says little; run
# with `--corpus physionet` (results stay in `runs/`): the figure then also draws the package's
# default model (trained on synthetic notes only, its threshold chosen on synthetic dev; its
# curve over the same thresholds and its saved decision) and the points of the peer
# de-identifiers Philter and Presidio, computed on the same test notes when `deidlib[peers]` is
# installed (`deidlib.evaluation.peers`).
#
# Library calls: `deidlib.studies.operating_point`, `deidlib.models.decoding`,
# `deidlib.training.operating_points`.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper: corpus size, epochs and model size
corpus = "synthetic"  # synthetic | physionet | i2b2
data_dir = None  # folder of the real corpus, or None for $DEIDLIB_DATA_DIR / ../shared/data
seed = 0  # data split and initialisation
device = "cpu"  # torch device
out_dir = None  # figures and tables are written here (None: runs/<profile>/<name> of the checkout, from any working folder)
epochs = None  # training epochs (None: the profile's value)
target_recall = None  # recall the dev-chosen threshold must reach (None: 0.92)

# %%
# ruff: noqa: E402, B018
from pathlib import Path

import pandas as pd

from deidlib.plotting import savefig
from deidlib.reporting import claims_for_profile, run_folder, verdict_counts, write_result, write_table
from deidlib.studies import operating_point as op

out = run_folder(out_dir, profile, "10_operating_point")
params = op.params_for(profile, epochs=epochs, target_recall=target_recall)
print(f"profile={profile} corpus={corpus} model={params.model} epochs={params.epochs} "
      f"target recall={params.target_recall}")

# %%
res = op.run_study(params, corpus=corpus, data_dir=data_dir, seed=seed, device=device)
print(f"{res.epochs_run} epochs, best dev F1 {res.best_dev_f1:.4f}, {res.seconds:.0f} s")

# %% [markdown]
# ## The precision–recall curve (test split)

# %%
fig = op.plot_curve(res)
savefig(fig, "operating_point_pr_curve", out)
curve = pd.DataFrame(res.test_curve).rename(columns=lambda c: c if c == "threshold" else f"test_{c}")
curve = curve.join(pd.DataFrame(res.dev_curve).drop(columns="threshold").add_prefix("dev_"))
write_table(curve, "operating_point_curve", out)
curve.round(4)

# %% [markdown]
# ## The default model and the peers (nursing notes only)
# Binary-token points on the same test notes: the default model at its saved decision and over the
# thresholds, and each installed peer, with the gold mentions left verbatim (`surviving_mentions`).
# Empty on synthetic notes.

# %%
others = pd.DataFrame([{"system": "default model", **p} for p in res.default_model] +
                      [{**p} for p in res.peers])
if len(others):
    write_table(others, "operating_point_default_and_peers", out)
others.round(4)

# %% [markdown]
# ## The model's own decision against the dev-chosen threshold

# %%
summary = pd.DataFrame(op.summary_rows(res))
write_table(summary, "operating_point_summary", out)
write_result(out, "operating_point", f"{corpus}-{profile}", params=res.params,
             metrics={k: res[k] for k in ("dev_curve", "test_curve", "chosen_threshold", "best_dev_f1",
                                          "default_model", "peers")},
             seeds=[seed])
summary.round(4)

# %% [markdown]
# ## Claims vs ours
# No paper states these: they are the package's promises for the operating point, with the target as the
# reference. Each verdict is computed from this run's numbers by `deidlib.reporting.verdict` under the rule
# in its row (faithful: holds; partial: holds within the tolerance; contradicts: fails; not measured: no
# threshold was chosen, or every threshold of the test curve reaches the target, so neither row could fail). The table is also written as `operating_point_claims.csv`.
#
# A contradicted recall row means the dev split chose a threshold that does not transfer to test (too few dev
# notes at this profile).

# %%
test_recalls = [p["recall"] for p in res.test_curve if p["threshold"] is not None]
claims = claims_for_profile(op.paper_vs_ours(summary, params.target_recall, test_recalls), profile)
write_table(claims, "operating_point_claims", out, index=False, markdown=True)
print(verdict_counts(claims))
claims
