"""deidlib.synthetic: determinism, exact spans, coverage of PHI types, site styles, hard cases."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict

import pytest

from deidlib.corpus.phi import _ALL_TYPES, FESTAG_TYPES
from deidlib.synthetic import generate, generate_iter
from deidlib.synthetic.generator import DIAGNOSIS_LABELS, NOTE_TYPES, site_names
from deidlib.synthetic.vocab import _EPONYMS, HARD_FIRST_NAMES, HARD_LAST_NAMES, PRIMARY_SITES


@pytest.fixture(scope="module")
def corpus():
    return generate(patients=150, sites=5, seed=0)


def _key(d):
    return (d.id, d.patient_id, d.site, d.text, tuple(d.spans), tuple(sorted(d.metadata.items())))


def test_same_seed_same_corpus_and_different_seed_differs():
    a = generate(patients=25, sites=3, seed=7)
    b = generate(patients=25, sites=3, seed=7)
    c = generate(patients=25, sites=3, seed=8)
    assert [_key(d) for d in a] == [_key(d) for d in b]
    assert [d.text for d in a] != [d.text for d in c]


def test_prefix_stable_in_number_of_patients():
    small = generate(patients=10, sites=4, seed=3)
    big = generate(patients=20, sites=4, seed=3)
    assert [_key(d) for d in small] == [_key(d) for d in big[: len(small)]]


def test_generate_iter_matches_generate():
    assert [_key(d) for d in generate_iter(patients=8, sites=2, seed=1)] == [
        _key(d) for d in generate(patients=8, sites=2, seed=1)
    ]


@pytest.mark.parametrize(
    "kwargs",
    [dict(seed=s, patients=12, sites=5) for s in range(8)]
    + [dict(seed=1, patients=15, sites=8), dict(seed=2, patients=15, sites=3, locale="fr_FR")],
)
def test_spans_exact_and_documents_valid(kwargs):
    docs = generate(**kwargs)
    assert docs
    for d in docs:
        d.validate()  # range, text equality, taxonomy, no overlap
        prev_end = -1
        for s in d.spans:
            assert d.text[s.start : s.end] == s.text
            assert s.text == s.text.strip() and s.text
            assert s.subtype in _ALL_TYPES
            assert s.start >= prev_end, f"overlap in {d.id}"
            prev_end = s.end


def test_every_type_appears(corpus):
    seen = Counter(s.subtype for d in corpus for s in d.spans)
    missing = [t for t in FESTAG_TYPES + ("ROOM", "DEPARTMENT", "OTHER") if seen[t] == 0]
    assert not missing, f"types never generated: {missing}"


def test_ids_sites_and_metadata(corpus):
    names = set(site_names(5))
    for d in corpus:
        assert re.fullmatch(r"\d{3,}-\d{2}", d.id)
        assert d.id.split("-")[0] == d.patient_id
        assert d.site in names and d.metadata["site"] == d.site
        m = d.metadata
        assert m["note_type"] in NOTE_TYPES
        assert m["diagnosis"] in DIAGNOSIS_LABELS
        dt.date.fromisoformat(m["note_date"])
        if m["note_type"] == "pathology_report":
            assert m["diagnosis"] == "cancer"
            assert m["subsite"] in PRIMARY_SITES[m["primary_site"]]["subsites"]
        else:
            assert "primary_site" not in m
    assert len({d.id for d in corpus}) == len(corpus)
    labels = Counter(d.metadata["diagnosis"] for d in corpus)
    assert 5 <= len(labels) <= 8
    assert set(Counter(d.metadata["note_type"] for d in corpus)) == set(NOTE_TYPES)
    assert len({d.metadata["primary_site"] for d in corpus if "primary_site" in d.metadata}) >= 4


def test_longitudinal_records(corpus):
    by_pt = defaultdict(list)
    for d in corpus:
        by_pt[d.patient_id].append(d)
    multi = 0
    for pid, docs in by_pt.items():
        assert len({d.site for d in docs}) == 1
        assert len({d.metadata["diagnosis"] for d in docs}) == 1
        dates = [dt.date.fromisoformat(d.metadata["note_date"]) for d in docs]
        assert dates == sorted(dates) and len(set(dates)) == len(dates)
        ages = [d.metadata["age"] for d in docs]
        assert ages == sorted(ages)
        assert ages[-1] - ages[0] <= (dates[-1] - dates[0]).days // 365 + 1
        mrns = {s.text.lower() for d in docs for s in d.spans if s.subtype == "MEDICALRECORD"}
        assert len(mrns) <= 1, f"patient {pid} has several MRNs {mrns}"
        multi += len(docs) > 1
    assert multi > len(by_pt) // 2


def _date_shape(s: str) -> str:
    return re.sub(r"[a-zA-Z]+", "a", re.sub(r"\d", "9", s))


def test_site_styles_differ(corpus):
    by_site = defaultdict(list)
    for d in corpus:
        if d.metadata["note_type"] != "icu_nursing_note":  # ICU notes mix in ICU_CASING below h = 1
            by_site[d.site].append(d)
    # casing: site2 (cancer registry) writes mostly in capitals, site1 (terse) partly in lower case
    def frac(site, pred):
        docs = by_site[site]
        return sum(pred(d) for d in docs) / len(docs)

    assert frac("site2", lambda d: d.text == d.text.upper()) > 0.4
    assert frac("site0", lambda d: d.text == d.text.upper()) < 0.15
    assert frac("site1", lambda d: d.text == d.text.lower()) > 0.2
    assert frac("site3", lambda d: d.text == d.text.lower()) == 0
    # date formats: ISO dominates at site2, month/day/year with slashes at site0
    def date_frac(site, rx):
        dates = [s.text for d in by_site[site] for s in d.spans if s.subtype == "DATE"]
        return sum(bool(re.fullmatch(rx, t)) for t in dates) / len(dates)

    iso = r"\d{4}-\d\d-\d\d"
    assert date_frac("site2", iso) > 0.3 > date_frac("site0", iso) + 0.2
    assert date_frac("site0", r"\d\d/\d\d/\d{4}") > 0.2 > date_frac("site2", r"\d\d/\d\d/\d{4}") + 0.1
    # every pair of sites differs in its date-shape distribution (total variation distance)
    dists = {}
    for site, docs in by_site.items():
        c = Counter(_date_shape(s.text) for d in docs for s in d.spans if s.subtype == "DATE")
        n = sum(c.values())
        dists[site] = {k: v / n for k, v in c.items()}
    sites = sorted(dists)
    for i, a in enumerate(sites):
        for b in sites[i + 1 :]:
            keys = set(dists[a]) | set(dists[b])
            tv = 0.5 * sum(abs(dists[a].get(k, 0) - dists[b].get(k, 0)) for k in keys)
            assert tv > 0.25, f"{a} and {b} write dates alike (TV {tv:.2f})"
    # note-type mix: the registry site writes far more pathology reports
    assert frac("site2", lambda d: d.metadata["note_type"] == "pathology_report") > 0.3 > frac(
        "site1", lambda d: d.metadata["note_type"] == "pathology_report")
    # section headers differ
    assert any("*** " in d.text for d in by_site["site2"]) and not any("*** " in d.text for d in by_site["site0"])


def test_many_date_and_age_forms(corpus):
    dates = [s.text for d in corpus for s in d.spans if s.subtype == "DATE"]
    shapes = Counter(_date_shape(t) for t in dates)
    assert len(shapes) >= 15
    texts = set(dates)
    assert any(re.fullmatch(r"'\d\d", t) for t in texts)  # '98
    assert any(re.fullmatch(r"\d{4}", t) for t in texts)  # year only
    assert any(t in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday") for t in texts)
    assert any(re.fullmatch(r"\d{1,2}/\d{1,2}", t) for t in texts)  # 2/12
    ages = [s for d in corpus for s in d.spans if s.subtype == "AGE"]
    assert any(s.text.isdigit() and int(s.text) >= 90 for s in ages)
    assert any(not s.text.isdigit() for s in ages)  # words
    # an age glued to its unit ("78yo"): the span ends inside a token
    assert any(d.text[s.end : s.end + 2] == "yo" for d in corpus for s in d.spans if s.subtype == "AGE")


def test_hard_cases(corpus):
    text_all = "\n".join(d.text for d in corpus)
    # eponyms are never PHI
    hits = 0
    for d in corpus:
        low = d.text.lower()
        for e in _EPONYMS:
            for m in re.finditer(re.escape(e.lower()), low):
                hits += 1
                for s in d.spans:
                    assert s.end <= m.start() or s.start >= m.end(), f"{e!r} tagged as {s.subtype} in {d.id}"
    assert hits > 50
    # names that are words / diseases do occur as PHI
    hard = {n.lower() for n in HARD_LAST_NAMES + HARD_FIRST_NAMES}
    names = [s.text.lower() for d in corpus for s in d.spans if s.subtype in ("PATIENT", "DOCTOR")]
    assert sum(any(tok in hard for tok in re.split(r"[ ,.]+", n)) for n in names) > 20
    # PHI inside a token: "Dr.Brown"
    assert re.search(r"Dr\.[A-Z]", text_all, flags=re.I)
    # non-PHI numbers that look like PHI (vitals, doses) are plain text
    for d in corpus:
        for s in d.spans:
            before = d.text[max(0, s.start - 3) : s.start].lower()
            assert before != "bp ", f"blood pressure tagged in {d.id}"
            assert not re.fullmatch(r"\d+(\.\d+)? ?mg", s.text.lower())
    assert re.search(r"BP \d+/\d+", text_all, flags=re.I) and re.search(r"\d+ mg", text_all)


def test_casing_is_whole_note(corpus):
    for d in corpus:
        c = d.metadata["casing"]
        if c == "upper":
            assert d.text == d.text.upper()
        elif c == "lower":
            assert d.text == d.text.lower()


def test_registry_override_all_pathology():
    docs = generate(patients=20, sites=2, seed=4, note_mix={"pathology_report": 1.0})
    assert docs and all(d.metadata["note_type"] == "pathology_report" for d in docs)
    assert all(d.metadata["subsite"] in PRIMARY_SITES[d.metadata["primary_site"]]["subsites"] for d in docs)
    # the subsite phrase is in the report text (the registry classifier can learn it)
    for d in docs:
        phrases = PRIMARY_SITES[d.metadata["primary_site"]]["subsites"][d.metadata["subsite"]][1]
        assert any(p.lower() in d.text.lower() for p in phrases)


def test_french_locale():
    docs = generate(patients=12, sites=2, seed=0, locale="fr_FR")
    assert all(d.metadata["locale"] == "fr_FR" for d in docs)
    dates = " ".join(s.text.lower() for d in docs for s in d.spans if s.subtype == "DATE")
    assert re.search(r"janv|févr|mars|avr|mai|juin|juil|août|sept|oct|nov|déc|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche", dates)
    phones = [s.text for d in docs for s in d.spans if s.subtype == "PHONE"]
    assert phones and all(p.startswith(("0", "+33")) for p in phones)


@pytest.mark.parametrize(
    "kwargs",
    [dict(patients=-1), dict(sites=0), dict(notes_per_patient=(3, 2)), dict(notes_per_patient=5),
     dict(note_mix={"letter": 1.0}), dict(diagnosis_weights={"flu": 1.0}), dict(locale="xx_XX"),
     dict(site_weights=[1.0])],
)
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        generate(**{"patients": 3, "sites": 2, **kwargs})


def test_spans_round_trip_through_label_encoding():
    from deidlib.corpus.labels import _decode_tags, _encode_tags, span_label
    from deidlib.corpus.tokenize import tokenize

    for d in generate(patients=3, sites=5, seed=11):
        toks = tokenize(d.text, spans=d.spans)
        tags = _encode_tags(toks, d.spans, scheme="i2b2", encoding="BIO")
        back = _decode_tags(toks, tags, d.text, encoding="BIO")
        want = [(s.start, s.end, span_label(s, "i2b2")) for s in d.spans if span_label(s, "i2b2")]
        assert [(s.start, s.end, span_label(s, "i2b2")) for s in back] == want
