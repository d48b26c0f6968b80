import torch

from deidlib.audits import batch_rows, embedding_slice, reconstruction_prf, recovered_rows
from deidlib.collaborative import tagger_trainer
from deidlib.collaborative.dp_upload import UploadLedger
from deidlib.collaborative.dssgd import flatten_parameters, make_generator
from deidlib.collaborative.worker_upload import worker_upload
from deidlib.studies import audits as au
from deidlib.studies.audits.data import _featurizer, make_tagger


def _upload(tiny, theta_u, dp_epsilon=None, freeze=False, tau=0.0):
    params, data = tiny
    fz = _featurizer([s.words for s in data.sentences])
    batch = data.sentences[:20]
    hp = {**params.tagger, "freeze_embeddings": freeze}
    model = make_tagger(fz, au.params_for("smoke", tagger=hp), seed=0)
    before = flatten_parameters(model)
    # a modest step: with the summed sentence loss, lr 0.3 on the batch's 50+-token sentences saturates
    # the LSTM gates (exactly ±1 in float32), after which later sentences move no embedding at all
    tagger_trainer(lr=0.1, batch_size=1)(model, batch, seed=0)
    update = flatten_parameters(model) - before
    ledger = UploadLedger("s") if dp_epsilon else None
    idx, vals = worker_upload(update, theta_u=theta_u, gamma=10.0, tau=tau, generator=make_generator(0),
                              dp_epsilon=dp_epsilon, ledger=ledger)
    sl = embedding_slice(model)
    return reconstruction_prf(recovered_rows(idx, vals, sl), batch_rows(fz, batch)), sl, fz


def test_raw_upload_reveals_the_batch_words(tiny):
    r, sl, fz = _upload(tiny, 1.0)
    assert sl is not None and sl[1] == fz.num_words
    # (202 of 202 batch words recovered at seed 0; a word whose every gradient underflows would hide)
    assert r["precision"] == 1.0 and r["recall"] > 0.9, r
    # the festag threshold τ drops entries that moved less than τ: a few words hide, none is wrong
    t = _upload(tiny, 1.0, tau=1e-4)[0]
    assert t["precision"] == 1.0 and 0.8 < t["recall"] <= 1.0, t


def test_partial_upload_reveals_fewer_words_and_no_wrong_ones(tiny):
    full, _, _ = _upload(tiny, 1.0)
    part, _, _ = _upload(tiny, 0.1)
    assert part["precision"] == 1.0 and part["recall"] < full["recall"]


def test_dp_upload_mixes_in_words_the_site_never_used(tiny):
    r, _, _ = _upload(tiny, 1.0, dp_epsilon=1.0)
    base = r["true"] / (_featurizer([s.words for s in tiny[1].sentences]).num_words - 2)
    assert r["precision"] < 0.9
    assert r["precision"] < base + 0.2  # close to the share of batch words in the vocabulary: chance


def test_frozen_embeddings_leave_nothing_in_the_embedding(tiny):
    r, sl, _ = _upload(tiny, 1.0, freeze=True)
    assert sl is None and r["recovered"] == 0


def test_recovered_rows_reads_only_the_embedding_slice():
    sl = (10, 5, 2)  # rows 0..4 at flat positions 10..19
    idx = torch.tensor([0, 14, 15, 19, 25])
    vals = torch.tensor([1.0, 1.0, 0.0, 2.0, 1.0])
    assert recovered_rows(idx, vals, sl) == {2, 4}  # row 2 (pos 14), row 4 (pos 19); row 0/1 never words
