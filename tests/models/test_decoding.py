"""The recall-oriented decision on the PHI marginal (deidlib.models.decoding)."""

from __future__ import annotations

import pytest
import torch

from deidlib.models.decoding import phi_probability, threshold_tags

LABELS = ["O", "B-NAME", "I-NAME", "E-NAME", "S-NAME", "B-DATE", "I-DATE", "E-DATE", "S-DATE"]


def _marg(rows):
    """Marginals from {label: prob} dicts (rest of the mass on O)."""
    m = torch.zeros(len(rows), len(LABELS))
    for t, r in enumerate(rows):
        for lab, p in r.items():
            m[t, LABELS.index(lab)] = p
        m[t, 0] = 1 - sum(r.values())
    return m


def _tags(ids):
    return [LABELS[i] for i in ids]


def test_threshold_marks_tokens_by_phi_probability_and_encodes_runs():
    m = _marg([{}, {"B-NAME": 0.3}, {"I-NAME": 0.2, "E-NAME": 0.25}, {"S-DATE": 0.9}, {"B-NAME": 0.05}])
    assert torch.allclose(phi_probability(m, LABELS), torch.tensor([0.0, 0.3, 0.45, 0.9, 0.05]))
    assert _tags(threshold_tags(m, LABELS, 0.5, "BIOES")) == ["O", "O", "O", "S-DATE", "O"]
    assert _tags(threshold_tags(m, LABELS, 0.25, "BIOES")) == ["O", "B-NAME", "E-NAME", "S-DATE", "O"]
    bio = ["O", "B-NAME", "I-NAME", "B-DATE", "I-DATE"]
    m2 = torch.zeros(3, len(bio))
    m2[:, 1] = torch.tensor([0.6, 0.1, 0.0])
    m2[:, 2] = torch.tensor([0.0, 0.5, 0.0])
    m2[:, 0] = 1 - m2.sum(1)
    assert [bio[i] for i in threshold_tags(m2, bio, 0.5, "BIO")] == ["B-NAME", "I-NAME", "O"]
    assert [bio[i] for i in threshold_tags(m2, bio, 1.0, "BIO")] == ["O", "O", "O"]


def test_lower_threshold_never_marks_fewer_tokens():
    g = torch.Generator().manual_seed(0)
    m = torch.softmax(torch.randn(40, len(LABELS), generator=g) * 2, -1)
    marked = [sum(t != 0 for t in threshold_tags(m, LABELS, th, "BIOES")) for th in (0.9, 0.7, 0.5, 0.3, 0.1)]
    assert marked == sorted(marked) and marked[-1] > marked[0]


def test_threshold_out_of_range_is_refused():
    with pytest.raises(ValueError, match="PHI threshold"):
        threshold_tags(torch.ones(2, len(LABELS)) / len(LABELS), LABELS, 0.0, "BIO")
