"""Surface forms of PHI and site styles (deidlib.synthetic.phi_forms / styles)."""

from __future__ import annotations

import datetime as dt
import random
import re

import pytest

from deidlib.synthetic.phi_forms import (
    _ID_SHAPES,
    _PARTIAL_DATE_FORMATS,
    DATE_FORMATS,
    age_words,
    format_age,
    format_date,
    format_name,
    format_phone,
    random_id,
)
from deidlib.synthetic.styles import _ARCHETYPES, site_names, site_style

D = dt.date(2020, 2, 12)  # a Wednesday


@pytest.mark.parametrize(
    "fmt,en,fr",
    [
        ("mdy_slash", "02/12/2020", "12/02/2020"),
        ("mdy_short", "2/12/20", "12/2/20"),
        ("iso", "2020-02-12", "2020-02-12"),
        ("mon_d_y", "Feb 12, 2020", "12 févr. 2020"),
        ("month_d_y", "February 12, 2020", "12 février 2020"),
        ("d_month_y", "12 February 2020", "12 février 2020"),
        ("d_mon_y", "12-Feb-2020", "12-févr-2020"),
        ("month_y", "February 2020", "février 2020"),
        ("md", "2/12", "12/2"),
        ("yy_apos", "'20", "'20"),
        ("year", "2020", "2020"),
        ("weekday", "Wednesday", "mercredi"),
        ("mon_d", "Feb 12", "12 févr."),
        ("dot", "12.02.2020", "12.02.2020"),
    ],
)
def test_date_formats(fmt, en, fr):
    assert format_date(D, fmt, "en") == en
    assert format_date(D, fmt, "fr") == fr


def test_every_date_format_renders_and_unknown_raises():
    for f in DATE_FORMATS + _PARTIAL_DATE_FORMATS:
        assert format_date(D, f)
    with pytest.raises(ValueError, match="unknown date format"):
        format_date(D, "julian")


def test_age_forms():
    assert age_words(78) == "seventy-eight"
    assert age_words(90) == "ninety"
    assert age_words(102) == "one hundred two"
    with pytest.raises(ValueError):
        age_words(130)
    rng = random.Random(0)
    seen = {format_age(78, rng, kind="attr") for _ in range(300)}
    assert ("78", " y/o") in seen and ("78", "yo") in seen and ("seventy-eight", "-year-old") in seen
    bare = {format_age(93, rng, kind="bare", sex="M") for _ in range(300)}
    assert ("93", "M") in bare and ("ninety-three", "") in bare
    assert all(format_age(78, rng, lang="fr")[0] == "78" for _ in range(50))


def test_name_forms():
    assert format_name("May", "Brown", "last_comma_first") == "Brown, May"
    assert format_name("May", "Brown", "initials", middle="Ann") == "MAB"
    assert format_name("May", "Brown", "first_initial_last") == "M. Brown"
    assert format_name("May", "Brown", "last_upper") == "BROWN"
    with pytest.raises(ValueError):
        format_name("a", "b", "nickname")


def test_phones_and_ids_have_their_shapes():
    rng = random.Random(1)
    for _ in range(50):
        p = format_phone(rng, "en")
        assert 7 <= len(re.sub(r"\D", "", p)) <= 11
        q = format_phone(rng, "fr")
        assert q.startswith(("0", "+33")) and len(re.sub(r"\D", "", q)) in (10, 11, 12)
    for kind, shapes in _ID_SHAPES.items():
        for shape in shapes:
            s = random_id(kind, rng, shape)
            assert len(s) == len(shape)
            for ch, sh in zip(s, shape):
                assert ch.isdigit() if sh == "#" else (ch.isupper() if sh == "A" else ch == sh)
    with pytest.raises(ValueError):
        random_id("PASSPORT", rng)


def test_styles():
    assert site_names(3) == ["site0", "site1", "site2"]
    with pytest.raises(ValueError):
        site_names(0)
    # at full heterogeneity the first five sites are the archetypes' own tables (dates, phones and
    # IDs from the site-exclusive tables)
    full = [site_style(i, 0, 1.0) for i in range(5)]
    for st, a in zip(full, _ARCHETYPES):
        assert (st.name, st.note_mix.keys(), st.header, st.abbrev_rate) == (a.name, a.note_mix.keys(), a.header, a.abbrev_rate)
    s5a, s5b, s5c = site_style(5, 0), site_style(5, 0), site_style(5, 1)
    assert s5a == s5b and s5a.note_mix != s5c.note_mix and s5a.name.startswith(_ARCHETYPES[0].name)
    assert len({a.header for a in _ARCHETYPES}) == len(_ARCHETYPES)
