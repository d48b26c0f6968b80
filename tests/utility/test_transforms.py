import pytest

from deidlib.corpus import Document, Span
from deidlib.utility.transforms import apply, mask, merge_regions, remove


def doc(text, *items):
    return Document("d1", text, [Span.of(text, a, b, t) for a, b, t in items])


def test_mask_replaces_each_span_with_its_category_at_the_right_offsets():
    d = doc("Seen by Dr. Smith on 2019-01-02 in Boston.", (12, 17, "DOCTOR"), (21, 31, "DATE"), (35, 41, "CITY"))
    assert mask(d) == "Seen by Dr. [NAME] on [DATE] in [LOCATION]."
    assert mask(d, level="subtype") == "Seen by Dr. [DOCTOR] on [DATE] in [CITY]."
    assert mask(d, style="i2b2") == "Seen by Dr. [**Name**] on [**Date**] in [**Location**]."


def test_remove_deletes_span_text_and_keeps_the_rest():
    d = doc("Seen by Dr. Smith on 2019-01-02.", (12, 17, "DOCTOR"), (21, 31, "DATE"))
    assert remove(d) == "Seen by Dr.  on ."


def test_adjacent_spans_stay_separate_and_glued_removal_leaves_a_space():
    d = doc("JohnSmith x", (0, 4, "PATIENT"), (4, 9, "PATIENT"))
    assert mask(d) == "[NAME][NAME] x"
    d2 = doc("a12b", (1, 3, "AGE"))  # removal between two letters must not fuse them
    assert remove(d2) == "a b"


def test_overlapping_spans_merge_into_one_region():
    text = "call 555-1234 now"
    spans = [Span(5, 13, "CONTACT", "PHONE", text[5:13]), Span(9, 13, "ID", "IDNUM", text[9:13])]
    d = Document("d", text).with_spans(spans)
    assert [(a, b) for a, b, _ in merge_regions(d.spans)] == [(5, 13)]
    assert mask(d) == "call [CONTACT] now" and remove(d) == "call  now"


def test_empty_doc_and_no_spans_are_identity():
    assert remove(Document("e", "")) == "" and mask(Document("e", "")) == ""
    assert remove(Document("e", "no phi here")) == "no phi here"


def test_predicted_spans_override_gold_and_out_of_range_is_an_error():
    d = doc("Ann met Bob", (0, 3, "PATIENT"))
    pred = [Span.of(d.text, 8, 11, "PATIENT")]
    assert apply([d], "mask", spans=lambda _: pred) == ["Ann met [NAME]"]
    with pytest.raises(ValueError, match="out of range"):
        mask(d, [Span(5, 40, "NAME", "PATIENT", "")])
    with pytest.raises(ValueError, match="unknown de-identification method"):
        apply([d], "shred")


def test_apply_hook_accepts_any_replacement_function_including_the_surrogate_engine():
    d = doc("Ann met Bob", (0, 3, "PATIENT"))
    assert apply([d], lambda x: x.text.upper()) == ["ANN MET BOB"]
    from deidlib.surrogates import SurrogateEngine

    eng = SurrogateEngine(seed=0)
    out = apply([d], lambda x: eng.surrogate(x).document.text)[0]
    assert out.endswith(" met Bob") and not out.startswith("Ann ")
