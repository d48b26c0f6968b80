"""What one DSSGD worker uploads after its local epoch — the site-side half of Figure 5
(the one copy: the in-process simulator and the Flower client app both call it).

Festag & Spreckelsen (JMIR Form Res 2020), Figure 5, upload lines: threshold at τ, clip
to [-γ, γ], sample θ_u·|p| non-zero entries (:func:`~deidlib.collaborative.dssgd.threshold_and_clip`,
:func:`~deidlib.collaborative.dssgd.select_upload`); or, with ``dp_epsilon``, Shokri &
Shmatikov's SVT selection with Laplace values
(:func:`~deidlib.collaborative.dp_upload.dp_select_upload`), charged to the site's
ledger, which stops the uploads once its budget is spent. The same calls, in the same
order on the same generator, as ``DSSGD._worker_epoch`` of the in-process simulator
(:mod:`deidlib.collaborative.strategies`); the equivalence test
(``tests/collaborative/test_flower.py``) fails if the two drift apart. It lives outside
:mod:`deidlib.collaborative.flower` (no Flower import) so that the simulator can call it too.
"""

from __future__ import annotations

import torch

from .dp_upload import UploadLedger, dp_select_upload
from .dssgd import Selection, UploadBase, select_upload, threshold_and_clip

__all__ = ["worker_upload"]


def worker_upload(
    update: torch.Tensor,
    *,
    theta_u: float,
    gamma: float,
    tau: float,
    generator: torch.Generator,
    selection: Selection = "random",
    base: UploadBase = "parameters",
    dp_epsilon: float | None = None,
    ledger: UploadLedger | None = None,
    epoch: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(indices, values)`` of the entries of ``update`` that leave the site."""
    if dp_epsilon is not None:
        if ledger is None:
            raise ValueError("a DP upload needs the site's privacy ledger")
        if not ledger.can_spend(dp_epsilon):
            return torch.empty(0, dtype=torch.long), update.new_empty(0)
        up = dp_select_upload(update, theta_u=theta_u, gamma=gamma, tau=tau, epsilon=dp_epsilon,
                              generator=generator)
        ledger.spend(up.epsilon, epoch=epoch, uploaded=int(up.indices.numel()))
        return up.indices, up.values
    clipped = threshold_and_clip(update, tau, gamma)
    idx = select_upload(clipped, theta_u, generator=generator, selection=selection, base=base)
    return idx, clipped[idx]
