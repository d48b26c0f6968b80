"""The library on an accelerator, next to the CPU: training, prediction, the operating-point
curve and DP-SGD run on ``--device`` (default ``cuda``) and on the CPU in one process; the
script checks that they agree and prints the times side by side.

    python benchmarks/device_check.py                      # cuda vs cpu, GRU-CRF on synthetic notes
    python benchmarks/device_check.py --patients 400 --epochs 3

Checks (each printed as ``ok`` or ``FAILED``, exit status 1 if any failed):

* the same weights give the same emissions (to 1e-4) and the same tags on both devices
  (comparisons run with TF32 off: cuDNN's default TF32 RNN and convolution kernels differ
  from the CPU by ~1e-3 in the emissions, which is printed too, as are the tags it gives);
* DP-SGD's clipped per-sentence sums (``micro`` and ``vmap``, eval mode) agree to 1e-4 (eval-mode
  gradients through an RNN need cuDNN off: its RNN backward runs in training mode only;
  ``train_dp`` trains in training mode, where cuDNN is used);
* training's padded LSTM path (:func:`deidlib.models.layers.run_rnn_padded`) gives the
  packed path's loss and gradients on the device for every RNN tagger kind (dropout off, TF32
  off), and ``make_optimizer``'s fused Adam takes the for-loop Adam's step (to 1e-6);
* a noisy DP step on the device adds noise of the claimed scale (σ·C/L, seeded and OS CSPRNG);
* ``train_dp`` and ``train`` run on the device and their models learn (dev F1 above 0.5 of the
  CPU model's; GPU kernels are not bit-identical to the CPU's, so no equality is asked);
* ``operating_points`` on the device gives the CPU's curve for the same weights.

Timings (medians of ``--repeats``): one training epoch (and one epoch of the festag preset, whose LSTMs run padded, on the device
against packed, once each), prediction of the test notes, one DP
step (``micro``, a lot of ``--lot`` sentences). Without the device the script says so and exits 2. The tagger is the
``gru`` preset (Ahmed 2020 ch. 4) at the cpu profile's sizes with random word vectors
(``embeddings=None``), so nothing beyond the package's own requirements is needed.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import math
import statistics
import sys
import time


def _timed(fn, repeats: int, sync) -> tuple[float, object]:
    out, ts = None, []
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        out = fn()
        sync()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--patients", type=int, default=150, help="synthetic corpus size")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lot", type=int, default=64, help="DP lot size for the step timings")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="CPU threads")
    args = ap.parse_args(argv)

    import torch

    from deidlib.datasets import load_corpus
    from deidlib.models.layers import LockedDropout, packed_rnns
    from deidlib.privacy.dpsgd import _micro_clipped_sum, dp_step, per_unit_gradients, train_dp
    from deidlib.training import evaluate_tagger, operating_points, predict_tags, prepare_tagger, train
    from deidlib.training.loop import make_optimizer

    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print(f"device_check: no CUDA device on this machine (torch {torch.__version__}); nothing to compare")
        return 2
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else str(dev)
    print(f"device_check: {name} vs cpu ({args.threads} thread(s)); torch {torch.__version__}")

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    failed: list[str] = []

    def check(what: str, ok: bool, detail: str = "") -> None:
        print(f"  {'ok    ' if ok else 'FAILED'} {what}{': ' + detail if detail else ''}", flush=True)
        if not ok:
            failed.append(what)

    sp = load_corpus("synthetic", profile="cpu", patients=args.patients, seed=0)
    sents, cpu_model = prepare_tagger("gru", sp.train, scheme="binary", encoding="BIO", embeddings=None, seed=0)
    sents = [s for s in sents if s.tokens]
    print(f"  corpus: {len(sents)} training sentences, {len(sp.dev)} dev / {len(sp.test)} test notes")

    # 1. training, timed per epoch on each device from the same initial weights
    rows = {}
    models = {}
    for d in ("cpu", dev):
        m = copy.deepcopy(cpu_model).to(d)
        t0 = time.perf_counter()
        hist = train(m, sents, sp.dev, None, epochs=args.epochs, batch_size=16, seed=0, device=d, progress=False)
        sync()
        rows[str(d)] = {"train_s_per_epoch": (time.perf_counter() - t0) / args.epochs,
                        "dev_f1": hist.epochs[-1].get("dev_f1", float("nan"))}
        models[str(d)] = m
    f_cpu, f_dev = rows["cpu"]["dev_f1"], rows[str(dev)]["dev_f1"]
    check("train on the device learns", f_dev > 0.5 * f_cpu and f_dev > 0.1, f"dev F1 {f_dev:.3f} (cpu {f_cpu:.3f})")

    # 1b. training's padded RNN path (run_rnn_padded, every plain one-layer LSTM) against the packed
    # path on the device, per RNN tagger kind: same loss and gradients (dropout off, TF32 off); and fused
    # Adam (make_optimizer's default on CUDA) against the for-loop Adam for one step
    for kind in ("gru", "festag", "lstm_gru", "gru_gru"):
        _, km = prepare_tagger(kind, sp.train, scheme="binary", encoding="BIO", embeddings=None, seed=0)
        for mod in km.modules():
            if isinstance(mod, (torch.nn.Dropout, LockedDropout)):
                mod.p = 0.0
        km = km.to(dev).train()
        kb = km.featurizer.encode([s.words for s in sents[:64]], [s.tags for s in sents[:64]]).to(dev)
        grads = []
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            for packed in (False, True):
                km.zero_grad()
                with packed_rnns() if packed else contextlib.nullcontext():
                    loss = km.loss(kb)
                loss.backward()
                grads.append((float(loss.detach()), [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)
                                            for p in km.parameters()]))
        (l_pad, g_pad), (l_pack, g_pack) = grads
        gdiff = max(float((a - c).abs().max()) for a, c in zip(g_pad, g_pack))
        scale = max(float(c.abs().max()) for c in g_pack)
        check(f"{kind}: padded training path = packed on the device", abs(l_pad - l_pack) < 1e-3 * max(1, abs(l_pack))
              and gdiff < 1e-4 * max(1.0, scale), f"loss {l_pad:.5f} vs {l_pack:.5f}, max |grad difference| {gdiff:.2e}"
              f" (largest gradient {scale:.2e})")
        if kind == "gru":
            steps = {}
            for fused in (True, False):
                mm = copy.deepcopy(km)
                opt = make_optimizer(mm.parameters(), "adam", 1e-3) if fused else \
                    torch.optim.Adam(mm.parameters(), lr=1e-3, foreach=False)
                if fused:
                    check("make_optimizer's Adam is fused on the device",
                          bool(opt.defaults.get("fused")), f"fused={opt.defaults.get('fused')}")
                for p, g in zip(mm.parameters(), g_pad):
                    p.grad = g.clone()
                opt.step()
                steps[fused] = [p.detach() for p in mm.parameters()]
            adiff = max(float((a - c).abs().max()) for a, c in zip(steps[True], steps[False]))
            check("fused Adam step = for-loop Adam step on the device", adiff < 1e-6, f"max |difference| {adiff:.2e}")
    # packed vs padded training time on the device (festag preset: LSTMs, same initial weights)
    _, lstm_model = prepare_tagger("festag", sp.train, scheme="binary", encoding="BIO", embeddings=None, seed=0)
    for packed in (False, True):
        m = copy.deepcopy(lstm_model).to(dev)
        with packed_rnns() if packed else contextlib.nullcontext():
            t0 = time.perf_counter()
            train(m, sents, None, None, epochs=1, batch_size=16, seed=0, device=dev, progress=False)
            sync()
        rows[str(dev)]["train_packed_s_per_epoch" if packed else "train_padded_s_per_epoch"] = time.perf_counter() - t0
    print(f"  on {dev.type}, one festag epoch: padded {rows[str(dev)]['train_padded_s_per_epoch']:.2f} s, packed "
          f"{rows[str(dev)]['train_packed_s_per_epoch']:.2f} s (packed / padded "
          f"{rows[str(dev)]['train_packed_s_per_epoch'] / rows[str(dev)]['train_padded_s_per_epoch']:.2f}x)")

    # 2. the same weights on both devices: emissions, tags, operating points
    ref = models["cpu"].eval()
    moved = copy.deepcopy(ref).to(dev).eval()
    words = [s.words for s in sents[:128]]
    b = ref.featurizer.encode(words)
    with torch.no_grad():
        e_cpu, e_tf32 = ref.emissions(b), moved.emissions(b.to(dev)).cpu()
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            e_dev = moved.emissions(b.to(dev)).cpu()
    diff = float((e_cpu - e_dev).abs().max())
    check("same weights, same emissions (TF32 off)", diff < 1e-4,
          f"max |difference| {diff:.2e}; with cuDNN's default TF32 {float((e_cpu - e_tf32).abs().max()):.2e}")
    tags_cpu = predict_tags(ref, words)
    tags_dev = predict_tags(moved, words, device=dev)
    same = sum(a == c for a, c in zip(tags_cpu, tags_dev))
    check("same weights, same tags", same == len(words), f"{same}/{len(words)} sentences identical")
    th = (0.5, 0.1)
    op_cpu = operating_points(ref, sp.test, th)
    op_dev = operating_points(moved, sp.test, th, device=dev)
    gap = max(abs(a[k] - c[k]) for a, c in zip(op_cpu, op_dev) for k in ("precision", "recall"))
    check("operating_points on the device", gap < 1e-6, f"largest P/R difference {gap:.2e}")
    for d, m in (("cpu", ref), (str(dev), moved)):
        rows[d]["predict_s"], _ = _timed(lambda m=m, d=d: evaluate_tagger(m, sp.test, device=d), args.repeats, sync)

    # 3. DP-SGD: clipped sums per method, noise scale, a short train_dp
    lot = sents[: args.lot]
    bl = ref.featurizer.encode([s.words for s in lot], [s.tags for s in lot])
    groups = [[i] for i in range(len(lot))]
    _, s_cpu, n_cpu = _micro_clipped_sum(ref, bl, groups, 1.0)
    small = ref.featurizer.encode([s.words for s in lot[:16]], [s.tags for s in lot[:16]])  # vmap: G backward passes
    _, g_cpu = per_unit_gradients(ref, small, method="vmap")
    with torch.backends.cudnn.flags(enabled=False):  # eval-mode RNN backward: not with cuDNN
        _, s_dev, n_dev = _micro_clipped_sum(moved, bl.to(dev), groups, 1.0)
        _, g_dev = per_unit_gradients(moved, small.to(dev), method="vmap")
    diff = max(float((a - c.cpu()).abs().max()) for a, c in zip(s_cpu, s_dev))
    # each side against float64 on the CPU: how far float32 rounding alone moves the sums
    _, s_64, _ = _micro_clipped_sum(copy.deepcopy(ref).double(), bl, groups, 1.0)
    e_cpu, e_dev = (max(float((a.double().cpu() - c).abs().max()) for a, c in zip(s, s_64)) for s in (s_cpu, s_dev))
    check("DP micro clipped sums agree", diff < 1e-4,
          f"max |difference| {diff:.2e} (each against float64 on the CPU: cpu {e_cpu:.2e}, {dev.type} {e_dev:.2e})")
    diff = max(float((a - c.cpu()).abs().max()) for a, c in zip(g_cpu, g_dev))
    check("DP vmap per-sentence gradients agree", diff < 1e-4, f"max |difference| {diff:.2e}")
    C, sigma, L = 0.5, 1.2, float(len(lot))
    for label, gen in (("seeded", torch.Generator().manual_seed(0)), ("OS CSPRNG", None)):
        from deidlib.privacy.secure import SecureRandom

        gen = gen if gen is not None else SecureRandom()
        m = copy.deepcopy(moved)
        params = [p for p in m.parameters() if p.requires_grad]
        opt = make_optimizer(m.parameters(), "sgd", 0.0)
        with torch.backends.cudnn.flags(enabled=False):
            _, clipped, _ = _micro_clipped_sum(m, bl.to(dev), groups, C)
            dp_step(m, bl.to(dev), opt, max_grad_norm=C, noise_multiplier=sigma, denominator=L, generator=gen)
        on_dev = all(p.grad.device.type == dev.type for p in params)
        noise = torch.cat([(p.grad * L - c).reshape(-1) for p, c in zip(params, clipped)]).double().cpu()
        ratio = float(noise.std()) / (sigma * C)
        tol = 5 * math.sqrt(1 / (2 * noise.numel()))
        check(f"DP noise on the device ({label})", on_dev and abs(ratio - 1) < tol,
              f"sd / (σC) = {ratio:.4f} over {noise.numel()} coordinates (tolerance {tol:.4f})")
    for d, m in (("cpu", ref), (str(dev), moved)):
        for method in ("micro",):
            mm = copy.deepcopy(m).train()
            opt = make_optimizer(mm.parameters(), "adam", 1e-3)
            bb = bl.to(d)
            rows[d][f"dp_{method}_s_per_lot"], _ = _timed(
                lambda mm=mm, bb=bb, opt=opt, method=method: dp_step(
                    mm, bb, opt, max_grad_norm=1.0, noise_multiplier=1.0, denominator=L, method=method),
                args.repeats, sync)
    m = copy.deepcopy(cpu_model).to(dev)
    t0 = time.perf_counter()
    _, led = train_dp(m, sents, None, None, epochs=1, batch_size=min(128, len(sents) // 4), target_epsilon=8.0,
                      optimizer="adam", lr=3e-3, seed=0, device=dev, progress=False)
    sync()
    p, r, f = evaluate_tagger(m, sp.dev, device=dev)
    check("train_dp runs on the device", math.isfinite(led.epsilon) and led.epsilon <= 8.0 + 1e-6,
          f"ε {led.epsilon:.2f}, {led.steps} steps in {time.perf_counter() - t0:.1f} s, dev F1 {f:.3f}")

    print(f"\n  {'':<26}{'cpu':>12}{str(dev):>12}{'cpu / ' + dev.type:>14}")
    for key in ("train_s_per_epoch", "predict_s", "dp_micro_s_per_lot", "dev_f1"):
        a, c = rows["cpu"][key], rows[str(dev)][key]
        ratio = f"{a / c:.1f}x" if key != "dev_f1" and c > 0 else ""
        print(f"  {key:<26}{a:>12.3f}{c:>12.3f}{ratio:>14}")
    print(f"\n{len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
