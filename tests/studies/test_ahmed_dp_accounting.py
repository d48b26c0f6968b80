"""The thesis' Table 5.3 replicated with the library's accountants and inverted to its number of
training sequences (Ahmed 2020, §5.1.2)."""

import math

import pytest

from deidlib.privacy.accounting import ACCOUNTANTS, epsilon, steps_for
from deidlib.studies.ahmed_dp.accounting import solve_sequences, table_5_3, thesis_sequence_counts
from deidlib.studies.ahmed_dp.claims import THESIS_TABLE_5_3

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_table_5_3_analog_shape_and_order():
    rows = table_5_3({"small": 2000, "large": 20000}, accountants=("rdp", "gdp"))
    assert len(rows) == 2 * 3 * 2
    by = {(r.dataset, r.noise_multiplier, r.accountant): r.epsilon for r in rows}
    for a in ("rdp", "gdp"):
        for d in ("small", "large"):
            assert by[(d, 0.25, a)] > by[(d, 0.45, a)] > by[(d, 0.55, a)]
        assert by[("small", 0.55, a)] > by[("large", 0.55, a)]
    r = next(r for r in rows if r.dataset == "large")
    assert r.sample_rate == 16 / 20000 and r.steps == 100 * 20000 // 16


def test_documents_as_unit_cannot_give_thesis_epsilon():
    # with the 790 i2b2 *documents* as sampling unit, sigma=0.55 gives eps ~49, far above 9.15
    q, T = steps_for(790, 16, 100)
    assert epsilon(0.55, q, T, 1e-5, "rdp") > 3 * 9.15


def test_solve_sequences_inverts_the_accountant():
    q, T = steps_for(12345, 16, 100)
    e = epsilon(0.55, q, T, 1e-5, "rdp")
    n = solve_sequences(e, 0.55, accountant="rdp", rel_tol=1e-4)
    assert abs(n - 12345) / 12345 < 0.01
    with pytest.raises(ValueError, match="outside"):
        solve_sequences(1e-6, 0.55, accountant="rdp", n_max=100_000)


def test_thesis_rows_rdp_give_consistent_sequence_counts():
    out = [r for r in thesis_sequence_counts(("rdp",)) if r["dataset"] == "i2b2 2014"]
    ns = [r["sequences"] for r in out]
    assert all(n is not None for n in ns)
    # the same data set must need about the same N for every noise level (within 25 %)
    assert max(ns) / min(ns) < 1.25
    for r in out:
        q, T = steps_for(r["sequences"], 16, 100)
        assert epsilon(r["noise_multiplier"], q, T, 1e-5, "rdp") <= r["thesis_epsilon"] * 1.001
    assert {r[0] for r in THESIS_TABLE_5_3} == {"i2b2 2014", "MIMIC-III", "Nursing Note"}
    assert set(ACCOUNTANTS) == {"prv", "rdp", "gdp"} and math.isfinite(out[0]["sequences_per_document"])
