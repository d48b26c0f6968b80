"""A notebook's parameter comment that quotes a profile's value ("None: the profile's cap
on test sentences (cpu 750)") quotes what the study's ``params_for(profile)`` resolves to."""

from __future__ import annotations

import importlib
import re

import pytest

from deidlib.notebooks import load_manifest, notebooks_dir

ENTRIES = load_manifest()


def profile_claims(source: str):
    """``(parameter, profile, [numbers])`` for each ``name = None  # ... (cpu 750)`` of the
    parameters cell (``smoke 1, cpu 3`` gives two; ``cpu 0.02, 0.25, 1`` one tuple)."""
    cell = source.split('# %% tags=["parameters"]', 1)[1].split("\n# %%", 1)[0]
    for line in cell.splitlines():
        m = re.match(r"^(\w+) = None\s+#(.*)$", line)
        if m:
            for profile, nums in re.findall(r"\b(smoke|cpu|paper) (\d[\d., ]*\d|\d)", m.group(2)):
                yield m.group(1), profile, [float(x) for x in re.split(r"[ ,]+", nums.strip(" ,"))]


def quoted_defaults_that_disagree(source: str) -> list[str]:
    studies = [importlib.import_module(f"deidlib.studies.{m}")
               for m in re.findall(r"^from deidlib\.studies import (\w+)", source, re.M)]
    bad = []
    for name, profile, nums in profile_claims(source):
        for study in studies:
            params = study.params_for(profile) if hasattr(study, "params_for") else None
            if params is None or not hasattr(params, name):
                continue
            value = getattr(params, name)
            actual = [float(v) for v in value] if isinstance(value, (tuple, list)) else [float(value)]
            if actual[: len(nums)] != nums or (isinstance(value, (tuple, list)) and len(actual) != len(nums)):
                bad.append(f"{name}: comment says {profile} {nums}, {study.__name__}.params_for gives {value}")
    return bad


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_quoted_profile_values_agree_with_the_study(entry):
    source = (notebooks_dir() / f"{entry.name}.py").read_text(encoding="utf-8")
    assert quoted_defaults_that_disagree(source) == []


def test_the_check_sees_a_stale_value():
    source = ('# %% tags=["parameters"]\nmax_test_sentences = None  # None: the cap (cpu 1500)\n'
              "# %%\nfrom deidlib.studies import festag\n")
    assert quoted_defaults_that_disagree(source) == [
        "max_test_sentences: comment says cpu [1500.0], deidlib.studies.festag.params_for gives 750"]
