"""festag study analysis (Table 3, Figure 6, checks) and the binary token evaluator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from deidlib.studies import festag


def _results():
    runs = []
    for seed in (0, 1):
        runs.append({"experiment": "A", "seed": seed, "records": [
            {"epoch": 1, "site": "global", "f1": 0.5 + seed / 10}, {"epoch": 2, "site": "global", "f1": 0.8 + seed / 10}]})
        runs.append({"experiment": "B", "seed": seed, "records": [
            {"epoch": 1, "site": "global", "f1": 0.5}, {"epoch": 2, "site": "global", "f1": 0.8}]})
        for name, base in (("C_0.1", 0.7), ("C_0.5", 0.4), ("D", 0.6)):
            recs = []
            for e in (1, 2):
                for i in range(3):
                    recs.append({"epoch": e, "site": f"site{i + 1}", "f1": base + 0.01 * i + 0.05 * e + 0.01 * seed})
            runs.append({"experiment": name, "seed": seed, "records": recs})
    return {"experiments": list(festag.EXPERIMENTS), "runs": runs, "seeds": [0, 1], "corpus": "x", "profile": "smoke"}


def test_table3_hand_computed():
    t = festag.table3(_results())
    assert t.loc["A", "mean"] == pytest.approx(0.85) and t.loc["A", "min"] == pytest.approx(0.8)
    assert t.loc["A", "max"] == pytest.approx(0.9) and t.loc["A", "n"] == 2
    # C_0.1 at epoch 2: 0.8 + {0, .01, .02} + {0, .01}
    assert t.loc["C_0.1", "min"] == pytest.approx(0.8) and t.loc["C_0.1", "max"] == pytest.approx(0.83)
    assert t.loc["C_0.1", "mean"] == pytest.approx(0.815) and t.loc["C_0.1", "n"] == 6


def test_shape_checks_and_figure():
    r = _results()
    c = festag.shape_checks(r)
    assert c["A_minus_B"] == pytest.approx(0.05)
    assert c["C01_minus_D"] == pytest.approx(0.1)
    assert c["fluctuation_C01"] == pytest.approx(0.05)  # epochs 1 -> 2: +0.05 for every worker
    fig = festag.figure6(r)
    assert len(fig.axes) == 2
    labels = [line.get_label() for line in fig.axes[1].get_lines()]
    assert any("C_0.5" in lab for lab in labels) and "A" in labels and "B" in labels


def test_params_for_overrides_and_errors():
    p = festag.params_for("smoke", epochs=3, theta_d=0.2, tagger={"dropout": 0.1})
    assert p.epochs == 3 and p.theta_d == 0.2 and p.tagger["dropout"] == 0.1
    assert p.tagger["token_hidden"] == festag.PROFILE_PARAMS["smoke"].tagger["token_hidden"]
    assert festag.params_for("paper").epochs == 200 and festag.params_for("paper").batch_size == 1
    assert festag.params_for("paper").lr == 0.9
    assert festag.params_for("cpu", negatives_per_positive=1).negatives_per_positive == 1
    with pytest.raises(ValueError):
        festag.params_for("nope")
    with pytest.raises(ValueError, match="unknown festag"):
        festag.params_for("smoke", bogus=1)


@dataclass
class _Sent:
    words: list
    tags: list

    @property
    def tokens(self):
        return self.words


class _Feat:
    labels = ["O", "I-DATE", "I-PATIENT"]

    def encode(self, tokens, tags=None):
        from deidlib.models.protocol import Batch

        t = max(len(s) for s in tokens)
        ids = torch.zeros(len(tokens), t, dtype=torch.long)
        mask = torch.zeros(len(tokens), t, dtype=torch.bool)
        for i, s in enumerate(tokens):
            ids[i, : len(s)] = torch.tensor([int(w) for w in s])
            mask[i, : len(s)] = True
        return Batch(word_ids=ids, mask=mask)


class _EchoModel(torch.nn.Module):
    """Predicts the label id written in the token text."""

    featurizer = _Feat()

    def predict(self, batch):
        return [row[m].tolist() for row, m in zip(batch.word_ids, batch.mask)]


def test_binary_token_evaluator_hand_computed():
    test = [
        _Sent(["0", "1", "2"], ["O", "I-DATE", "O"]),  # pred PHI at 1 (TP), 2 (FP)
        _Sent(["0", "0"], ["I-PATIENT", "O"]),  # FN
        _Sent(["2"], ["I-DATE"]),  # TP (wrong class still counts: binary scoring)
    ]
    ev = festag.binary_token_evaluator(test, batch_size=2)
    s = ev(_EchoModel())
    assert s["precision"] == pytest.approx(2 / 3) and s["recall"] == pytest.approx(2 / 3)
    assert s["f1"] == pytest.approx(2 / 3)


def _deps_missing() -> str | None:
    try:
        from deidlib.corpus.splits import partition_by_patient  # noqa: F401
        from deidlib.datasets import load_corpus  # noqa: F401
        from deidlib.models import build_tagger  # noqa: F401
    except ImportError as e:  # the foundation / tagger are written in parallel
        return str(e)
    return None


@pytest.mark.skipif(_deps_missing() is not None, reason=f"dependencies not available: {_deps_missing()}")
def test_run_study_smoke_end_to_end():
    r = festag.run_study(profile="smoke", seeds=[0], experiments=["A", "C_0.1", "D"], progress=False, epochs=1)
    t = festag.table3(r)
    assert set(t.index) == {"A", "C_0.1", "D"}
    assert np.isfinite(t["mean"]).all() and (t["max"] <= 1).all()
    assert t.loc["D", "n"] == 5
