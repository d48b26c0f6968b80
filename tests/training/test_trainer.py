"""The training engine: determinism, early stopping, resume, clipping, save/load,
prediction to exact spans and XML."""

import math

import pytest
import torch

from deidlib.corpus.i2b2 import read_i2b2_dir
from deidlib.evaluation import binary_token_prf
from deidlib.training import (
    evaluate_tagger,
    load_tagger,
    predict_documents,
    prepare_tagger,
    save_tagger,
    train,
    write_predictions,
)
from deidlib.training.batching import bucket_batches, epoch_order
from deidlib.training.loop import step
from deidlib.training.trainer import TrainingInterrupted

from .conftest import TINY


def _prep(splits, kind="gru", seed=0, **hp):
    return prepare_tagger(kind, splits.train, encoding="BIOES", embeddings=None, seed=seed, **{**TINY, **hp})


def _state(m):
    return {k: v.clone() for k, v in m.state_dict().items()}


def test_bucket_batches_cover_every_sentence_once_and_group_lengths():
    lengths = [5, 1, 9, 3, 3, 7, 2, 8, 4, 6]
    groups = bucket_batches(lengths, 3, seed=1)
    assert sorted(i for g in groups for i in g) == list(range(10))
    assert max(len(g) for g in groups) == 3
    # bucketed: each batch holds neighbouring lengths in sorted order
    flat = [lengths[i] for g in groups for i in g]
    assert flat == sorted(lengths)
    plain = bucket_batches(lengths, 3, seed=1, bucketed=False)
    assert sorted(i for g in plain for i in g) == list(range(10))
    with pytest.raises(ValueError):
        bucket_batches(lengths, 0)


def test_epoch_order_depends_only_on_seed_and_epoch():
    assert epoch_order(20, 7, 3) == epoch_order(20, 7, 3)
    assert epoch_order(20, 7, 3) != epoch_order(20, 7, 4)
    assert sorted(epoch_order(20, 7, 3)) == list(range(20))


def test_training_learns_and_is_deterministic_for_a_seed(splits):
    runs = []
    for _ in range(2):
        sents, tagger = _prep(splits, seed=5)
        hist = train(tagger, sents, splits.dev, epochs=3, batch_size=8, seed=5, progress=False)
        runs.append((hist.column("train_loss"), hist.column("dev_f1"), _state(tagger)))
    (l1, f1, s1), (l2, f2, s2) = runs
    assert l1 == l2 and f1 == f2
    assert all(torch.equal(s1[k], s2[k]) for k in s1)
    assert l1[-1] < l1[0]  # it learns
    # a different seed gives a different run
    sents, tagger = _prep(splits, seed=6)
    hist = train(tagger, sents, splits.dev, epochs=1, batch_size=8, seed=6, progress=False)
    assert hist.column("train_loss")[0] != l1[0]


def test_training_leaves_global_rng_untouched(splits):
    sents, tagger = _prep(splits)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    train(tagger, sents, None, epochs=1, batch_size=8, progress=False)
    assert torch.equal(torch.rand(3), expected)


def test_history_records_scores_and_timings(splits):
    sents, tagger = _prep(splits)
    hist = train(tagger, sents, splits.dev, splits.test, epochs=2, batch_size=8, progress=False)
    assert [e["epoch"] for e in hist.epochs] == [1, 2]
    for e in hist.epochs:
        for key in (
            "train_loss",
            "train_seconds",
            "dev_f1",
            "dev_precision",
            "test_recall",
            "test_predict_seconds",
        ):
            assert key in e
        assert 0.0 <= e["dev_f1"] <= 1.0
    # the recorded dev score is the scorer's binary-token F1 of the final model
    p, r, f = evaluate_tagger(tagger, splits.dev)
    assert math.isclose(hist.epochs[-1]["dev_f1"], f)
    assert hist.best_dev_f1 == max(hist.column("dev_f1"))


def test_early_stopping_restores_best_weights(splits):
    sents, tagger = _prep(splits)
    seen = {}

    # make every epoch after the first "worse" on dev by perturbing the reported score
    def remember(epoch, rec, model):
        seen[epoch] = _state(model)

    import deidlib.training.trainer as trainer_mod

    real = trainer_mod.evaluate_tagger
    scores = iter([0.5, 0.4, 0.3, 0.2, 0.1, 0.0])
    trainer_mod.evaluate_tagger = lambda *a, **k: (0.0, 0.0, next(scores))
    try:
        hist = train(
            tagger,
            sents,
            splits.dev,
            epochs=6,
            batch_size=8,
            patience=2,
            progress=False,
            callbacks=[remember],
        )
    finally:
        trainer_mod.evaluate_tagger = real
    assert hist.stopped_early and len(hist.epochs) == 3
    assert hist.best_epoch == 1 and hist.best_dev_f1 == 0.5
    assert all(torch.equal(tagger.state_dict()[k], seen[1][k]) for k in seen[1])


