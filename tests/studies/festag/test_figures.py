"""festag figures: Figure 6's panels, series and bands, on hand-made results."""

from __future__ import annotations

import pytest

from deidlib.studies import festag


def test_figure6_panels_series_and_bands(make_results):
    r = make_results()
    fig = festag.figure6(r)
    assert len(fig.axes) == 2
    labels = [line.get_label() for line in fig.axes[1].get_lines() if not line.get_label().startswith("_")]
    assert [lab.split()[0] for lab in labels] == ["D", "C_0.5", "B", "A"]
    # every series has its band: one filled area per series, A and B over seeds too
    assert len(fig.axes[0].collections) == 4
    a_band = fig.axes[0].collections[3].get_paths()[0].vertices[:, 1]
    assert a_band.min() == pytest.approx(0.5) and a_band.max() == pytest.approx(0.9)  # min of seed 0, max of seed 1
