"""A linear-chain conditional random field over tagger emissions (Lafferty et al. 2001;
the output layer of Lample et al. 2016 used by the friedrich and ahmed taggers).

Score of a tag sequence y for emissions E (length n):
``start[y_1] + Σ_i E[i, y_i] + Σ_{i>1} trans[y_{i-1}, y_i] + end[y_n]``;
the negative log-likelihood is ``log Z − score(y)`` with ``log Z`` from the forward
algorithm in log space; decoding is Viterbi. Masks must be left-aligned (a prefix of
True per sentence; every sentence has at least one token).

The parameters are plain ``nn.Parameter`` tensors and :meth:`CRF.nll` returns one value
per sentence (``reduction="none"``), which per-sample-gradient machinery (DP-SGD) needs.

Constrained transitions (``labels=...``): for BIO and BIOES label sets the transitions a
well-formed tag sequence cannot take (``O → I-X``, ``B-X → O``, ``I-X → I-Y``, a sequence
starting with ``I-``/``E-`` or ending with ``B-``/``I-``, ...) get a fixed score of −10⁴,
a non-trainable buffer added to the learned scores in the forward algorithm, the gold
score and Viterbi (as AllenNLP's ``_allowed_transitions``; Lample et al.'s CRF learns them).
Why: with the thesis's 113 BIOES×TYPE labels the char-GRU-CRF taggers sat in an all-``O``
phase at cpu scale; the CRF had to learn ~12k (113²) transition scores before a PHI path
could beat ``O…O``. With the constraints the same model leaves that phase within a few
epochs (the measurements are in CHANGELOG.md, "Measurements behind design choices"). IO
label sets have nothing to constrain. The constraint is a buffer, so per-sample gradients (DP-SGD) are unchanged in
form: disallowed entries receive (numerically) zero gradient.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

__all__ = ["CRF"]

#: score of a disallowed transition (finite: keeps logsumexp and its gradient free of NaN)
DISALLOWED = -1e4
#: below this a scaled forward sum is recomputed exactly (see :meth:`CRF.log_partition`)
_TINY = 1e-20


def _allowed_transitions(labels: list[str] | tuple[str, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Boolean masks (transitions [L, L] from→to, start [L], end [L]) of the moves a
    well-formed BIO/BIOES sequence may make; everything is allowed for IO label sets.

    Labels are ``"O"`` or ``"<prefix>-<type>"`` with prefix B/I/E/S. BIOES: after O/E/S
    comes O, B-* or S-*; after B-X/I-X comes I-X or E-X; start O/B/S; end O/E/S. BIO:
    I-X only after B-X or I-X, and not at the start."""
    L = len(labels)
    parts = [(lab.split("-", 1) + [""])[:2] if lab != "O" else ["O", ""] for lab in labels]
    prefixes = {p for p, _ in parts}
    trans = torch.ones(L, L, dtype=torch.bool)
    start = torch.ones(L, dtype=torch.bool)
    end = torch.ones(L, dtype=torch.bool)
    if prefixes & {"E", "S"}:  # BIOES
        for i, (pi, ti) in enumerate(parts):
            for j, (pj, tj) in enumerate(parts):
                inside = pi in ("B", "I")
                trans[i, j] = (pj in ("I", "E") and tj == ti) if inside else pj in ("O", "B", "S")
            start[i] = pi in ("O", "B", "S")
            end[i] = pi in ("O", "E", "S")
    elif "B" in prefixes:  # BIO
        for i, (pi, ti) in enumerate(parts):
            for j, (pj, tj) in enumerate(parts):
                trans[i, j] = pj != "I" or (pi in ("B", "I") and ti == tj)
            start[i] = pi != "I"
    return trans, start, end


