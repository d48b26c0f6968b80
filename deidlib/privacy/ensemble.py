"""The DP ensemble of the ahmed thesis (chapter 5, §5.1–5.2, Definition 5.1.1).

Published DP models ("DP-Models") each predict, for every token, whether it is PHI; the
*ensemble network* aggregates their binary votes. Members may use different label sets
(i2b2 subtypes, categories, binary), so aggregation is on *binary* PHI per token (§5.1.1).

Rules (``count`` = number of members voting PHI for a token, ``n`` = members):

``minimality``  PHI iff ``count >= 1`` (Definition 5.1.1; the thesis' rule, recall first)
``majority``    PHI iff ``count > n / 2`` (strict: a tie is *not* PHI; ``majority_ties="phi"``
                counts a tie as PHI)
``k_of_n``      PHI iff ``count >= k`` (``k = 1`` is minimality, ``k = n`` unanimity)

Document level: members' predicted spans are put on one shared tokenization, the scorer's
alphanumeric tokens (``deidlib.evaluation.keys.TOKEN_RE``, the units ``binary_token_prf``
counts); a member votes PHI for a token its spans overlap by a character (a choice: the thesis
aggregates per token of the tokenizer its members share). The aggregated document gets one span
per maximal run of PHI tokens, with the most frequent subtype of the members' overlapping spans
(ties: the earlier member), so category-level information survives when members agree.

Privacy of the ensemble (:func:`ensemble_guarantee`): each member is (ε_i, δ_i)-DP with
respect to its own training set *for its privacy unit* (a sentence, or a patient with all
of their sentences); aggregation only post-processes the published models (no extra cost).
The ensemble's guarantee is stated for the members' common unit, and only for it:

* members DP per **sentence** give an ensemble that is DP per sentence. If the members'
  training sets are disjoint, one sentence affects at most one member, so by parallel
  composition the ensemble is (max ε_i, max δ_i)-DP per sentence; otherwise basic sequential
  composition (Σ ε_i, Σ δ_i) per sentence (``disjoint=False``). This says nothing about a
  *person*, whose many sentences may each change the model (group privacy would multiply ε
  by their number of sentences).
* members DP per **patient** give (max ε_i, max δ_i)-DP per patient when the training sets
  hold disjoint patients (different hospitals, as in the thesis' scenarios: one person's
  records affect at most one member), and (Σ ε_i, Σ δ_i) per patient otherwise.

Members with different units are refused (the weaker unit, the sentence, would be the only
honest statement and must be asked for explicitly by passing that unit). The thesis states
the guarantee only informally (§5.2 Step 1: "the parameters do not reveal anything new"),
per person, while its members are DP per sequence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus.document import Document, Span
from ..corpus.phi import TYPE_TO_CATEGORY
from ..evaluation import binary_token_prf
from ..evaluation.keys import TOKEN_RE

__all__ = ["aggregate_documents", "rule_scores", "ensemble_guarantee", "Guarantee"]

RULES = ("minimality", "majority", "k_of_n")


def _threshold(rule: str, n: int, k: int | None, majority_ties: str) -> int:
    if n < 1:
        raise ValueError("the ensemble needs at least one member")
    if rule == "minimality":
        return 1
    if rule == "majority":
        if majority_ties not in ("not_phi", "phi"):
            raise ValueError(f"majority_ties must be 'not_phi' or 'phi' (got {majority_ties!r})")
        return n // 2 + 1 if majority_ties == "not_phi" or n % 2 else n // 2
    if rule == "k_of_n":
        if k is None or not 1 <= k <= n:
            raise ValueError(f"k_of_n needs 1 <= k <= n = {n} (got k={k})")
        return int(k)
    raise ValueError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")


def _aggregate_votes(
    votes, rule: str = "minimality", *, k: int | None = None, majority_ties: str = "not_phi"
) -> np.ndarray:
    """Aggregate binary PHI votes ``[n_members, n_tokens]`` (bool/0-1) into one bool per token."""
    v = np.asarray(votes)
    if v.ndim != 2:
        raise ValueError(f"votes must be [members, tokens], got shape {v.shape}")
    if v.size and not np.isin(v, (0, 1)).all():
        raise ValueError("votes must be binary (0/1 or bool)")
    need = _threshold(rule, v.shape[0], k, majority_ties)
    return v.astype(np.int64).sum(0) >= need


def _token_grid(text: str) -> list[tuple[int, int]]:
    """The shared tokenization: (start, end) of the scorer's alphanumeric tokens of ``text``."""
    return [(m.start(), m.end()) for m in TOKEN_RE.finditer(text)]


def _document_votes(grid: Sequence[tuple[int, int]], spans: Sequence[Span]) -> np.ndarray:
    """Bool per grid token: does any span overlap it (at least one character)?"""
    out = np.zeros(len(grid), dtype=bool)
    if not grid or not spans:
        return out
    starts = np.array([a for a, _ in grid])
    ends = np.array([b for _, b in grid])
    for s in spans:
        out |= (starts < s.end) & (ends > s.start)
    return out


