"""Is the GRU taggers' roofline gap torch's autograd bookkeeping, or the per-step work itself?
A hand-written GRU layer (:class:`GRUFn`: one matrix product for every time step's input
projection, per step one ``addmm`` and a few in-place element-wise ops, and a hand-written
backward through time whose weight gradients are two large products at the end) timed side by
side with ``nn.GRU`` (torch's CPU GRU: a per-step loop under autograd), forward + backward,
alternating ``torch, ours, torch, ours``, medians over about ``--seconds`` each.

The layer follows torch's GRU equations exactly (``r, z = σ(W_i x + b_i + W_h h + b_h)``,
``n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))``, ``h' = n + z ⊙ (h − n)``); a float64
``gradcheck`` and the forward difference to ``nn.GRU`` are printed first. It is a measurement,
not a layer the library uses. Third column, since stop 22: the layer the library does use, the
compiled one of :mod:`deidlib.models.fused_gru` (the same equations in C++: per step one
``mm`` and plain loops over the gates; skipped where it is not built).

    OMP_NUM_THREADS=1 python benchmarks/gru_manual.py
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

from deidlib.models import fused_gru
from deidlib.models.flops import matmul_gflops, rnn_flops


class GRUFn(torch.autograd.Function):
    """One unidirectional GRU layer, batch-first input [B, T, D], initial state h0 [B, H]."""

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh):
        bsz, steps, inp = x.shape
        hid = w_hh.shape[1]
        # every step's input projection in one product, time-major [T, B, 3H]
        gi = torch.addmm(b_ih, x.reshape(bsz * steps, inp), w_ih.t()).view(bsz, steps, 3 * hid)
        gi = gi.transpose(0, 1).contiguous()
        hs = x.new_empty(steps + 1, bsz, hid)
        hs[0] = h0
        rz = x.new_empty(steps, bsz, 2 * hid)
        ns = x.new_empty(steps, bsz, hid)
        ghn = x.new_empty(steps, bsz, hid)
        whh_t = w_hh.t()
        for t in range(steps):
            gh = torch.addmm(b_hh, hs[t], whh_t)
            gates = torch.sigmoid(gi[t, :, : 2 * hid] + gh[:, : 2 * hid], out=rz[t])
            ghn[t] = gh[:, 2 * hid:]
            n = torch.tanh(torch.addcmul(gi[t, :, 2 * hid:], gates[:, :hid], ghn[t]), out=ns[t])
            torch.addcmul(n, gates[:, hid:], hs[t] - n, out=hs[t + 1])  # h' = n + z (h - n)
        ctx.save_for_backward(x, w_ih, w_hh, hs, rz, ns, ghn)
        return hs[1:].transpose(0, 1)

    @staticmethod
    def backward(ctx, gout):
        x, w_ih, w_hh, hs, rz, ns, ghn = ctx.saved_tensors
        bsz, steps, inp = x.shape
        hid = w_hh.shape[1]
        gout = gout.transpose(0, 1)  # [T, B, H]
        d_gi = x.new_empty(steps, bsz, 3 * hid)  # gradients of the input-side pre-activations
        d_gh = x.new_empty(steps, bsz, 3 * hid)  # ... and of the hidden-side ones (n part differs: × r)
        dh = x.new_zeros(bsz, hid)
        for t in range(steps - 1, -1, -1):
            dh = dh + gout[t]
            r, z, n = rz[t, :, :hid], rz[t, :, hid:], ns[t]
            d_an = dh * (1 - z) * (1 - n * n)
            d_gi[t, :, :hid] = d_an * ghn[t] * r * (1 - r)
            d_gi[t, :, hid:2 * hid] = dh * (hs[t] - n) * z * (1 - z)
            d_gi[t, :, 2 * hid:] = d_an
            d_gh[t, :, : 2 * hid] = d_gi[t, :, : 2 * hid]
            d_gh[t, :, 2 * hid:] = d_an * r
            dh = torch.addmm(dh * z, d_gh[t], w_hh)
        flat_i = d_gi.transpose(0, 1).reshape(bsz * steps, 3 * hid)
        flat_h = d_gh.reshape(steps * bsz, 3 * hid)
        dx = (flat_i @ w_ih).view(bsz, steps, inp)
        return (dx, dh, flat_i.t() @ x.reshape(bsz * steps, inp), flat_h.t() @ hs[:-1].reshape(steps * bsz, hid),
                flat_i.sum(0), flat_h.sum(0))


def check() -> None:
    torch.manual_seed(0)
    g = nn.GRU(7, 5, batch_first=True).double()
    x = torch.randn(3, 4, 7, dtype=torch.double, requires_grad=True)
    h0 = torch.randn(3, 5, dtype=torch.double, requires_grad=True)
    args = (x, h0, g.weight_ih_l0, g.weight_hh_l0, g.bias_ih_l0, g.bias_hh_l0)
    diff = (g(x, h0.unsqueeze(0))[0] - GRUFn.apply(*args)).abs().max().item()
    ok = torch.autograd.gradcheck(GRUFn.apply, args)
    print(f"float64 check: forward max |difference| to nn.GRU {diff:.1e}, gradcheck {'passed' if ok else 'FAILED'}")


def bench(batch: int, steps: int, inp: int, hidden: int, seconds: float, peak: float) -> None:
    torch.manual_seed(0)
    g = nn.GRU(inp, hidden, batch_first=True)
    x = torch.randn(batch, steps, inp, requires_grad=True)
    h0 = torch.zeros(batch, hidden)

    def torch_gru():
        x.grad = None
        g.zero_grad(set_to_none=True)
        g(x)[0].sum().backward()

    def ours():
        x.grad = None
        g.zero_grad(set_to_none=True)
        GRUFn.apply(x, h0, g.weight_ih_l0, g.weight_hh_l0, g.bias_ih_l0, g.bias_hh_l0).sum().backward()

    def compiled():
        x.grad = None
        g.zero_grad(set_to_none=True)
        fused_gru.gru_layer(x, h0, g.weight_ih_l0, g.weight_hh_l0, g.bias_ih_l0, g.bias_hh_l0)[0].sum().backward()

    runs = [("nn.GRU", torch_gru), ("manual", ours)] + ([("compiled", compiled)] if fused_gru.available() else [])
    times: dict[str, list[float]] = {name: [] for name, _ in runs}
    for _ in range(2):
        for name, fn in runs:
            fn()
            end = time.perf_counter() + seconds / 2
            while time.perf_counter() < end:
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    flops = 3 * rnn_flops(3, inp, hidden, batch * steps)
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    print(f"[{batch} x {steps}] {inp} -> {hidden}: " + ", ".join(
        f"{k} {1e3 * v:.2f} ms ({flops / v / 1e9:.1f} GFLOP/s, {100 * flops / v / 1e9 / peak:.1f} % of peak)"
        for k, v in med.items()) + f"; nn.GRU / manual time {med['nn.GRU'] / med['manual']:.2f}x"
        + (f", nn.GRU / compiled {med['nn.GRU'] / med['compiled']:.2f}x" if "compiled" in med else ""), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    check()
    peak = matmul_gflops(1024, 1024, 1024)
    print(f"threads {torch.get_num_threads()}, matmul peak {peak:.1f} GFLOP/s; forward + backward of one direction")
    # the gru tagger's word GRU (batch 32, mean sentence ~15 tokens, longer ones) and its character GRU
    for shape in ((32, 15, 150, 150), (32, 30, 150, 150), (32, 15, 300, 150), (300, 7, 25, 25)):
        bench(*shape, a.seconds, peak)


if __name__ == "__main__":
    main()
