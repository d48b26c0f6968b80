"""Running the operating-point study (deidlib.studies.operating_point.run): peers are computed only
on the nursing notes, and run_study takes resolved parameters only."""

from __future__ import annotations

import pytest

from deidlib.studies import operating_point as op
from deidlib.studies.operating_point.run import _peer_points


def test_no_peer_is_computed_off_the_nursing_notes(monkeypatch):
    from deidlib.evaluation import peers

    monkeypatch.setattr(peers, "available_peers", lambda: ["philter"])
    monkeypatch.setattr(peers, "peer_predictions", lambda *a: (_ for _ in ()).throw(AssertionError("ran")))
    assert _peer_points("synthetic", []) == []


def test_run_study_takes_resolved_params_only():
    with pytest.raises(TypeError, match="resolved OperatingPointParams"):
        op.run_study({"epochs": 1})
