"""The festag strategies on Flower (``flwr``): B round robin, C DSSGD (with or without
Shokri & Shmatikov's DP upload) and FedAvg as server logic on Flower's Grid and a
:class:`~flwr.clientapp.ClientApp` per site.

* :func:`flower_simulate` — the same apps in one process (:class:`LoopbackGrid`);
  bit-identical to :func:`deidlib.collaborative.simulate` for B and C.
* ``python -m deidlib.collaborative.flower`` — the Flower App for ``flower-superlink`` /
  ``flower-supernode`` / ``flwr run`` (real processes over gRPC), see :mod:`.app`.

Needs the ``flower`` extra (``pip install 'deidlib[flower]'``).
"""

from .engine import flower_simulate

__all__ = ["flower_simulate"]
