"""What a DP-SGD run releases by default: noise not derivable
from the seed, nothing un-noised in the history, subsampling that keeps the add/remove
guarantee, and privacy units that never merge two people."""

import math

import pytest
import torch

from deidlib.corpus.document import Document
from deidlib.corpus.labels import TaggedSentence
from deidlib.corpus.tokenize import Token
from deidlib.privacy.dpsgd import patient_units, train_dp
from deidlib.studies.ahmed_dp.data import _sentences, _thin_and_subsample


def _weights(tagger):
    return [p.detach().clone() for p in tagger.parameters() if p.requires_grad]


def test_train_dp_default_noise_does_not_come_from_the_seed(make_tagger):
    # by default the same seed must not give the same noise (seeded noise is known to whoever holds the seed)
    runs, ledgers = [], []
    for _ in range(2):
        sents, tg = make_tagger("gru")
        _, led = train_dp(tg, sents[:60], epochs=0.2, batch_size=6, noise_multiplier=1.0, accountant="rdp",
                          lr=0.5, progress=False, seed=3)
        runs.append(_weights(tg))
        ledgers.append(led)
    assert all(led.secure_rng and "rng_note" not in led.to_dict() for led in ledgers)
    assert all(not torch.equal(a, b) for a, b in zip(*runs))  # every parameter got different noise


def test_train_dp_history_holds_no_unnoised_statistic_of_the_training_lots(make_tagger, dp_splits):
    # train_loss (and step timings) would be un-noised statistics of the private lots
    sents, tg = make_tagger("gru")
    hist, led = train_dp(tg, sents[:60], dp_splits.dev[:1], epochs=0.3, batch_size=6, noise_multiplier=1.0,
                         accountant="rdp", progress=False)
    allowed = {"epoch", "step", "epsilon"} | {f"{p}_{m}" for p in ("dev", "test")
                                               for m in ("precision", "recall", "f1")}
    assert hist.epochs and all(set(rec) <= allowed for rec in hist.epochs), [set(r) for r in hist.epochs]
    assert hist.epochs[-1]["epsilon"] == led.epsilon and "dev_f1" in hist.epochs[-1]


def test_patient_units_documents_without_patient_id_are_their_own_units():
    # documents with patient_id "" must not merge into one unit
    docs = [Document("a", "x", patient_id=""), Document("b", "y", patient_id=""),
            Document("c", "z", patient_id="P1"), Document("d", "w", patient_id="P1"),
            Document("e", "v", patient_id=None), Document("f", "u", patient_id="a")]
    sents = [TaggedSentence(d, [Token("x", 0, 1)], ["O"]) for d in ("a", "a", "b", "c", "d", "e", "f")]
    u = patient_units(sents, docs)
    assert u[0] == u[1]  # two sentences of one document: one unit
    assert len({u[1], u[2], u[5]}) == 3  # documents without a patient id never merge
    assert u[3] == u[4] == "P1"  # a patient's documents are one unit
    assert u[6] == "a" and u[6] != u[0]  # a patient id equal to a document id is a different unit
    with pytest.raises(ValueError, match="no document"):
        patient_units([TaggedSentence("zz", [], [])], docs)


def test_ahmed_dp_training_subset_adding_one_sentence_changes_no_other_decision(dp_splits):
    # a fixed-size seeded subset fails this (one more sentence swaps others in)
    sents = _sentences(dp_splits.train, None, 0)
    assert len(sents) > 100
    base = _thin_and_subsample(sents, 0.3, 0, 0.5)
    for pos in (0, len(sents) // 2, len(sents)):
        extra = TaggedSentence("new-doc", [Token("Smith", 0, 5), Token("rested", 6, 12)], ["B-PHI", "O"])
        more = _thin_and_subsample(sents[:pos] + [extra] + sents[pos:], 0.3, 0, 0.5)
        assert [s for s in more if s is not extra] == base
        fewer = _thin_and_subsample(sents[:pos] + sents[pos + 1:], 0.3, 0, 0.5)
        assert fewer == [s for s in base if pos >= len(sents) or s is not sents[pos]]
    # the rate is a fixed probability per sentence (PHI-free ones thinned first)
    n_phi = sum(any(t != "O" for t in s.tags) for s in sents)
    expect = 0.3 * (n_phi + 0.5 * (len(sents) - n_phi))
    assert abs(len(base) - expect) < 6 * math.sqrt(len(sents) * 0.25)
