"""tchouka (notebook 08): the thread table (Figure 5 analog) and the Table 2 analog."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from deidlib.corpus.document import Document, Span
from deidlib.evaluation.scorer import evaluate, prf
from deidlib.studies import tchouka as T
from deidlib.studies.tchouka import ner, thread, thread_values
from deidlib.surrogates.dates import parse_date, parse_quantity
from deidlib.surrogates.locations import load_places


@pytest.fixture(scope="module")
def threads():
    places = load_places(("FR",), 5000)
    example = thread.thread_example(1.0, seed=0, location_method="paper", places=places)
    patient = thread_values.patient_thread(6, seed=0, epsilon=1.0)
    return example, patient, thread_values.thread_table(example, patient, places=places, seed=0)


def _by_type(doc: Document, kind: str) -> list[Span]:
    return [s for s in doc.spans if s.subtype == kind]


def test_thread_table_shifts_match_the_surrogate_documents(threads):
    """Each row's surrogate is the text at the moved span of the surrogate note, and each date's
    surrogate = original + the recorded shift (read back from the two documents themselves; a
    surrogate written without its year matches in month and day, its year is the one nearest the
    original, so a shift across New Year stays a shift of days)."""
    _, patient, tab = threads
    rows = tab[tab.thread.str.startswith("synthetic")]
    engine = patient["engine"]
    checked = 0
    for src, dst in zip(patient["documents"], patient["surrogates"]):
        r = rows[(rows.note == src.id) & (rows.type == "DATE")]
        gs, ss = _by_type(src, "DATE"), _by_type(dst, "DATE")
        assert list(r.original) == [s.text for s in gs] and list(r.surrogate) == [s.text for s in ss]
        ref = engine.reference_for(src)
        for g, s, shift, unit in zip(gs, ss, r["shift"], r["unit"]):
            a = parse_date(g.text.strip(), dayfirst=False, reference=ref)
            b = parse_date(s.text.strip(), dayfirst=False, reference=ref)
            if unit == "day" and not pd.isna(shift):  # NaN: a two-digit year (century not written)
                moved = a.date + dt.timedelta(days=int(shift))
                if "y" in b.fields:
                    assert b.date == moved
                else:  # written without its year ("01/06" for "12/26"): month and day must match
                    assert (b.date.month, b.date.day) == (moved.month, moved.day)
                checked += 1
    assert checked >= 10
    days = rows[(rows.type == "DATE") & (rows.unit == "day") & rows["shift"].notna()]
    for _, r in days.iterrows():
        assert dt.date.fromisoformat(r.surrogate_value) - dt.date.fromisoformat(r.original_value) == dt.timedelta(days=int(r["shift"]))


def test_thread_table_is_consistent_across_the_patients_notes(threads):
    """One memo per patient: a date or an age repeated in several notes (any format) has one
    surrogate value, and one shift, in every note; ages are age + shift."""
    _, patient, tab = threads
    rows = tab[tab.thread.str.startswith("synthetic")]
    for kind in ("DATE", "AGE"):
        v = rows[(rows.type == kind) & rows["shift"].notna()]
        per_value = v.groupby(["original_value", "unit"])["surrogate_value"].nunique()
        assert (per_value == 1).all(), per_value[per_value > 1]
        assert v.groupby(["original_value", "unit"]).size().max() > 1  # something repeats
    ages = rows[rows.type == "AGE"]
    assert ages.note.nunique() >= 2
    for _, r in ages.iterrows():
        assert parse_quantity(r.surrogate.strip(), default_unit="year").value == r.original_value + r["shift"]


def test_thread_table_paper_example_rows(threads):
    """The paper example: 2 dates (days, day first) and 1 age with shifts, ε/4 each; the city's
    second mention is a memo hit using no budget; the name uses none."""
    example, _, tab = threads
    ex = tab[tab.thread.str.startswith("paper")]
    assert list(ex.type) == ["NAME", "CITY", "AGE", "DATE", "DATE", "CITY"]
    assert ex[ex["shift"].notna()].epsilon.tolist() == [0.25, 0.25, 0.25]
    assert ex.epsilon.sum() == pytest.approx(1.0)
    d = ex[ex.type == "DATE"]
    assert d.original_value.tolist() == ["2020-02-12", "2020-02-26"]  # 12/02/2020 read day first
    assert list(ex.surrogate) == [r.surrogate for r in example["records"]]


def test_thread_table_is_seeded():
    """The study's draws are seeded: same seed, same table; another seed, other surrogates."""
    a, b, c = (thread_values.thread_table(thread.thread_example(1.0, seed=s, location_method="fixed"),
                              thread_values.patient_thread(4, seed=0 if s < 2 else 1, epsilon=1.0), seed=s) for s in (0, 0, 5))
    pd.testing.assert_frame_equal(a, b)
    assert list(a.surrogate) != list(c.surrogate)


# ----------------------------------------------------------------------------- Table 2 analog
TEXT = "Dr. Smith saw John Doe at Mercy Hospital in Boston on 01/02/2020, age 45, tel 555-1234, MRN 12345, nurse."


