"""The posterior-averaging ensemble (a recall-oriented operating point): the mean of the
members' marginals, its threshold decision, ``deidlib ensemble`` and ``deidlib predict`` on it."""

import json

import pytest
import torch

from deidlib.cli import main
from deidlib.corpus.i2b2 import read_i2b2_dir, write_i2b2_dir
from deidlib.corpus.labels import tagged_sentences
from deidlib.datasets import load_corpus
from deidlib.models.decoding import threshold_tags
from deidlib.models.marginal_ensemble import MarginalEnsemble
from deidlib.training import load_tagger, operating_points, predict_documents, prepare_tagger

from .conftest import TINY


def _tagger(splits, seed):
    _, t = prepare_tagger("gru", splits.train, scheme="binary", encoding="BIOES", embeddings=None, seed=seed, **TINY)
    return t.eval()


def _words(splits, n=6):
    return [s.words for s in tagged_sentences(splits.test, "binary", "BIOES", "default")[:n]]


def test_marginals_are_the_members_mean_and_one_member_is_itself(splits):
    a, b = _tagger(splits, 1), _tagger(splits, 2)
    words = _words(splits)
    ma = a.marginals(a.featurizer.encode(words))
    mb = b.marginals(b.featurizer.encode(words))
    assert not torch.allclose(ma, mb)  # different initialisations, different posteriors
    ens = MarginalEnsemble([a, b])
    m = ens.marginals(ens.featurizer.encode(words))
    torch.testing.assert_close(m, (ma + mb) / 2)
    torch.testing.assert_close(m.sum(-1)[ens.featurizer.encode(words).mask], torch.ones(int(sum(map(len, words)))))
    one = MarginalEnsemble([a])
    torch.testing.assert_close(one.marginals(one.featurizer.encode(words)), ma)
    # its decision is the threshold rule on the mean marginal, 0.5 by default
    batch = ens.featurizer.encode(words)
    got = ens.predict(batch, 0.2, "BIOES")
    want = [threshold_tags(m[i, :len(w)], ens.featurizer.labels, 0.2, "BIOES") for i, w in enumerate(words)]
    assert got == want
    enc = ens.task["encoding"]
    assert ens.predict(batch) == [threshold_tags(m[i, :len(w)], ens.featurizer.labels, 0.5, enc)
                                  for i, w in enumerate(words)]


def test_members_with_permuted_labels_are_aligned_and_other_label_sets_refused(splits):
    a, b = _tagger(splits, 1), _tagger(splits, 2)
    words = _words(splits)
    ref = MarginalEnsemble([a, b])
    want = ref.marginals(ref.featurizer.encode(words))
    perm = list(reversed(range(len(b.featurizer.labels))))
    b.featurizer.labels = [b.featurizer.labels[i] for i in perm]
    inner = b.marginals

    def permuted(batch):  # b's outputs follow its (now reversed) label list
        return inner(batch)[..., perm]

    b.marginals = permuted
    ens = MarginalEnsemble([a, b])
    torch.testing.assert_close(ens.marginals(ens.featurizer.encode(words)), want)
    c = _tagger(splits, 3)
    c.featurizer.labels = [*c.featurizer.labels[:-1], "S-OTHER"]
    with pytest.raises(ValueError, match="label set"):
        MarginalEnsemble([a, c])
    d = _tagger(splits, 4)
    d.task = {**d.task, "encoding": "BIO"}
    with pytest.raises(ValueError, match="encoding"):
        MarginalEnsemble([a, d])


def test_operating_points_of_an_ensemble_trade_precision_for_recall(splits):
    ens = MarginalEnsemble([_tagger(splits, 1), _tagger(splits, 2)])
    pts = operating_points(ens, splits.test, (0.5, 0.999, 0.9, 0.5, 0.05, 0.001))[1:]
    assert pts[0]["threshold"] == 0.5
    own = operating_points(ens, splits.test, ())[0]
    assert own["threshold"] is None and own["recall"] == pts[0]["recall"]  # its own decision is 0.5
    recalls = [p["recall"] for p in pts[1:]]
    assert recalls == sorted(recalls) and recalls[-1] > recalls[0]


