"""Registries (deidlib.collaborative.registries): synthetic pathology-report registries with
Dirichlet label prevalence, and pseudo-registries from medical_abstracts_tc (real data)."""

import numpy as np
import pytest

from deidlib.collaborative.registries import abstract_registries, label_counts, synthetic_registries
from deidlib.corpus.locate import MEDICAL_ABSTRACTS, find_data_dir


@pytest.fixture(scope="module")
def regs():
    return synthetic_registries(3, 240, seed=0, label="primary_site", concentration=5.0)


def test_synthetic_registries_are_pathology_reports_with_shared_label_ids(regs):
    assert [r.name for r in regs] == ["site0", "site1", "site2"]
    assert all(r.label_names == regs[0].label_names for r in regs)
    assert len(regs[0].label_names) == 6
    assert all("patholog" in t.lower() for r in regs for t in r.train_texts[:5])
    for r in regs:
        assert len(r.train_texts) == len(r.train_labels) > 0 and len(r.test_texts) == len(r.test_labels) > 0
        assert set(r.train_texts).isdisjoint(r.test_texts)


def test_same_seed_same_registries(regs):
    again = synthetic_registries(3, 240, seed=0, label="primary_site", concentration=5.0)
    assert again == regs


def _spread(registries):
    c = label_counts(registries) + label_counts(registries, "test")
    p = c / c.sum(1, keepdims=True)
    return np.abs(p[:, None, :] - p[None, :, :]).sum(-1).max() / 2  # max total variation


def test_small_dirichlet_concentration_skews_label_prevalence_more():
    skewed = synthetic_registries(3, 240, seed=0, label="primary_site", concentration=0.2)
    mild = synthetic_registries(3, 240, seed=0, label="primary_site", concentration=100.0)
    assert _spread(skewed) > _spread(mild) + 0.15


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ValueError, match="at least 2"):
        synthetic_registries(1)
    with pytest.raises(ValueError, match="label"):
        synthetic_registries(2, 10, label="diagnosis")


@pytest.mark.realdata
def test_abstract_registries_partition_every_abstract_once():
    if find_data_dir(MEDICAL_ABSTRACTS) is None:
        pytest.skip(f"{MEDICAL_ABSTRACTS} not on this machine (../shared/data)")
    regs = abstract_registries(3, seed=0, concentration=0.5)
    assert len(regs[0].label_names) == 5
    texts = [t for r in regs for t in r.train_texts + r.test_texts]
    assert len(texts) >= 2888 - 5  # the shared copy holds the 2,888 test abstracts
    counts = label_counts(regs) + label_counts(regs, "test")
    assert counts.sum() == len(texts)
    assert _spread(regs) > 0.1  # label-skewed
    assert abstract_registries(3, seed=0, concentration=0.5) == regs


def test_missing_abstracts_are_a_clear_error(tmp_path):
    (tmp_path / "medical_tc_labels.csv").write_text("condition_label,condition_name\n1,a\n")
    with pytest.raises(FileNotFoundError, match="no medical_tc"):
        abstract_registries(2, data_dir=tmp_path)