def _doc(spans: list[tuple[str, str]], doc_id: str = "n1") -> Document:
    out = []
    for surface, sub in spans:
        i = TEXT.index(surface)
        out.append(Span.of(TEXT, i, i + len(surface), sub))
    return Document(doc_id, TEXT, sorted(out, key=lambda s: (s.start, s.end)), "p1")


GOLD = _doc([("Smith", "DOCTOR"), ("John Doe", "PATIENT"), ("Mercy Hospital", "HOSPITAL"), ("Boston", "CITY"),
             ("01/02/2020", "DATE"), ("45", "AGE"), ("555-1234", "PHONE"), ("12345", "MEDICALRECORD"),
             ("nurse", "PROFESSION")])
SYSTEM = _doc([
    ("Smith", "PATIENT"),  # PER either way: a hit
    ("John", "PATIENT"),  # wrong offsets: PER FP, and John Doe a PER FN
    ("Mercy Hospital", "ORGANIZATION"),  # ORG either way: a hit
    ("Boston", "DATE"),  # LOC FN and DATE FP
    ("01/02/2020", "DATE"),  # hit
    ("age 45", "AGE"),  # wrong offsets: AGE FP + FN
    ("555-1234", "FAX"),  # TEL either way: a hit
    ("12345", "IDNUM"),  # QID: a hit
    # PROFESSION "nurse" missed: it has no paper label, so it counts nowhere
])


def test_table2_counts_follow_the_paper_label_mapping():
    """Hand counts of the fixture: a span is a hit when offsets and the *paper label* agree."""
    t = ner.table2([GOLD], [SYSTEM]).set_index("label")
    expect = {"PER": (1, 1, 1), "ORG": (1, 0, 0), "LOC": (0, 0, 1), "DATE": (1, 1, 0), "AGE": (0, 1, 1),
              "TEL": (1, 0, 0), "QID": (1, 0, 0), "REF": (0, 0, 0), "Overall": (5, 3, 3)}
    for label, (tp, fp, fn) in expect.items():
        assert (t.loc[label, "tp"], t.loc[label, "fp"], t.loc[label, "fn"]) == (tp, fp, fn), label
        if label != "REF":
            p = prf(tp, fp, fn)
            assert (t.loc[label, "precision"], t.loc[label, "recall"], t.loc[label, "f1"]) == (p.precision, p.recall, p.f1)
    assert t.loc["PER", "paper_proposal_f1"] == pytest.approx(0.98)
    assert t.loc["Overall", "paper_proposal_f1"] == pytest.approx(0.974)
    assert pd.isna(t.loc["REF", "f1"]) and t.loc["REF", "paper_proposal_f1"] == pytest.approx(0.87)


def test_table2_equals_the_scorer_on_documents_labelled_by_hand():
    """The table's rows are the i2b2 scorer's strict per-TYPE rows of the same documents written
    directly with one TYPE per paper label (so another metric or another mapping fails)."""
    label_of = {"DOCTOR": "PATIENT", "HOSPITAL": "ORGANIZATION", "FAX": "PHONE", "MEDICALRECORD": "IDNUM"}

    def by_hand(d):
        spans = [Span.of(d.text, s.start, s.end, label_of.get(s.subtype, s.subtype))
                 for s in d.spans if s.subtype != "PROFESSION"]
        return Document(d.id, d.text, spans, d.patient_id)

    rep = evaluate([by_hand(GOLD)], [by_hand(SYSTEM)])
    t = ner.table2([GOLD], [SYSTEM]).set_index("label")
    for label, typ in ner.REPRESENTATIVE.items():
        if typ in rep.per_type["strict"]:
            p, (tp, fp, fn) = rep.per_type["strict"][typ]
            assert (t.loc[label, "f1"], t.loc[label, "tp"], t.loc[label, "fp"], t.loc[label, "fn"]) == (p.f1, tp, fp, fn)
    assert t.loc["Overall", "f1"] == rep.scores["strict"].micro.f1


def test_every_i2b2_type_with_a_paper_label_maps_to_a_labelled_representative():
    assert set(ner.PAPER_LABEL.values()) == set(ner.REPRESENTATIVE) == set(ner.PAPER_LABELS) - {"REF"}
    assert {ner.PAPER_LABEL[t] for t in ner.REPRESENTATIVE.values()} == set(ner.REPRESENTATIVE)
    assert "PROFESSION" not in ner.PAPER_LABEL and "EMAIL" not in ner.PAPER_LABEL


def test_tchouka_claims_carry_the_ner_row_from_table2():
    t2 = ner.table2([GOLD], [SYSTEM])
    claims = T.paper_vs_ours(pd.DataFrame(), t2)
    row = claims[claims.claim.str.contains("NER")].iloc[0]
    assert float(row.ours) == pytest.approx(t2.set_index("label").loc["Overall", "f1"], abs=1e-3)
    assert float(row.paper) == pytest.approx(0.974)
    assert row.verdict == "contradicts"  # 5/8 hits is far below 97.4
