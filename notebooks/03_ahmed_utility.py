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
# # 03 · ahmed: what de-identified text is still good for (thesis §4.3.2)
#
# | analog of | what | function |
# |---|---|---|
# | Table 4.5 | BLEU-1/2/3 of each de-identified corpus against the original | `bleu_table` |
# | Table 4.6 | LDA topic words matched (5 topics × 30 words), per topic and overall; k also by coherence | `topic_table` |
# | Table 4.9 | diagnosis classification with 3 / 5 / 7 classes on original and de-identified notes | `classification_table` |
# | (in words in §4.3.2) | utility vs PHI recall, one point per span source and transform | `plot_tradeoff` |
#
# Rows: PHI spans from the gold annotation ("ground truth", recall 1), a GRU-CRF tagger and a short-trained
# GRU-CRF "baseline" (both trained on the training split); each removed by deletion, category masks,
# Tchouka surrogates at a few ε and Friedrich neighbour pseudonymization. The de-identified corpus is the
# dev + test split, which no tagger was trained on. All computation is in `deidlib.studies.ahmed_utility`
# (its docstring lists the choices); the metrics are `deidlib.utility`.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper: corpus size, tagger sizes and epochs, LDA passes, classification repeats
corpus = "synthetic"  # synthetic | physionet | i2b2 (classification needs the synthetic diagnosis labels)
data_dir = None  # folder of the real corpus; None: $DEIDLIB_DATA_DIR or ../shared/data
seed = 0  # data split, tagger initialisation, surrogates, pseudonyms, LDA and classification splits
device = "cpu"  # torch device
out_dir = None  # tables, figures and results JSON are written here (None: runs/<profile>/<name> of the checkout, from any working folder)
epochs = None  # None: the profile's epochs of the GRU-CRF (cpu 8)
max_train_sentences = None  # None: the profile's cap on the GRU-CRF's training sentences (cpu 1500)
epsilons = None  # None: the profile's surrogate ε values (cpu (1, 10))
pseudonym_n = None  # None: the profile's neighbour counts N of the pseudonymization rows (cpu (100,))
max_abstracts = None  # None: the profile's (cpu: all 2,888 if found; smoke: 0, i.e. skip)

# %%

from deidlib.plotting import savefig
from deidlib.reporting import (
    claims_for_profile,
    run_folder,
    to_markdown,
    verdict_counts,
    write_json,
    write_result,
    write_table,
)
from deidlib.studies import ahmed_utility as au

out = run_folder(out_dir, profile, "03_ahmed_utility")
params = au.params_for(profile, epochs=epochs, max_train_sentences=max_train_sentences, epsilons=epsilons,
                       pseudonym_n=pseudonym_n, max_abstracts=max_abstracts)
print(f"profile={profile} corpus={corpus} kind={params.kind} epochs={params.epochs}/{params.baseline_epochs} "
      f"sentences={params.max_train_sentences}/{params.baseline_train_sentences} ε={params.epsilons} N={params.pseudonym_n}")

# %%
res = au.run_study(params, corpus=corpus, data_dir=data_dir, seed=seed, device=device)
scale = (f"{corpus}, profile {profile}: {res.n_documents} de-identified notes of {res.n_patients} patients; "
         f"GRU-CRF {params.epochs} epochs × {params.max_train_sentences or 'all'} sentences, "
         f"baseline {params.baseline_epochs} × {params.baseline_train_sentences or 'all'}; seed {seed}")
print(scale)
print(f"{res.seconds:.1f} s")
for n in res.notes:
    print("note:", n)


# %%
def show(df, name):
    write_table(df, name, out, markdown=True)
    print(to_markdown(df.reset_index(), 3))


# %% [markdown]
# ## The taggers (binary-token scores on the de-identified corpus)

# %%
show(res.taggers, "ahmed_utility_taggers")

# %% [markdown]
# ## Table 4.5 analog: BLEU of de-identified against original text
# Thesis (i2b2): Ours 0.923 / 0.912 / 0.786, Baseline 0.900 / 0.887 / 0.759, GT 0.898 / 0.885 / 0.757.

# %%
show(res.bleu, "ahmed_utility_table_4_5")

# %% [markdown]
# ## Table 4.6 analog: LDA topic words matched (%)
# Thesis (i2b2, 5 × 30 words): overall Ours 84, Baseline 84, GT 83.3. The last column is the overall match
# with the number of topics chosen by coherence on the original notes:

# %%
show(res.coherence, "ahmed_utility_coherence")
show(res.topics, "ahmed_utility_table_4_6")

# %% [markdown]
# ## Table 4.9 analog: diagnosis classification accuracy (%)
# Thesis (MIMIC-III, 3 / 5 / 7 ICD9 codes): non-sanitized 91.5 / 84.1 / 80.9, Baseline 91.5 / 85.8 / 83.4,
# Ours 91.8 / 88.1 / 85.8. Here: TF-IDF + logistic regression, patient-grouped splits, mean over
# `class_repeats` splits.

# %%
if len(res.classification):
    show(res.classification, "ahmed_utility_table_4_9")

# %% [markdown]
# ## Utility vs PHI recall

# %%
fig = au.plot_tradeoff(res, title=scale)
savefig(fig, "ahmed_utility_tradeoff", out)

# %% [markdown]
# ## Real text: medical abstracts de-identified by the same taggers
# The abstracts hold almost no PHI: what changes is what the taggers' false positives take away.

# %%
if res.abstracts is not None:
    show(res.abstracts, "ahmed_utility_abstracts")

# %% [markdown]
# ## Paper vs ours
# The thesis' utility findings (Tables 4.5, 4.6, 4.9) as differences between our tagger's output and gold de-identification or the raw notes,
# under the thesis' transform (PHI removed); the classification row claims no loss of accuracy, so a loss is never faithful.
# Each verdict is computed from this run's numbers by `deidlib.reporting.verdict` under the rule in its row
# (the [verdict legend](../docs/verdicts.md) says what each verdict means).
# The table is also written as `ahmed_utility_claims.csv`.
#
# On synthetic notes the tagger misses few PHI, so Ours and GT differ little: a BLEU row that does not reproduce the thesis' gain says the gain came from the thesis tagger's misses, not from better text.

# %%
claims = claims_for_profile(au.paper_vs_ours(res.bleu, res.topics, res.classification), profile)
write_table(claims, "ahmed_utility_claims", out, index=False, markdown=True)
print(verdict_counts(claims))
claims

# %%
write_json(res, out / "results.json")
write_result(
    out,
    "ahmed_utility",
    "section_4_3_2_utility",
    params={**res.params, "corpus": corpus},
    metrics={k: res[k] for k in ("taggers", "bleu", "topics", "coherence", "k_coherence", "classification",
                                 "abstracts")},
    seeds=[seed],
    data_fingerprint=res.fingerprint,
)
