"""The ICU nursing notes: exact spans, PHI-sparse, real casing mix, telegraphic form."""

import re
from collections import Counter

import pytest

from deidlib.corpus.labels import tagged_sentences
from deidlib.synthetic import generate
from deidlib.synthetic.generator import NOTE_TYPES
from deidlib.synthetic.icu_vocab import OPENINGS, PHI_PHRASES, PLAN, SYSTEM_PHRASES
from deidlib.synthetic.notes import icu
from deidlib.synthetic.styles import _ARCHETYPES


@pytest.fixture(scope="module")
def corpus():
    return generate(patients=120, sites=5, seed=3)


@pytest.fixture(scope="module")
def icu_notes(corpus):
    return [d for d in corpus if d.metadata["note_type"] == "icu_nursing_note"]


def test_icu_notes_are_a_note_type_of_every_default_site(corpus, icu_notes):
    assert "icu_nursing_note" in NOTE_TYPES
    assert len(icu_notes) > 0.15 * len(corpus)
    assert {d.site for d in icu_notes} == {d.site for d in corpus}


def test_spans_are_exact_and_types_are_the_nursing_kinds(icu_notes):
    types = Counter()
    for d in icu_notes:
        for s in d.spans:
            assert d.text[s.start:s.end] == s.text and s.text == s.text.strip()
            types[s.subtype] += 1
    assert {"DOCTOR", "DATE", "HOSPITAL", "PATIENT"} <= set(types)
    # none of the header PHI of the other note types (identifiers, addresses)
    assert not {"MEDICALRECORD", "SSN", "ACCOUNT", "STREET", "ZIP", "EMAIL"} & set(types)


def test_icu_notes_are_far_less_phi_dense_than_the_other_notes(corpus, icu_notes):
    def phi_sentence_share(docs):
        sents = tagged_sentences(docs, "binary", "BIO", "default")
        return sum(any(t != "O" for t in s.tags) for s in sents) / len(sents)

    others = [d for d in corpus if d.metadata["note_type"] != "icu_nursing_note"]
    icu_share, other_share = phi_sentence_share(icu_notes), phi_sentence_share(others)
    assert icu_share < 0.3 and icu_share < other_share / 2.5


def _casing_share(notes, case):
    return sum(d.metadata["casing"] == case for d in notes) / len(notes)


def test_casing_mix_follows_icu_casing_when_sites_write_alike():
    alike = [d for d in generate(patients=120, sites=5, seed=3, heterogeneity=0.0)
             if d.metadata["note_type"] == "icu_nursing_note"]
    for case, w in icu._ICU_CASING.items():
        assert abs(_casing_share(alike, case) - w) < 0.12, case
    upper = [d for d in alike if d.metadata["casing"] == "upper"]
    assert upper and all(d.text == d.text.upper() for d in upper)


def test_casing_mix_follows_site_casing_at_full_heterogeneity(icu_notes):
    by_style = {}
    for d in icu_notes:
        by_style.setdefault(d.metadata["style"], []).append(d)
    for a in _ARCHETYPES:
        notes = by_style[a.name]
        t = sum(a.casing.values())
        for case in ("normal", "upper", "lower"):
            assert abs(_casing_share(notes, case) - a.casing.get(case, 0.0) / t) < 0.2, (a.name, case)
    # the narrative site never writes in capitals or lower case, in ICU notes either
    assert all(d.metadata["casing"] == "normal" for d in by_style["narrative"])


def test_icu_casing_interpolates_between_icu_and_site_casing():
    site = {"normal": 1.0}
    assert icu.icu_casing(site, 0.0) == pytest.approx(icu._ICU_CASING)
    assert icu.icu_casing(site, 1.0) == pytest.approx({"normal": 1.0})
    half = icu.icu_casing(site, 0.5)
    assert half["normal"] == pytest.approx(0.5 * 0.25 + 0.5) and half["upper"] == pytest.approx(0.15)


def test_notes_are_written_system_by_system(icu_notes):
    headers = re.compile(r"^(NEURO|CV|C/V|CARDIAC|RESP|PULM|GI|GU)\b", re.I | re.M)
    assert sum(bool(headers.search(d.text)) for d in icu_notes) > 0.6 * len(icu_notes)


def test_every_placeholder_has_a_writer():
    names = set()
    for group in (*SYSTEM_PHRASES.values(), *PHI_PHRASES.values(), OPENINGS, PLAN):
        for t in group:
            names |= set(re.findall(r"\{(\w+)\}", t))
    missing = {n for n in names if n not in icu._VALUES and n not in icu._PHI_SLOTS}
    assert not missing


def test_generation_is_deterministic(icu_notes):
    again = [d for d in generate(patients=120, sites=5, seed=3) if d.metadata["note_type"] == "icu_nursing_note"]
    assert [(d.id, d.text, d.spans) for d in again] == [(d.id, d.text, d.spans) for d in icu_notes]


def test_registry_corpus_has_no_icu_notes():
    docs = generate(patients=10, sites=2, seed=0, note_mix={"pathology_report": 1.0})
    assert {d.metadata["note_type"] for d in docs} == {"pathology_report"}


def test_wide_name_pool_is_large_sorted_ascii_and_used_for_care_providers(icu_notes):
    from deidlib.synthetic.identities import wide_names

    last, first = wide_names("last"), wide_names("first")
    assert len(last) > 5000 and len(first) > 3000
    assert list(last) == sorted(last) and all(n.isascii() and n.isalpha() for n in last + first)
    wide = {n.lower() for n in last}
    doctors = [s.text.split()[-1].split(".")[-1].lower() for d in icu_notes for s in d.spans if s.subtype == "DOCTOR"]
    in_wide = sum(n in wide for n in doctors)
    # most provider surnames come from the wide pool, so a tagger cannot memorise a site's few names
    assert doctors and in_wide / len(doctors) > 0.4