def _check_members(members: Sequence[Sequence[Document]]) -> list[dict[str, Document]]:
    if not members:
        raise ValueError("the ensemble needs at least one member")
    first = members[0]
    ids = [d.id for d in first]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate document ids in member 0")
    by = []
    for m, docs in enumerate(members):
        d = {x.id: x for x in docs}
        if set(d) != set(ids) or len(d) != len(docs):
            raise ValueError(
                f"member {m} predicts documents {sorted(set(d) ^ set(ids))[:5]} that differ from member 0's"
            )
        for x in first:
            if d[x.id].text != x.text:
                raise ValueError(f"member {m}: text of document {x.id!r} differs from member 0's")
        by.append(d)
    return by


def aggregate_documents(
    members: Sequence[Sequence[Document]],
    rule: str = "minimality",
    *,
    k: int | None = None,
    majority_ties: str = "not_phi",
) -> list[Document]:
    """Aggregate the members' predicted documents (same ids and texts, any order) into one
    prediction per document (order of member 0), binary PHI per shared token."""
    by = _check_members(members)
    out = []
    for doc in members[0]:
        grid = _token_grid(doc.text)
        member_spans = [by[m][doc.id].spans for m in range(len(by))]
        votes = (
            np.stack([_document_votes(grid, sp) for sp in member_spans])
            if grid
            else np.zeros((len(by), 0), bool)
        )
        phi = _aggregate_votes(votes, rule, k=k, majority_ties=majority_ties)
        spans = []
        i = 0
        while i < len(grid):
            if not phi[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(grid) and phi[j + 1]:
                j += 1
            a, b = grid[i][0], grid[j][1]
            c: Counter = Counter()
            order: dict[str, int] = {}
            for m, sp in enumerate(member_spans):
                for s in sp:
                    if s.start < b and s.end > a and s.subtype in TYPE_TO_CATEGORY:
                        c[s.subtype] += 1
                        order.setdefault(s.subtype, m)
            sub = min(c, key=lambda t: (-c[t], order[t])) if c else "OTHER"
            spans.append(Span.of(doc.text, a, b, sub))
            i = j + 1
        out.append(doc.with_spans(spans))
    return out


def rule_scores(
    gold_docs: Sequence[Document],
    members: Sequence[Sequence[Document]],
    rules: Sequence[tuple[str, int | None]] | None = None,
) -> dict[str, tuple[float, float, float]]:
    """Binary-token (P, R, F1) of every rule — the precision/recall trade-off of §5.4.
    ``rules`` default: minimality, majority and every k of n."""
    n = len(members)
    rules = rules or [("minimality", None), ("majority", None), *[("k_of_n", k) for k in range(1, n + 1)]]
    out = {}
    for rule, k in rules:
        name = rule if k is None else f"{k}_of_{n}"
        out[name] = binary_token_prf(gold_docs, aggregate_documents(members, rule, k=k))
    return out


#: privacy units a guarantee can be stated for (those of :data:`deidlib.privacy.dpsgd.UNITS`)
_GUARANTEE_UNITS = ("sentence", "patient")


@dataclass(frozen=True)
class Guarantee:
    """(ε, δ)-DP with respect to adding or removing one ``unit`` (a sentence, or a patient
    with all of their sentences), obtained by ``composition`` of the members' guarantees."""

    epsilon: float
    delta: float
    composition: str  # "parallel" | "sequential"
    unit: str

    def __str__(self) -> str:
        return f"({self.epsilon:.4g}, {self.delta:.3g})-DP per {self.unit} by {self.composition} composition"


def ensemble_guarantee(
    members: Sequence[tuple[float, float, str]], *, disjoint: bool = True
) -> Guarantee:
    """Overall (ε, δ) of an ensemble of members, each ``(ε_i, δ_i, unit_i)``: (ε_i, δ_i)-DP
    w.r.t. one ``unit_i`` of its own training data. All members must share the unit; the
    result is stated for that unit. ``disjoint``: no unit (sentence or patient) is in two
    members' training sets, giving parallel composition (max); otherwise basic sequential
    composition (sum). Aggregating predictions is post-processing and costs nothing."""
    if not members:
        raise ValueError("the ensemble needs at least one member")
    units = set()
    for m in members:
        if len(m) != 3:
            raise ValueError(f"a member is (ε, δ, unit), got {m!r}: the guarantee must name its privacy unit")
        e, d, u = m
        if not (e >= 0 and 0 <= d < 1):
            raise ValueError(f"invalid member guarantee (ε={e}, δ={d})")
        if u not in _GUARANTEE_UNITS:
            raise ValueError(f"unknown privacy unit {u!r}; choose one of {', '.join(_GUARANTEE_UNITS)}")
        units.add(u)
    if len(units) > 1:
        raise ValueError(
            f"members are DP for different units ({', '.join(sorted(units))}): no single guarantee; "
            "state the weaker one (per sentence) explicitly"
        )
    unit = units.pop()
    es = [float(e) for e, _, _ in members]
    ds = [float(d) for _, d, _ in members]
    if disjoint:
        return Guarantee(max(es), max(ds), "parallel", unit)
    return Guarantee(sum(es), min(1.0, sum(ds)), "sequential", unit)