def _viterbi_plan(allowed: torch.Tensor) -> tuple[list[tuple[torch.Tensor, torch.Tensor, bool]], torch.Tensor]:
    """How a Viterbi step maximises over the allowed predecessors only (``allowed`` [L, L],
    from → to): ``(groups, order)``. Tags that share one set of predecessors form a *dense*
    group ``(cols, preds [K], True)`` (a [B, Lg, K] maximum); the other tags are grouped by their
    number of predecessors into *sparse* groups ``(cols, preds [Lg, K], False)`` (K gathers and
    element-wise maxima). ``order`` puts the groups' concatenated columns back in tag order.
    BIOES: O/B-*/S-* share {O, E-*, S-*} (dense), I-X/E-X have {B-X, I-X} (sparse, K = 2)."""
    by_set: dict[tuple[int, ...], list[int]] = {}
    for j in range(allowed.shape[1]):
        by_set.setdefault(tuple(allowed[:, j].nonzero().squeeze(1).tolist()), []).append(j)
    groups: list[tuple[torch.Tensor, torch.Tensor, bool]] = []
    by_degree: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    for preds, cols in by_set.items():
        if len(cols) > 1 and len(preds) > 2:
            groups.append((torch.tensor(cols), torch.tensor(preds), True))
        else:
            for j in cols:
                by_degree.setdefault(len(preds), []).append((j, preds))
    for _, rows in sorted(by_degree.items()):
        groups.append((torch.tensor([j for j, _ in rows]), torch.tensor([p for _, p in rows]), False))
    return groups, torch.argsort(torch.cat([cols for cols, _, _ in groups]))