def test_resume_after_interruption_equals_uninterrupted_run(splits, tmp_path):
    sents, ref = _prep(splits, seed=2)
    h_ref = train(ref, sents, splits.dev, epochs=4, batch_size=8, seed=2, progress=False)

    def interrupt(epoch, rec, model):
        if epoch == 2:
            raise TrainingInterrupted("simulated crash")

    sents, tagger = _prep(splits, seed=2)
    with pytest.raises(TrainingInterrupted):
        train(
            tagger,
            sents,
            splits.dev,
            epochs=4,
            batch_size=8,
            seed=2,
            progress=False,
            checkpoint_dir=tmp_path,
            callbacks=[interrupt],
        )
    assert (tmp_path / "last.pt").is_file()
    sents, fresh = _prep(splits, seed=99)  # different init: everything must come from the checkpoint
    h = train(
        fresh,
        sents,
        splits.dev,
        epochs=4,
        batch_size=8,
        seed=2,
        progress=False,
        checkpoint_dir=tmp_path,
        resume=True,
    )
    assert h.column("train_loss") == h_ref.column("train_loss")
    assert h.column("dev_f1") == h_ref.column("dev_f1")
    assert all(torch.equal(fresh.state_dict()[k], ref.state_dict()[k]) for k in ref.state_dict())


def test_step_clips_the_global_gradient_norm(splits):
    sents, tagger = _prep(splits)
    batch = tagger.featurizer.encode([s.words for s in sents[:8]], [s.tags for s in sents[:8]])
    opt = torch.optim.SGD(tagger.parameters(), lr=0.0)  # lr 0: only look at gradients
    step(tagger, batch, opt, clip=None)
    raw = torch.linalg.vector_norm(
        torch.stack([p.grad.norm() for p in tagger.parameters() if p.grad is not None])
    )
    assert raw > 0.01
    step(tagger, batch, opt, clip=0.01)
    clipped = torch.linalg.vector_norm(
        torch.stack([p.grad.norm() for p in tagger.parameters() if p.grad is not None])
    )
    assert clipped == pytest.approx(0.01, rel=1e-4)


def test_unknown_optimizer_and_empty_data_are_clear_errors(splits):
    sents, tagger = _prep(splits)
    with pytest.raises(ValueError, match="unknown optimizer"):
        train(tagger, sents, epochs=1, optimizer="lbfgs", progress=False)
    with pytest.raises(ValueError, match="no training sentences"):
        train(tagger, [], epochs=1, progress=False)


def test_a_clip_that_is_not_a_number_and_an_untagged_sentence_are_clear_errors(splits):
    from dataclasses import replace

    sents, tagger = _prep(splits)
    with pytest.raises(ValueError, match="clip must be a number, None or 'default'"):
        train(tagger, sents[:8], epochs=1, clip="none", progress=False)
    with pytest.raises(ValueError, match="has no gold tags"):
        train(tagger, [replace(sents[0], tags=None), *sents[1:8]], epochs=1, progress=False)



def test_lr_decay_follows_ma_hovy_schedule_and_rejects_negative(splits):
    sents, tagger = _prep(splits)
    hist = train(tagger, sents[:40], epochs=3, optimizer="sgd", lr=0.3, lr_decay=0.5, progress=False)
    assert hist.column("lr") == pytest.approx([0.3, 0.3 / 1.5, 0.3 / 2.0])
    assert train(tagger, sents[:40], epochs=2, lr=0.3, progress=False).column("lr") == [0.3, 0.3]
    with pytest.raises(ValueError, match="lr_decay"):
        train(tagger, sents[:40], epochs=1, lr_decay=-1, progress=False)


