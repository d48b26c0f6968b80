from types import SimpleNamespace as R

import pytest

from deidlib.audits import equal_value_disclosure, note_linkage


def _rec(doc, pat, cat, orig, sur):
    return R(document_id=doc, patient_id=pat, category=cat, original=orig, surrogate=sur)


def test_notes_sharing_a_surrogate_name_are_linked():
    recs = [
        _rec("a1", "A", "NAME", "Ann Lee", "Mia Fox"), _rec("a2", "A", "NAME", "Ann Lee", "Mia Fox"),
        _rec("b1", "B", "NAME", "Bo Ray", "Zed Ito"), _rec("b2", "B", "NAME", "Bo Ray", "Kim Oh"),
        _rec("c1", "C", "DATE", "1 May", "3 May"),
    ]
    r = note_linkage(recs)
    assert r["pairs"] == 10 and r["base_rate"] == pytest.approx(0.2)
    assert r["precision"] == 1.0 and r["recall"] == 0.5  # A's notes link, B's do not
    assert note_linkage(recs, field="original")["recall"] == 1.0  # the ceiling: nothing replaced


def test_equal_value_disclosure_counts_pairs_within_a_patient():
    recs = [
        _rec("a1", "A", "DATE", "1 May", "9 May"), _rec("a1", "A", "DATE", "1 May", "9 May"),
        _rec("a1", "A", "DATE", "2 May", "9 May"), _rec("b1", "B", "DATE", "1 May", "9 May"),
    ]
    r = equal_value_disclosure(recs)
    # A's three pairs: (1,1) equal/equal, (1,2) x2 unequal originals with equal surrogates
    assert r["pairs"] == 3 and r["precision"] == pytest.approx(1 / 3) and r["recall"] == 1.0


def test_patient_memo_links_notes_that_the_document_memo_does_not(tiny):
    from deidlib.surrogates.engine import SurrogateEngine

    _, data = tiny
    docs = data.docs[:20]
    got = {}
    for scope in ("document", "patient"):
        _, recs = SurrogateEngine(seed=0, epsilon=1.0, memo_scope=scope).surrogate_documents(docs)
        got[scope] = note_linkage(recs)
    # the ceiling: the share of a patient's note pairs whose originals share a name at all (notes without
    # names, such as many ICU nursing notes, cannot be linked by any memo); 0.27 to 0.55 on these notes
    ceiling = note_linkage(recs, field="original")["recall"]
    assert ceiling > 0.2
    assert got["patient"]["recall"] >= 0.9 * ceiling, (got, ceiling)
    assert got["document"]["recall"] < 0.5 * got["patient"]["recall"], (got, ceiling)
