import numpy as np
import pytest

from deidlib.audits import attack_scores, group_scores, lira_offline_scores, loss_scores, sentence_losses
from deidlib.audits.membership import _logit_confidence
from deidlib.studies.audits.data import _featurizer, _half, fit, make_tagger


def test_logit_confidence_is_log_odds_of_exp_minus_loss():
    L = np.array([0.01, 0.5, 3.0])
    p = np.exp(-L)
    assert _logit_confidence(L) == pytest.approx(np.log(p / (1 - p)))


def test_lira_calibrates_per_example_difficulty():
    """Examples differ in difficulty far more than membership moves them: the raw loss is
    near chance, the per-example calibration (out-losses of reference models) is not."""
    rng = np.random.default_rng(0)
    n, R = 400, 8
    difficulty = rng.uniform(0.5, 5.0, n)
    member = rng.random(n) < 0.5
    target = difficulty * np.where(member, 0.7, 1.0) * rng.lognormal(0, 0.02, n)
    rin = rng.random((R, n)) < 0.5
    ref = difficulty[None] * np.where(rin, 0.7, 1.0) * rng.lognormal(0, 0.02, (R, n))
    lira = lira_offline_scores(target, ref, rin)
    raw = attack_scores(loss_scores(target)[member], loss_scores(target)[~member])
    cal = attack_scores(lira[member], lira[~member])
    assert cal["auc"] > 0.95 and cal["tpr@1%"] > 0.5
    assert raw["auc"] < 0.75
    with pytest.raises(ValueError, match="no reference model"):
        lira_offline_scores(target, ref, np.ones_like(rin))


def test_group_scores_average_per_patient():
    assert group_scores([1, 3, 5], ["a", "a", "b"]) == {"a": 2.0, "b": 5.0}


def _auc(tiny, noise, epochs, only_phi=False):
    params, data = tiny
    coin = _half(data.patients, 0, "test")
    member = np.array([coin[p] for p in data.patients])
    fz = _featurizer([s.words for s in data.sentences])
    tagger = make_tagger(fz, params, seed=0)
    fit(tagger, [s for s, m in zip(data.sentences, member) if m], params, noise, seed=0, epochs=epochs)
    s = loss_scores(sentence_losses(tagger, data.sentences))
    keep = np.array([any(t != "O" for t in x.tags) for x in data.sentences]) if only_phi else np.ones(len(s), bool)
    return attack_scores(s[member & keep], s[~member & keep])["auc"], tagger


def test_membership_of_memorised_sentences_is_detected(tiny):
    auc, _ = _auc(tiny, None, 15)
    assert auc > 0.7
    auc_phi, _ = _auc(tiny, None, 15, only_phi=True)  # PHI-free sentences are easy for everyone
    assert auc_phi > 0.9


def test_membership_is_near_chance_on_data_the_model_never_saw(tiny):
    params, data = tiny
    _, tagger = _auc(tiny, None, 15)
    s = loss_scores(sentence_losses(tagger, data.test_sentences))
    half = len(s) // 2  # two sets of unseen sentences: nothing to tell apart
    assert abs(attack_scores(s[:half], s[half:])["auc"] - 0.5) < 0.2


def test_membership_is_near_chance_under_strong_dp(tiny):
    auc, _ = _auc(tiny, 50.0, 3, only_phi=True)
    assert abs(auc - 0.5) < 0.2