class CRF(nn.Module):
    # the constraint scores: buffers of a constrained CRF, None otherwise (see constraint_biases)
    trans_bias: torch.Tensor | None
    start_bias: torch.Tensor | None
    end_bias: torch.Tensor | None
    viterbi_allowed: torch.Tensor

    def __init__(self, num_tags: int, labels: list[str] | tuple[str, ...] | None = None) -> None:
        super().__init__()
        self.num_tags = num_tags
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags).uniform_(-0.1, 0.1))
        self.start = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.end = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        if labels is not None and len(labels) != num_tags:
            raise ValueError(f"{len(labels)} labels for a CRF over {num_tags} tags")
        masks = _allowed_transitions(labels) if labels is not None else None
        self.constrained = masks is not None and not all(bool(m.all()) for m in masks)
        for name, i in (("trans_bias", 0), ("start_bias", 1), ("end_bias", 2)):
            if masks is not None and self.constrained:
                bias = torch.zeros(masks[i].shape).masked_fill(~masks[i], DISALLOWED)
                self.register_buffer(name, bias, persistent=False)
            else:
                setattr(self, name, None)
        # Viterbi treats a disallowed move as impossible (-inf) and maximises over the allowed
        # predecessors only (see decode)
        allowed = masks[0] if masks is not None and self.constrained else torch.ones(num_tags, num_tags, dtype=torch.bool)
        self.register_buffer("viterbi_allowed", allowed, persistent=False)
        self._viterbi_plan = _viterbi_plan(allowed)

    def _scores(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Learned transition/start/end scores plus the fixed constraint scores."""
        if not self.constrained:
            return self.transitions, self.start, self.end
        trans_bias, start_bias, end_bias = self.constraint_biases()
        return self.transitions + trans_bias, self.start + start_bias, self.end + end_bias

    def constraint_biases(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The fixed constraint scores (transitions, start, end) of a constrained CRF."""
        if self.trans_bias is None or self.start_bias is None or self.end_bias is None:
            raise RuntimeError("an unconstrained CRF has no constraint scores")
        return self.trans_bias, self.start_bias, self.end_bias

    @torch.no_grad()
    def invalid_paths(self, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Which gold sequences [B] take a disallowed move (always all False when the CRF is
        unconstrained). Such a sequence would cost ~10⁴ per bad move; trainers check first.
        The answer is on the CRF's device (tags and mask may come from the CPU)."""
        B, T = tags.shape
        dev = self.transitions.device
        if not self.constrained:
            return torch.zeros(B, dtype=torch.bool, device=dev)
        trans_bias, start_bias, end_bias = self.constraint_biases()
        tags, mask = tags.to(dev).clamp(min=0), mask.to(dev)
        bad = start_bias[tags[:, 0]] < 0
        if T > 1:
            bad |= ((trans_bias[tags[:, :-1], tags[:, 1:]] < 0) & mask[:, 1:]).any(1)
        last = mask.long().sum(1) - 1
        return bad | (end_bias[tags.gather(1, last.unsqueeze(1)).squeeze(1)] < 0)

    def score(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Unnormalised score of ``tags`` [B, T] (padding entries ignored), shape [B]."""
        B, T, _ = emissions.shape
        transitions, start, end = self._scores()
        tags = tags.clamp(min=0)
        m = mask.to(emissions.dtype)
        em = emissions.gather(2, tags.unsqueeze(-1)).squeeze(-1)  # [B, T]
        s = start[tags[:, 0]] + (em * m).sum(1)
        if T > 1:
            tr = transitions[tags[:, :-1], tags[:, 1:]]  # [B, T-1]
            s = s + (tr * m[:, 1:]).sum(1)
        last = mask.long().sum(1) - 1
        return s + end[tags.gather(1, last.unsqueeze(1)).squeeze(1)]

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """log Z per sentence, [B] (forward algorithm).

        Each step ``α'_j = logsumexp_i(α_i + A_ij) + E_tj`` is computed as a matrix product
        in scaled probability space (the usual trick of HMM forward passes, e.g. Rabiner
        1989 §V.A): ``α'_j = m + c_j + log Σ_i exp(α_i − m)·exp(A_ij − c_j) + E_tj`` with
        ``m = max_i α_i`` and ``c_j = max_i A_ij``, so per step B·L exponentials and one
        [B, L] × [L, L] product instead of B·L² exponentials (which, for the −10⁴
        disallowed moves, hit the slow underflow path of ``exp``: 75% of a training step
        before). Arguments of ``exp`` are clamped at −80 (a term e⁻⁸⁰ is below float32
        resolution next to the largest term, 1) and disallowed moves get exactly 0.
        Where a sum underflows (every allowed predecessor of a tag more than ~46 nats below
        the best, ``sum < 1e-20``), that entry is recomputed with the exact
        ``logsumexp`` of the plain recursion, so the result equals it to float rounding
        in every case; the choice is per entry, so no sentence's value depends on another's.
        The last step is ``max + log Σ exp(· − max)`` written out with the maximum detached:
        ``torch.logsumexp``'s value, but the gradient ``exp(x − max) / Σ`` instead of
        ``exp(x − log Z)``, whose argument loses |log Z|·eps to cancellation (a long sentence
        has |log Z| ~ 10³: a marginal near 1 comes out ~1e-5 off, the size of the whole gradient
        ``marginal − gold`` of a well-fitted sentence, and float32 per-sentence gradients up to 17 %
        off float64; this form keeps them within 0.3 %, ``tests/models/test_crf.py``).
        """
        transitions, start, end = self._scores()
        c = transitions.amax(0)  # [L]
        et = torch.exp((transitions - c).clamp(min=-80.0))
        if self.constrained:
            et = et.masked_fill(self.constraint_biases()[0] < 0, 0.0)
        alpha = start + emissions[:, 0]  # [B, L]
        for t in range(1, emissions.shape[1]):
            m = alpha.amax(1, keepdim=True)
            s = torch.exp((alpha - m).clamp(min=-80.0)) @ et
            ok = s > _TINY
            nxt = torch.log(torch.where(ok, s, 1.0)) + m + c + emissions[:, t]
            if not bool(ok.all()):
                exact = torch.logsumexp(alpha.unsqueeze(2) + transitions.unsqueeze(0), dim=1) + emissions[:, t]
                nxt = torch.where(ok, nxt, exact)
            alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
        last = alpha + end  # log Z = max + log Σ exp(· − max): torch.logsumexp's value, but its
        top = last.amax(1, keepdim=True).detach()  # gradient exp(x − max) / Σ, not exp(x − log Z)
        return (top + torch.log(torch.exp(last - top).sum(1, keepdim=True))).squeeze(1)

    def marginals(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Posterior tag marginals P(y_t = k | x), [B, T, L] (zero at padding).

        Computed as ∂ log Z / ∂ emissions (the forward–backward identity for linear-chain
        CRFs: the gradient of the log-partition with respect to a unary score is that
        unary's marginal), so it is exact and shares the forward pass with training. Rows
        sum to 1 at real tokens; a disallowed move (constrained CRF) gets probability ~0.
        """
        with torch.enable_grad():
            em = emissions.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(self.log_partition(em, mask).sum(), em)
        return grad * mask.unsqueeze(-1).to(grad.dtype)

    def nll(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
        """Negative log-likelihood of the gold ``tags``; ``reduction`` none | sum | mean."""
        out = self.log_partition(emissions, mask) - self.score(emissions, tags, mask)
        if reduction == "none":
            return out
        if reduction == "sum":
            return out.sum()
        if reduction == "mean":
            return out.mean()
        raise ValueError(f"unknown reduction {reduction!r}")

    @torch.no_grad()
    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """Viterbi best path per sentence, unpadded.

        A disallowed move, start or end of a constrained CRF is impossible here (score −∞, not
        −10⁴), so a decoded path is always well-formed. Each step of the forward sweep keeps only the best
        scores, maximising over each tag's allowed predecessors only (:meth:`_viterbi_step`);
        the backtrack recovers each step's best predecessor of the chosen tag only, an
        arg-max over [B, L], for the whole batch at once."""
        B, T, L = emissions.shape
        transitions, start, end = self._scores()
        if self.constrained:
            _, start_bias, end_bias = self.constraint_biases()
            transitions = transitions.masked_fill(~self.viterbi_allowed, float("-inf"))
            start = start.masked_fill(start_bias < 0, float("-inf"))
            end = end.masked_fill(end_bias < 0, float("-inf"))
        step = self._viterbi_step(transitions)
        score = start + emissions[:, 0]
        scores = [score]
        for t in range(1, T):
            score = torch.where(mask[:, t].unsqueeze(1), step(score) + emissions[:, t], score)
            scores.append(score)
        y = (score + end).argmax(1)  # [B]
        path = [y]
        for t in range(T - 1, 0, -1):  # padding steps keep the tag (the identity move)
            prev = (scores[t - 1] + transitions[:, y].t()).argmax(1)
            y = torch.where(mask[:, t], prev, y)
            path.append(y)
        rows = torch.stack(path[::-1], 1).tolist()
        return [row[:n] for row, n in zip(rows, mask.long().sum(1).tolist())]

    def _viterbi_step(self, transitions: torch.Tensor):
        """The Viterbi step ``score [B, L] ↦ max_i (score_i + transitions[i, j])`` [B, L], the
        maximum taken over each tag's allowed predecessors only (:func:`_viterbi_plan`): the
        same finite candidates as the full [B, L, L] maximum with −∞ at disallowed moves, so
        the same values, with 3.8x fewer candidates for 113 BIOES tags (the decode 1.2x
        faster, ``benchmarks/torch_paths.py``); an unconstrained CRF is one dense group, the
        full maximum. The ``amax`` runs over a [B, L(cur), K(prev)] layout, whose reduction
        is over contiguous memory (~4× faster on CPU than ``max`` over the previous-tag axis)."""
        groups, order = self._viterbi_plan
        dev = transitions.device
        parts: list[tuple[Any, Any, bool]] = []  # dense: tensors; sparse: lists of tensors
        for cols, preds, dense in groups:
            cols, preds = cols.to(dev), preds.to(dev)
            if dense:  # [Lg(cur), K(prev)]
                parts.append((preds, transitions[preds][:, cols].t().contiguous(), True))
            else:
                parts.append(([preds[:, k] for k in range(preds.shape[1])],
                              [transitions[preds[:, k], cols] for k in range(preds.shape[1])], False))
        order = order.to(dev)

        def step(score: torch.Tensor) -> torch.Tensor:
            out = []
            for preds, w, dense in parts:
                if dense:
                    out.append((score.index_select(1, preds).unsqueeze(1) + w).amax(2))
                else:
                    m = score.index_select(1, preds[0]) + w[0]
                    for p, wk in zip(preds[1:], w[1:]):
                        m = torch.maximum(m, score.index_select(1, p) + wk)
                    out.append(m)
            return torch.cat(out, 1).index_select(1, order)
        return step