TRAIN = ["--embeddings", "none", "--epochs", "1", "--batch-size", "8", "--scheme", "binary", "--lr", "0.03",
         "--split-seed", "1", "--set", "word_dim=12", "--set", "hidden=8", "--set", "char_hidden=6",
         "--set", "char_emb_dim=6", "--set", "ff_dim=8"]


def test_ensemble_command_chooses_the_threshold_on_dev_and_predict_uses_it(tmp_path, capsys):
    for s in (1, 2):
        assert main(["train", str(tmp_path / f"m{s}"), "--seed", str(s), *TRAIN]) == 0
    s1 = json.loads((tmp_path / "m1" / "scores.json").read_text())
    s2 = json.loads((tmp_path / "m2" / "scores.json").read_text())
    assert s1["split_seed"] == s2["split_seed"] == 1 and s1["seed"] != s2["seed"]
    capsys.readouterr()
    out = tmp_path / "ens"
    assert main(["ensemble", str(out), str(tmp_path / "m1"), str(tmp_path / "m2"), "--split-seed", "1",
                 "--target-recall", "0.9"]) == 0
    assert "operating point: mean P(PHI)" in capsys.readouterr().out
    scores = json.loads((out / "scores.json").read_text())
    th = scores["phi_threshold"]
    chosen = next(p for p in scores["dev_operating_points"] if p["threshold"] == th)
    assert chosen["recall"] >= 0.9
    assert all(p["recall"] < 0.9 for p in scores["dev_operating_points"] if p["threshold"] and p["threshold"] > th)
    assert len(scores["members_test"]) == 2
    test_curve = {p["threshold"]: p for p in scores["test_operating_points"]}
    assert test_curve[th]["recall"] == scores["test_recall"] and test_curve[th]["f1"] == scores["test_f1"]
    recalls = [test_curve[t]["recall"] for t in sorted(test_curve)]  # a lower threshold never loses recall
    assert recalls == sorted(recalls, reverse=True)
    cfg = json.loads((out / "ensemble.json").read_text())
    assert cfg["phi_threshold"] == th and cfg["members"] == ["../m1/model", "../m2/model"]

    # predict with the saved ensemble = the ensemble's decision at its saved threshold
    test = load_corpus("synthetic", profile="smoke", seed=1).test
    gold = tmp_path / "gold"
    write_i2b2_dir(test, gold)
    assert main(["predict", str(out), str(gold), str(tmp_path / "pred")]) == 0
    got = {d.id: [(s.start, s.end) for s in d.spans] for d in read_i2b2_dir(tmp_path / "pred")}
    ens = load_tagger(out)
    assert isinstance(ens, MarginalEnsemble) and ens.task["phi_threshold"] == th
    want = {d.id: [(s.start, s.end) for s in d.spans]
            for d in predict_documents(ens, [d.with_spans([]) for d in test])}
    assert got == want
    from deidlib.evaluation import binary_token_prf

    assert binary_token_prf(test, read_i2b2_dir(tmp_path / "pred"))[1] == pytest.approx(scores["test_recall"])


def test_ensemble_refuses_members_trained_on_another_split(tmp_path, capsys):
    assert main(["train", str(tmp_path / "m1"), "--seed", "1", *TRAIN]) == 0
    capsys.readouterr()
    rc = main(["ensemble", str(tmp_path / "e"), str(tmp_path / "m1"), "--split-seed", "2"])
    assert rc == 1 and "split seed 1" in capsys.readouterr().err
    rc = main(["ensemble", str(tmp_path / "e"), str(tmp_path / "nothing")])
    assert rc == 1 and "no config.json" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()
