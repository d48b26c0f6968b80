"""The heterogeneity parameter: one shared style at 0, site-exclusive surface forms at the default."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

import pytest

from deidlib.synthetic import generate
from deidlib.synthetic.styles import DEFAULT_HETEROGENEITY, check_heterogeneity, site_style

SURFACE = ("DATE", "PHONE", "MEDICALRECORD")


def _shape(t: str) -> str:
    return re.sub(r"[A-Z]", "A", re.sub(r"[a-z]+", "a", re.sub(r"\d", "#", t)))


def _full_date(t: str) -> bool:
    """A full date (day, month and year), not a partial one ("3/4", "May 2010", "'09", "Monday")."""
    groups = re.findall(r"\d+", t)
    return len(groups) >= 3 or (len(groups) == 2 and any(len(g) == 4 for g in groups))


def _shapes(docs, subtype):
    out: dict[str, set[str]] = {}
    for d in docs:
        for s in d.spans:
            if s.subtype == subtype and (subtype != "DATE" or _full_date(s.text)):
                out.setdefault(d.site, set()).add(_shape(s.text))
    return out


def _mean_overlap(by_site) -> float:
    """Mean Jaccard overlap of the sites' shape sets, over pairs of sites."""
    pairs = list(itertools.combinations(sorted(by_site), 2))
    return sum(len(by_site[a] & by_site[b]) / len(by_site[a] | by_site[b]) for a, b in pairs) / len(pairs)


@pytest.fixture(scope="module")
def corpora():
    return {h: generate(patients=150, seed=3, heterogeneity=h) for h in (0.0, DEFAULT_HETEROGENEITY)}


def test_heterogeneity_zero_gives_every_site_the_same_style():
    styles = [site_style(i, 0, 0.0) for i in range(5)]
    keys = ("note_mix", "diagnosis_weights", "date_formats", "phone_formats", "id_shapes", "hospital_suffixes",
            "patient_name_forms", "casing", "abbrev_rate", "misspell_rate", "verbosity")
    for st in styles[1:]:
        for k in keys:
            assert getattr(st, k) == pytest.approx(getattr(styles[0], k)) if isinstance(getattr(st, k), float) \
                else getattr(st, k) == getattr(styles[0], k), k


def test_default_heterogeneity_gives_sites_disjoint_phone_and_id_patterns_and_own_date_formats():
    styles = [site_style(i, 0) for i in range(5)]
    for a, b in itertools.combinations(styles, 2):
        assert not set(a.phone_formats) & set(b.phone_formats)
        assert not set(a.id_shapes["MEDICALRECORD"]) & set(b.id_shapes["MEDICALRECORD"])
        assert not set(a.date_formats) & set(b.date_formats)


def test_generated_surface_forms_shared_at_zero_and_nearly_disjoint_at_default(corpora):
    for sub in SURFACE:
        same = _mean_overlap(_shapes(corpora[0.0], sub))
        apart = _mean_overlap(_shapes(corpora[DEFAULT_HETEROGENEITY], sub))
        assert same > 0.5, (sub, same)
        assert apart < 0.35 and apart < same / 2, (sub, apart, same)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", None, float("nan"), True])
def test_invalid_heterogeneity_is_refused(bad):
    with pytest.raises(ValueError, match="heterogeneity"):
        check_heterogeneity(bad)
    with pytest.raises(ValueError, match="heterogeneity"):
        generate(patients=1, heterogeneity=bad)


def test_spans_exact_at_both_levels(corpora):
    for docs in corpora.values():
        assert sum(len(d.spans) for d in docs) > 500
        for d in docs:
            for s in d.spans:
                assert d.text[s.start:s.end] == s.text


def test_generation_deterministic_per_seed_and_level():
    a = generate(patients=12, seed=5, heterogeneity=0.4)
    b = generate(patients=12, seed=5, heterogeneity=0.4)
    c = generate(patients=12, seed=5, heterogeneity=0.9)
    assert [(d.text, d.spans) for d in a] == [(d.text, d.spans) for d in b]
    assert [d.text for d in a] != [d.text for d in c]


def test_site_wording_rewrites_plain_text_only():
    st = replace(site_style(1, 0), heterogeneity=1.0)
    assert st.vocab.get("patient") == "pt"
    docs = generate(patients=40, seed=1, sites=2, heterogeneity=1.0)
    site1 = " ".join(d.text for d in docs if d.site == "site1")
    assert re.search(r"\bpt\b", site1, re.I)
