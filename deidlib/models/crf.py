"""A linear-chain conditional random field over tagger emissions (Lafferty et al. 2001;
the output layer of Lample et al. 2016 used by the friedrich and ahmed taggers).

Score of a tag sequence y for emissions E (length n):
``start[y_1] + Σ_i E[i, y_i] + Σ_{i>1} trans[y_{i-1}, y_i] + end[y_n]``;
the negative log-likelihood is ``log Z − score(y)`` with ``log Z`` from the forward
algorithm in log space; decoding is Viterbi. Masks must be left-aligned (a prefix of
True per sentence; every sentence has at least one token).

The parameters are plain ``nn.Parameter`` tensors and :meth:`CRF.nll` returns one value
per sentence (``reduction="none"``), which per-sample-gradient machinery (DP-SGD) needs.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["CRF"]


class CRF(nn.Module):
    def __init__(self, num_tags: int) -> None:
        super().__init__()
        self.num_tags = num_tags
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags).uniform_(-0.1, 0.1))
        self.start = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.end = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))

    def score(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Unnormalised score of ``tags`` [B, T] (padding entries ignored), shape [B]."""
        B, T, _ = emissions.shape
        tags = tags.clamp(min=0)
        m = mask.to(emissions.dtype)
        em = emissions.gather(2, tags.unsqueeze(-1)).squeeze(-1)  # [B, T]
        s = self.start[tags[:, 0]] + (em * m).sum(1)
        if T > 1:
            tr = self.transitions[tags[:, :-1], tags[:, 1:]]  # [B, T-1]
            s = s + (tr * m[:, 1:]).sum(1)
        last = mask.long().sum(1) - 1
        return s + self.end[tags.gather(1, last.unsqueeze(1)).squeeze(1)]

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """log Z per sentence, [B] (forward algorithm)."""
        alpha = self.start + emissions[:, 0]  # [B, L]
        for t in range(1, emissions.shape[1]):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + self.transitions.unsqueeze(0), dim=1) + emissions[:, t]
            alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
        return torch.logsumexp(alpha + self.end, dim=1)

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
        """Viterbi best path per sentence, unpadded."""
        B, T, L = emissions.shape
        score = self.start + emissions[:, 0]
        history = []
        for t in range(1, T):
            cand = score.unsqueeze(2) + self.transitions.unsqueeze(0)  # [B, L(prev), L(cur)]
            best, idx = cand.max(dim=1)
            nxt = best + emissions[:, t]
            m = mask[:, t].unsqueeze(1)
            score = torch.where(m, nxt, score)
            history.append(torch.where(m, idx, torch.arange(L, device=idx.device).expand(B, L)))
        score = score + self.end
        lengths = mask.long().sum(1).tolist()
        best_last = score.argmax(1)
        paths = []
        hist = torch.stack(history, 1).tolist() if history else []
        for b in range(B):
            y = [int(best_last[b])]
            for t in range(T - 2, -1, -1):
                y.append(hist[b][t][y[-1]])
            y.reverse()
            paths.append(y[: lengths[b]])
        return paths