def test_ill_formed_gold_tags_are_a_clear_error_for_the_constrained_crf(splits):
    from dataclasses import replace

    sents, tagger = _prep(splits)
    assert tagger.crf is not None and tagger.crf.constrained
    i = next(k for k, s in enumerate(sents) if any(t.startswith("B-") for t in s.tags))
    bad_tags = ["I-" + t[2:] if t.startswith("B-") else t for t in sents[i].tags]  # BIOES path starting a span with I-
    broken = sents[:i] + [replace(sents[i], tags=bad_tags)] + sents[i + 1:]
    with pytest.raises(ValueError, match="ill-formed tags"):
        train(tagger, broken, epochs=1, progress=False)
    from deidlib.privacy.dpsgd import train_dp

    with pytest.raises(ValueError, match="ill-formed tags"):  # DP-SGD checks too, before the first lot
        train_dp(tagger, broken, epochs=0.1, batch_size=4, noise_multiplier=1.0, progress=False)
    _, free = _prep(splits, constrain_crf=False)
    assert not free.crf.constrained
    train(free, broken[max(0, i - 20) : i + 20], epochs=1, progress=False)  # the unconstrained CRF accepts them


def test_save_load_round_trip_predicts_identically(splits, fitted, tmp_path):
    tagger = fitted
    save_tagger(tagger, tmp_path / "model")
    loaded = load_tagger(tmp_path / "model")
    assert loaded.task == {"scheme": "binary", "encoding": "BIOES", "mode": "default"}
    a = predict_documents(tagger, splits.test)
    b = predict_documents(loaded, splits.test)
    assert [d.spans for d in a] == [d.spans for d in b]
    with pytest.raises(FileNotFoundError, match="not a saved deidlib tagger"):
        load_tagger(tmp_path)


def test_predictions_are_exact_spans_and_round_trip_through_xml(splits, fitted, tmp_path):
    tagger = fitted
    preds = predict_documents(tagger, splits.test)
    assert [d.id for d in preds] == [d.id for d in splits.test]
    n = 0
    for gold, d in zip(splits.test, preds):
        assert d.text == gold.text
        for s in d.spans:
            assert d.text[s.start : s.end] == s.text and s.text.strip() == s.text
            n += 1
    assert n > 0
    write_predictions(tagger, splits.test, tmp_path)
    back = {d.id: d for d in read_i2b2_dir(tmp_path)}
    assert {k: v.spans for k, v in back.items()} == {d.id: d.spans for d in preds}
    assert binary_token_prf(splits.test, list(back.values())) == evaluate_tagger(tagger, splits.test)


def test_word2vec_embeddings_come_from_training_tokens_only(splits):
    sents, tagger = prepare_tagger(
        "gru", splits.train, embeddings="word2vec", embedding_epochs=1, seed=0, **TINY
    )
    vocab = set(tagger.featurizer.words)
    train_words = {tagger.featurizer.word_key(w) for s in sents for w in s.words}
    test_only = {tagger.featurizer.word_key(t) for d in splits.test for t in d.text.split()} - train_words
    assert not (vocab - train_words - {w for w in vocab if w.startswith("<")})
    assert test_only, "the test split should contain words unseen in training"
    assert not (test_only & vocab)


def test_refine_threshold_finds_the_last_true_of_a_monotone_predicate():
    """Binary search against brute force: every cut point of a monotone predicate, including
    none true and all true, with the number of calls bounded by ceil(log2(n + 1))."""
    from deidlib.training.predict import _refine_threshold

    for n in range(0, 40):
        for cut in range(-1, n):  # candidates[0..cut] reach the target
            got = _refine_threshold(list(range(n)), lambda c, cut=cut: c <= cut)
            if cut < 0:
                assert got is None
            else:
                assert got[0] == cut and got[1] <= math.ceil(math.log2(n + 1))


def test_choose_threshold_refines_the_grid_to_the_highest_dev_value_reaching_the_target(splits, fitted):
    """The refined threshold = brute force over every dev token's PHI probability inside the
    grid's bracket: it reaches the target on dev, the next dev value above it does not, it never
    lies below the grid's answer, and its row sits in the dev curve in threshold order."""
    from deidlib.models.decoding import phi_probability
    from deidlib.training import choose_threshold, operating_points
    from deidlib.training.predict import _sentence_marginals, _threshold_point

    grid = (0.9, 0.5, 0.1, 0.01)
    coarse = operating_points(fitted, splits.dev, grid)
    rec = [p["recall"] for p in coarse[1:]]
    k = next(i for i in range(len(rec) - 1) if rec[i + 1] > rec[i])  # a bracket where recall rises
    target = (rec[k] + rec[k + 1]) / 2
    th_grid, curve_grid = choose_threshold(fitted, splits.dev, target, grid=grid, refine=False)
    assert th_grid == grid[k + 1] and curve_grid == coarse
    th, curve = choose_threshold(fitted, splits.dev, target, grid=grid)
    assert grid[k + 1] <= th < grid[k]
    decoded = _sentence_marginals(fitted, splits.dev, 64, "cpu", None)
    phi = torch.cat([phi_probability(m, fitted.featurizer.labels) for m in decoded[3]])
    values = sorted({v for v in phi.tolist() if grid[k + 1] < v < grid[k]})
    points = {v: _threshold_point(fitted, splits.dev, decoded, v) for v in values}
    reach = [v for v in values if points[v]["recall"] >= target]
    best = max(reach) if reach else grid[k + 1]
    chosen = next(p for p in curve if p["threshold"] == th)
    assert chosen["recall"] >= target
    assert chosen["recall"] == (points[best]["recall"] if reach else coarse[k + 2]["recall"])
    assert chosen["precision"] == (points[best]["precision"] if reach else coarse[k + 2]["precision"])
    above = [v for v in values if v > best]
    assert not above or points[above[0]]["recall"] < target
    ths = [p["threshold"] for p in curve[1:]]
    assert ths == sorted(ths, reverse=True) and set(grid) <= set(ths) and len(ths) == len(grid) + (th not in grid)
    # the grid's top reaching the target: kept, never refined above the grid
    low = min(rec[0], 0.5)
    assert choose_threshold(fitted, splits.dev, low, grid=grid)[0] == grid[0]


