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
# # 00 · Corpus overview
#
# What every study trains and tests on: the embedded **synthetic** i2b2-2014-style corpus
# (generated from a seed, several sites with different writing styles) and, when it is on
# this machine, the **PhysioNet deid** nursing notes (counts only: no real text is shown).
#
# Library calls: `deidlib.datasets.load_corpus`, `deidlib.corpus.physionet.read_physionet`,
# `deidlib.studies.corpus_overview`.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper: size of the synthetic corpus
corpus = "synthetic"  # this notebook always shows the synthetic corpus; PhysioNet is added when present
data_dir = None  # folder of physionet_deid_1.1, or None to look in $DEIDLIB_DATA_DIR and ../shared/data
seed = 0  # seed of the synthetic generator
device = "cpu"  # unused here
out_dir = "../runs/cpu/00_corpus_overview"  # figures and tables are written here

# %%
from pathlib import Path

import matplotlib.pyplot as plt
from IPython.display import HTML, display

from deidlib.datasets import load_corpus
from deidlib.corpus.locate import PHYSIONET_DEID, find_data_dir
from deidlib.plotting import apply_style, savefig
from deidlib.profiles import get_profile
from deidlib.studies import corpus_overview as co

apply_style()
out = Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
prof = get_profile(profile)
print(f"profile={profile}: {prof.patients} synthetic patients over {prof.sites} sites, seed={seed}")

# %% [markdown]
# ## The synthetic corpus

# %%
splits = load_corpus("synthetic", profile=profile, seed=seed)
docs = splits.train + splits.dev + splits.test
table = co.corpus_table(docs, by="site")
table.to_csv(out / "synthetic_sites.csv")
table

# %%
phi = co.phi_table(docs, "category", by="site")
phi.to_csv(out / "synthetic_phi_by_category.csv")
phi

# %%
co.phi_table(docs, "subtype", by="site")

# %%
labels = co.label_distribution(docs, "i2b2")
fig = co.plot_overview(phi, labels, title=f"synthetic, {profile}")
savefig(fig, "corpus_overview", out)
plt.show()

# %% [markdown]
# ### An annotated synthetic note (PHI highlighted, TYPE in subscript)

# %%
example = max(splits.train[:50], key=lambda d: len({s.subtype for s in d.spans}))
print(example.id, example.site, example.metadata.get("note_type"))
display(HTML(co.annotated_html(example, max_chars=2500)))

# %% [markdown]
# ## PhysioNet deid nursing notes (counts only)

# %%
physio_dir = find_data_dir(PHYSIONET_DEID, data_dir)
if physio_dir is None:
    print("PhysioNet deid 1.1 not found: skipped (see data/README.md)")
else:
    from deidlib.corpus.physionet import read_physionet

    notes = read_physionet(physio_dir)
    print(f"{len(notes)} notes, {len({d.patient_id for d in notes})} patients, {sum(len(d.spans) for d in notes)} PHI spans")
    display(co.phi_table(notes, "subtype", by="site"))
