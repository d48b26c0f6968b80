"""festag data: the sites are the documents' own sites, and the binary token evaluator gives
the former numbers through :func:`deidlib.evaluation.binary_counts`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from deidlib.studies import festag
from deidlib.studies.festag.data import site_groups


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


def _former_festag_scores(test, model):
    """festag's own P/R/F1 before it called the scorer (kept here as the reference)."""
    labels = model.featurizer.labels
    gold = np.concatenate([[t != "O" for t in s.tags] for s in test]).astype(bool)
    pred = np.concatenate([[labels[int(w)] != "O" for w in s.words] for s in test]).astype(bool)
    tp, fp, fn = int((pred & gold).sum()), int((pred & ~gold).sum()), int((~pred & gold).sum())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f}, gold, pred


@pytest.mark.parametrize("seed", range(6))
def test_binary_token_evaluator_gives_the_former_numbers_through_the_scorer(seed):
    """Same numbers, bit for bit, as festag's former hand-written P/R/F1, and as sklearn's
    binary scores; includes sets with no predicted or no gold PHI (scores 0)."""
    from sklearn.metrics import precision_recall_fscore_support

    rng = np.random.default_rng(seed)
    phi_rate = (0.0, 0.05, 0.3, 0.5, 0.9, 1.0)[seed]
    test = []
    for _ in range(int(rng.integers(1, 12))):
        n = int(rng.integers(1, 9))
        tags = ["O" if rng.random() >= phi_rate else "I-DATE" for _ in range(n)]
        words = [str(int(rng.integers(0, 3))) if seed else "0" for _ in range(n)]
        test.append(_Sent(words, tags))
    got = festag.binary_token_evaluator(test, batch_size=3)(_EchoModel())
    want, gold, pred = _former_festag_scores(test, _EchoModel())
    assert got == want
    p, r, f, _ = precision_recall_fscore_support(gold, pred, average="binary", zero_division=0)
    assert (got["precision"], got["recall"], got["f1"]) == pytest.approx((p, r, f))


def test_sites_are_the_documents_own_sites_when_they_carry_several():
    from deidlib.synthetic import generate

    docs = list(generate(patients=12, sites=3, seed=0))
    assert len({d.site for d in docs}) > 1
    params = festag.params_for("smoke")
    mode, names, groups = site_groups(docs, params, seed=0)
    assert mode == "documents" and names == sorted({d.site for d in docs})
    assert all({d.site for d in g} == {n} for n, g in zip(names, groups))
    assert sum(map(len, groups)) == len(docs)
    # the random patient partition stays available, and is what one-site corpora get
    mode, names, groups = site_groups(docs, festag.params_for("smoke", site_split="random"), seed=0)
    assert mode == "random" and len(groups) == params.n_sites
    assert any(len({d.site for d in g}) > 1 for g in groups)
    for d in docs:
        d.site = "only"
    mode, _, groups = site_groups(docs, params, seed=0)
    assert mode == "random" and len(groups) == params.n_sites
    with pytest.raises(ValueError, match="site_split"):
        festag.params_for("smoke", site_split="hospital")