def test_the_default_model_curve_scores_its_saved_decision_in_the_same_pass_as_its_curve(splits, fitted, monkeypatch):
    """Row 0 of the default model's curve (notebook 10) is what the model decides with its saved
    threshold (predict_documents), or with none its own decision; the other rows are the curve."""
    import deidlib.pipeline.default_model as dm
    import deidlib.training as training
    from deidlib.studies.operating_point.run import _default_model_curve
    from deidlib.training import operating_points

    monkeypatch.setattr(dm, "ensure_default_model", lambda progress=False: "unused")
    monkeypatch.setattr(training, "load_tagger", lambda path: fitted)
    grid = (0.5, 0.05)
    try:
        for saved in (0.2, None):
            fitted.task = {**fitted.task, "phi_threshold": saved}
            rows = _default_model_curve(splits.dev, grid)
            own = binary_token_prf(splits.dev, predict_documents(fitted, splits.dev))
            assert rows[0]["own"] and rows[0]["threshold"] == saved
            assert (rows[0]["precision"], rows[0]["recall"], rows[0]["f1"]) == pytest.approx(own)
            assert rows[1:] == operating_points(fitted, splits.dev, grid)[1:]
    finally:
        fitted.task.pop("phi_threshold")


def test_phi_threshold_trades_precision_for_recall_and_travels_with_the_model(splits, fitted, tmp_path):
    """The recall-oriented operating point: lower PHI-marginal thresholds never lower recall;
    the smallest marks (almost) every token; the threshold saved in the task is used by
    predict_documents after save/load; threshold_for_recall picks the best such point."""
    from deidlib.training import operating_points
    from deidlib.training.predict import threshold_for_recall

    pts = operating_points(fitted, splits.dev, [0.9, 0.5, 0.2, 0.05, 1e-6])
    assert pts[0]["threshold"] is None
    rec = [p["recall"] for p in pts[1:]]
    assert rec == sorted(rec) and rec[-1] > rec[0]
    assert rec[-1] == pytest.approx(1.0)  # p(PHI) > 1e-6 almost everywhere: every gold token marked
    assert pts[-1]["precision"] < pts[1]["precision"]
    th = threshold_for_recall(pts, pts[3]["recall"])
    assert th is not None and th >= 0.2
    assert threshold_for_recall(pts, 1.01) is None
    fitted.task = {**fitted.task, "phi_threshold": 0.05}
    try:
        save_tagger(fitted, tmp_path / "m")
        loaded = load_tagger(tmp_path / "m")
        assert loaded.task["phi_threshold"] == 0.05
        assert binary_token_prf(splits.dev, predict_documents(loaded, splits.dev)) == pytest.approx(
            (pts[4]["precision"], pts[4]["recall"], pts[4]["f1"]))
    finally:
        fitted.task.pop("phi_threshold")


def test_progress_bar_shows_loss_and_dev_f1_and_keeps_test_scores_in_the_history(splits, capsys):
    sents, tagger = _prep(splits)
    hist = train(tagger, sents[:40], splits.dev[:3], splits.test[:3], epochs=1, batch_size=8, progress=True)
    bar = capsys.readouterr().err
    assert "train_loss=" in bar and "dev_f1=" in bar
    assert "test_f1" not in bar  # the test split is out of sight while training
    assert "test_f1" in hist.epochs[0]
