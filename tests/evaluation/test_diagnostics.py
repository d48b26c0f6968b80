import pytest

from deidlib.corpus.document import Document, Span
from deidlib.evaluation import binary_token_prf
from deidlib.evaluation.diagnostics import _TOKEN_KINDS, error_tokens, grouped_token_counts, token_kind


@pytest.mark.parametrize("tok, kind", [
    ("0600", "time"), ("2130", "time"), ("4pm", "time"), ("10:30", "time"), ("noon", "time"),
    ("7/22", "date-like"), ("10/14/87", "date-like"), ("13/40", "measurement"),
    ("120/80", "measurement"), ("40mg", "measurement"), ("98%", "measurement"), ("90-104", "measurement"),
    ("58", "number"), ("1.8", "number"), ("1992", "number"),
    ("MAE", "abbreviation"), ("s/p", "abbreviation"), ("a&o", "abbreviation"),
    ("BRINDLECOMBE", "upper-case word"), ("Brindlecombe", "capitalised word"), ("lethargic", "lower-case word"), (".", "other"),
])
def test_token_kinds(tok, kind):
    assert token_kind(tok) == kind and kind in _TOKEN_KINDS


def _gold_and_system():
    """The system finds SMITH, misses GH and 7/22, and flags the time and the blood pressure."""
    text = "SEEN BY DR SMITH AT 0600, BP 120/80. TO GH 7/22."
    gold = Document("a", text, [Span(11, 16, "NAME", "DOCTOR", "SMITH"), Span(40, 42, "LOCATION", "HOSPITAL", "GH"),
                                Span(43, 47, "DATE", "DATE", "7/22")])
    sys_ = Document("a", text, [Span(11, 16, "NAME", "DOCTOR", "SMITH"), Span(20, 24, "DATE", "DATE", "0600"),
                                Span(29, 35, "DATE", "DATE", "120/80")])
    return gold, sys_


def test_error_counts_add_up_to_the_scorer_and_name_kinds_and_types():
    gold, sys_ = _gold_and_system()
    errs = error_tokens([gold], [sys_])
    p, r, _ = binary_token_prf([gold], [sys_])
    assert errs.tp == 1 and errs.fp == 3 and errs.fn == 3  # 7/22 and 120/80 are two scorer tokens each
    assert abs(p - errs.tp / (errs.tp + errs.fp)) < 1e-12 and abs(r - errs.tp / (errs.tp + errs.fn)) < 1e-12
    assert errs.fp_kind == {"time": 1, "measurement": 2}
    assert errs.fn_type == {"HOSPITAL": 1, "DATE": 2}
    rows = {r["type"]: r for r in errs.fn_rows()}
    assert rows["DATE"]["miss_rate"] == 1.0 and rows["HOSPITAL"]["gold_tokens"] == 1
    assert errs.fp_rows()[0] == {"kind": "measurement", "false_positives": 2, "share": 2 / 3}


def test_grouped_token_counts_split_the_scorer_counts_by_holding_token():
    gold, sys_ = _gold_and_system()
    known = {"SEEN", "BY", "DR", "AT", "BP", "TO", "GH"}
    c = grouped_token_counts([gold], [sys_], lambda t: "in" if t in known else "out")
    # SMITH (tp), 7/22 (2 fn), 0600 and 120/80 (3 fp) are out of the set; GH (fn) is in it
    assert (c["out"]["tp"], c["out"]["fp"], c["out"]["fn"]) == (1, 3, 2)
    assert (c["in"]["tp"], c["in"]["fp"], c["in"]["fn"]) == (0, 0, 1) and c["in"]["recall"] == 0.0
    assert c["out"]["precision"] == pytest.approx(1 / 4) and c["out"]["recall"] == pytest.approx(1 / 3)
    p, r, _ = binary_token_prf([gold], [sys_])
    tp, fp, fn = (sum(g[k] for g in c.values()) for k in ("tp", "fp", "fn"))
    assert (tp / (tp + fp), tp / (tp + fn)) == pytest.approx((p, r))
    # a missing system document counts every gold token as missed
    c = grouped_token_counts([gold], [], lambda t: "all")
    assert c["all"]["fn"] == 4 and c["all"]["tp"] == 0
