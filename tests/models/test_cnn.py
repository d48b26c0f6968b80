"""Multi-window CNN (deidlib.models.cnn): shapes, masking of short/padded documents,
the public hashed vocabulary, determinism."""

import pytest
import torch

from deidlib.models.cnn import MultiWindowCNN, MultiWindowEncoder, hashed_ids, pad_ids


def _model(seed=0, **kw):
    torch.manual_seed(seed)
    return MultiWindowCNN(97, 4, emb_dim=8, filters=6, **kw).eval()


def test_output_shapes_three_windows():
    m = _model()
    assert [c.kernel_size[0] for c in m.encoder.convs] == [3, 4, 5]
    ids = pad_ids([[1, 2, 3, 4, 5, 6, 7], [8, 9, 10]])
    assert m(ids).shape == (2, 4)
    assert m.features(ids).shape == (2, 3 * 6)


def test_padding_does_not_change_features():
    m = _model()
    doc = [5, 6, 7, 8, 9, 10]
    a = m.features(pad_ids([doc]))
    b = m.features(pad_ids([doc, list(range(1, 40))]))[:1]  # padded to 39 in a batch
    assert torch.allclose(a, b, atol=1e-6)


def test_document_shorter_than_the_widest_window_gives_finite_features():
    m = _model()
    out = m.features(pad_ids([[3], [4, 5]], min_len=1))
    assert torch.isfinite(out).all()
    # a 1-word document sees only its own word: changing padding length changes nothing
    assert torch.allclose(out[:1], m.features(pad_ids([[3]], min_len=12)), atol=1e-6)


def test_max_pool_ignores_windows_past_the_end():
    enc = MultiWindowEncoder(2, windows=(2,), filters=1)
    with torch.no_grad():
        enc.convs[0].weight.zero_()
        enc.convs[0].bias.fill_(0.0)
        enc.convs[0].weight[0, 0, :] = 1.0  # sums feature 0 over two words
    x = torch.zeros(1, 4, 2)
    x[0, 3, 0] = 100.0  # a large value in a position beyond the length-2 document
    out = enc(x, torch.tensor([2]))
    assert out.item() == 0.0


def test_same_seed_same_outputs_and_gradients():
    ids = pad_ids([[1, 2, 3, 4], [5, 6, 7, 8, 9]])
    a, b = _model(3), _model(3)
    assert torch.equal(a(ids), b(ids))
    assert not torch.equal(a(ids), _model(4)(ids))


def test_hashed_ids_are_public_stable_and_in_range():
    ids = hashed_ids("Ductal carcinoma, ductal CARCINOMA 12", 50)
    assert ids[0] == ids[2] and ids[1] == ids[3]  # case-insensitive, same word same id
    assert all(1 <= i < 50 for i in ids) and len(ids) == 5
    assert hashed_ids("ductal carcinoma", 50, max_len=1) == ids[:1]
    with pytest.raises(ValueError):
        hashed_ids("x", 1)
