"""The library on an accelerator, next to the CPU: training, prediction, the operating-point
curve and DP-SGD of the GRU-CRF and the MiniLM+CRF run on ``--device`` (default ``cuda``) and
on the CPU in one process; the script checks that they agree and prints the times side by side.

    python benchmarks/device_check.py --quick              # cuda vs cpu, small corpus, about 3 minutes
    python benchmarks/device_check.py --quick --device cpu # the same sections on the CPU alone
    python benchmarks/device_check.py --patients 400 --epochs 3

Every line is printed (and flushed) as it is computed; the first names the device.

Checks (each printed as ``ok`` or ``FAILED``, exit status 1 if any failed; with ``--device cpu``
the comparisons between two devices are skipped, and said to be):

* the same weights give the same emissions (to 1e-4) and the same tags on both devices
  (comparisons run with TF32 off: cuDNN's default TF32 RNN and convolution kernels differ
  from the CPU by ~1e-3 in the emissions, which is printed too, as are the tags it gives);
* the operating-point curve (``operating_points`` at PHI thresholds 0.5 and 0.1) from the same
  weights: the PHI marginals agree to 1e-4 (TF32 off), and a token decided differently on the two
  devices is then a float32 *tie*: its two marginals straddle the threshold, so it lies within
  1e-4 of it. Such a token moves P/R by about one token over the test notes' PHI tokens (the
  4.4e-4 once seen on an H200 at 150 patients came from a curve computed with cuDNN's TF32 on,
  whose marginals differ by ~1e-3: a few tokens of thousands), so the curves must be equal
  when no token is decided differently and within 1e-2 otherwise; the number of such tokens,
  of tokens that near a threshold, and the P/R difference are printed;
* DP-SGD's clipped per-sentence sums (``micro`` and ``vmap``, eval mode) agree to 1e-4 (eval-mode
  gradients through an RNN need cuDNN off: its RNN backward runs in training mode only;
  ``train_dp`` trains in training mode, where cuDNN is used);
* training's padded LSTM path (:func:`deidlib.models.layers.run_rnn_padded`) gives the
  packed path's loss and gradients on the device for the RNN tagger kinds (dropout off, TF32
  off), and ``make_optimizer``'s fused Adam takes the for-loop Adam's step (to 1e-6);
* a noisy DP step on the device adds noise of the claimed scale (σ·C/L, seeded and OS CSPRNG);
* ``train`` learns on each device (from the same initial weights, batch 16 on both: the loss
  on 256 training sentences falls by at least 25 %; the device's dev F1 above 0.5 of the CPU
  model's when that is at least 0.3; GPU kernels are not bit-identical to the CPU's, so no
  equality is asked) and ``train_dp`` runs there within its ε;
* MiniLM+CRF (``minilm`` preset: the whole encoder fine-tuned, linear → CRF): on a CUDA device
  with bf16 the encoder runs in bf16 autocast (:mod:`deidlib.training.precision`); prediction
  from the same weights in bf16 and float32 gives dev F1 within 0.005, and three epochs trained
  each way from the same initial weights give dev F1 within 0.05 (a few epochs on a small
  corpus: run-to-run noise of the device's kernels is of that order).

Timings (medians of ``--repeats``; each on inputs the process has not seen in that form: the
frozen encoder's vector cache is cleared before every DP step): one training epoch (sentences
per second), prediction of the test notes, one DP step of a lot of ``--lot`` sentences (GRU-CRF:
``micro``; MiniLM: the DP recipe's frozen encoder with a BiGRU head, ``vectorized``). The
training batch on the device is the profile's (``--profile``, :func:`deidlib.profiles.batch_size_for`),
16 on the CPU. ``--quick``: 24 patients, 12 dev and 12 test notes, at most 1,024 training
sentences for the GRU-CRF (two epochs) and, on the CPU, 512 for MiniLM (one epoch), one
repeat, fewer kinds in the padded-path check, no festag padded/packed timing, and MiniLM on
the CPU only with ``--device cpu``. Without the device the script says so and
exits 2. The GRU tagger uses random word vectors (``embeddings=None``); MiniLM needs the
``encoder`` extra (``all_minilm_l6_v2``), and its section is skipped (and said to be) without it.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import math
import statistics
import sys
import time


def _timed(fn, repeats: int, sync, before=None) -> tuple[float, object]:
    out, ts = None, []
    for _ in range(repeats):
        if before is not None:
            before()
        sync()
        t = time.perf_counter()
        out = fn()
        sync()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def _say(*parts) -> None:
    print(*parts, flush=True)


def _no_tf32():
    """cuDNN without TF32 (matmul TF32 is off by default in torch)."""
    import torch

    return torch.backends.cudnn.flags(enabled=True, allow_tf32=False)


def _phi_marginals(tagger, docs, device) -> list:
    """PHI marginal 1 − P(O) of every token of ``docs`` (sentences as the operating-point curve sees them)."""
    from deidlib.models.decoding import phi_probability
    from deidlib.training.predict import _sentence_marginals

    _, _, _, marg = _sentence_marginals(tagger, docs, 64, device, None)
    return [phi_probability(m, tagger.featurizer.labels) for m in marg]


def tie_report(p_cpu, p_dev, thresholds) -> dict:
    """The largest difference between the two devices' PHI marginals, the tokens decided
    differently at each threshold (``p >= th``) and how many tokens lie within that difference
    of a threshold. A token is decided differently only when its two marginals straddle the
    threshold, so it lies within the largest difference of it: with marginals that agree to
    1e-4, a different decision is a float32 tie."""
    import torch

    a, b = torch.cat(list(p_cpu)).double(), torch.cat(list(p_dev)).double().cpu()
    diff = float((a - b).abs().max()) if a.numel() else 0.0
    flips = sum(int(((a >= th) != (b >= th)).sum()) for th in thresholds)
    near = sum(int(((a - th).abs() <= diff).sum()) for th in thresholds)
    return {"max_marginal_difference": diff, "flipped": flips, "near_threshold": near}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--quick", action="store_true", help="small corpus, few batches, one repeat (about 3 minutes on a GPU)")
    ap.add_argument("--patients", type=int, help="synthetic corpus size (default 150; --quick 24)")
    ap.add_argument("--epochs", type=int, help="training epochs of the GRU-CRF check (default 2)")
    ap.add_argument("--lot", type=int, help="DP lot size for the step timings (default 64; --quick 32)")
    ap.add_argument("--repeats", type=int, help="timing repeats (default 3; --quick 1)")
    ap.add_argument("--profile", default="cpu", choices=("smoke", "cpu", "paper"),
                    help="whose device batch size to train with (deidlib.profiles; default cpu)")
    ap.add_argument("--threads", type=int, default=1, help="CPU threads")
    args = ap.parse_args(argv)
    quick = args.quick
    args.patients = args.patients or (24 if quick else 150)
    args.epochs = args.epochs or 2
    args.lot = args.lot or (32 if quick else 64)
    args.repeats = args.repeats or (1 if quick else 3)

    import torch

    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        _say(f"device_check: no CUDA device on this machine (torch {torch.__version__}); nothing to compare")
        return 2
    cross = dev.type != "cpu"
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"cpu ({args.threads} thread(s))"
    _say(f"device_check: device {name}" + (f" vs cpu ({args.threads} thread(s))" if cross else "")
         + f"; torch {torch.__version__}" + ("; quick" if quick else ""))
    t_start = time.perf_counter()

    from deidlib.datasets import load_corpus
    from deidlib.profiles import batch_size_for

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    failed: list[str] = []

    def check(what: str, ok: bool, detail: str = "") -> None:
        _say(f"  {'ok    ' if ok else 'FAILED'} {what}{': ' + detail if detail else ''}")
        if not ok:
            failed.append(what)

    def skip(what: str, why: str) -> None:
        _say(f"  skip   {what}: {why}")

    sp = load_corpus("synthetic", profile="cpu", patients=args.patients, seed=0)
    if quick:
        sp = type(sp)(sp.train, sp.dev[:12], sp.test[:12], sp.name)
    bs = {"cpu": 16, str(dev): batch_size_for(args.profile, dev, 16)}
    _say(f"  corpus: {len(sp.train)} train / {len(sp.dev)} dev / {len(sp.test)} test notes; training batch "
         f"{bs[str(dev)]} on {dev.type} (profile {args.profile})" + (", 16 on cpu" if cross else ""))
    rows: dict[str, dict[str, float]] = {}
    _gru_section(args, sp, dev, cross, bs, rows, check, skip, sync)
    _minilm_section(args, sp, dev, cross, bs, rows, check, skip, sync)

    devs = ["cpu", str(dev)] if cross else [str(dev)]
    _say(f"\n  {'':<34}" + "".join(f"{d:>12}" for d in devs) + (f"{'cpu / ' + dev.type:>14}" if cross else ""))
    keys = sorted({k for r in rows.values() for k in r}, key=lambda k: (k.split(":")[0], k))
    for key in keys:
        vals = [rows.get(d, {}).get(key) for d in devs]
        cells = "".join(f"{v:>12.3f}" if v is not None else f"{'-':>12}" for v in vals)
        ratio = ""
        if cross and None not in vals and vals[1] > 0 and "f1" not in key:
            r = vals[0] / vals[1]
            ratio = f"{1 / r if 'per_s' in key else r:.1f}x"
        _say(f"  {key:<34}{cells}{ratio:>14}")
    _say(f"\n{len(failed)} failed" + (f": {', '.join(failed)}" if failed else "")
         + f" ({time.perf_counter() - t_start:.0f} s)")
    return 1 if failed else 0


def _gru_section(args, sp, dev, cross, bs, rows, check, skip, sync) -> None:
    import torch

    from deidlib.models.layers import LockedDropout, packed_rnns
    from deidlib.privacy.dpsgd import train_dp
    from deidlib.privacy.gradients import _micro_clipped_sum, dp_step, per_unit_gradients
    from deidlib.training import evaluate_tagger, operating_points, predict_tags, prepare_tagger, train
    from deidlib.training.loop import make_optimizer

    quick = args.quick
    _say("GRU-CRF (gru preset, random word vectors)")
    sents, cpu_model = prepare_tagger("gru", sp.train, scheme="binary", encoding="BIO", embeddings=None, seed=0)
    sents = [s for s in sents if s.tokens]
    n_all = len(sents)
    if quick:
        sents = sents[:1024]
    _say(f"  {len(sents)} training sentences (of {n_all})")
    devs = ["cpu", dev] if cross else [dev]

    # 1. training, timed per epoch on each device from the same initial weights, at the CPU's batch
    # (the same optimisation on both); the device once more at its profile's batch (timing only)
    fixed = cpu_model.featurizer.encode([s.words for s in sents[:256]], [s.tags for s in sents[:256]])

    def fixed_loss(m, d) -> float:
        m.eval()
        with torch.no_grad():
            return float(m.loss(fixed.to(d)))

    start_loss = fixed_loss(cpu_model, "cpu")
    models = {}
    for d in devs:
        m = copy.deepcopy(cpu_model).to(d)
        hist = train(m, sents, sp.dev, None, epochs=args.epochs, batch_size=16, seed=0, device=d, progress=False)
        sync()
        sec = statistics.median(e["train_seconds"] for e in hist.epochs)
        rows.setdefault(str(d), {}).update({
            "gru:train_s_per_epoch": sec, "gru:train_sentences_per_s": len(sents) / sec,
            "gru:dev_f1": hist.epochs[-1].get("dev_f1", float("nan"))})
        models[str(d)] = m
        end_loss = fixed_loss(m, d)
        _say(f"  trained on {d} (batch 16, {args.epochs} epoch(s)): {sec:.2f} s per epoch, dev F1 "
             f"{rows[str(d)]['gru:dev_f1']:.3f}; loss on 256 training sentences {start_loss:.4g} -> {end_loss:.4g}")
        check(f"train on {d} learns", end_loss < 0.75 * start_loss,
              f"the loss fell by {100 * (1 - end_loss / start_loss):.0f} % (at least 25 % asked)")
    if cross:
        f_dev, f_cpu = rows[str(dev)]["gru:dev_f1"], rows["cpu"]["gru:dev_f1"]
        if f_cpu >= 0.3:
            check("the device's model is as good", f_dev > 0.5 * f_cpu, f"dev F1 {f_dev:.3f} (cpu {f_cpu:.3f})")
        else:
            skip("dev F1 against the CPU's", f"the CPU model's dev F1 {f_cpu:.3f} is too low to compare (few epochs)")
    if bs[str(dev)] != 16:
        m = copy.deepcopy(cpu_model).to(dev)
        hist = train(m, sents, None, None, epochs=1, batch_size=bs[str(dev)], seed=0, device=dev, progress=False)
        sync()
        sec = hist.epochs[0]["train_seconds"]
        rows[str(dev)][f"gru:train_sentences_per_s_batch{bs[str(dev)]}"] = len(sents) / sec
        _say(f"  one epoch on {dev} at the profile's batch {bs[str(dev)]}: {sec:.2f} s ({len(sents) / sec:.0f} sentences/s)")

    # 1b. the padded RNN path against the packed path, per RNN tagger kind: same loss and gradients
    # (dropout off, TF32 off); fused Adam (make_optimizer's default) against the for-loop Adam
    for kind in ("gru", "festag") if quick else ("gru", "festag", "lstm_gru", "gru_gru"):
        _, km = prepare_tagger(kind, sp.train, scheme="binary", encoding="BIO", embeddings=None, seed=0)
        for mod in km.modules():
            if isinstance(mod, (torch.nn.Dropout, LockedDropout)):
                mod.p = 0.0
        km = km.to(dev).train()
        kb = km.featurizer.encode([s.words for s in sents[:64]], [s.tags for s in sents[:64]]).to(dev)
        grads = []
        with _no_tf32():
            for packed in (False, True):
                km.zero_grad()
                with packed_rnns() if packed else contextlib.nullcontext():
                    loss = km.loss(kb)
                loss.backward()
                grads.append((float(loss.detach()), [p.grad.detach().clone() if p.grad is not None
                                                     else torch.zeros_like(p) for p in km.parameters()]))
        (l_pad, g_pad), (l_pack, g_pack) = grads
        gdiff = max(float((a - c).abs().max()) for a, c in zip(g_pad, g_pack))
        scale = max(float(c.abs().max()) for c in g_pack)
        check(f"{kind}: padded training path = packed on {dev.type}",
              abs(l_pad - l_pack) < 1e-3 * max(1, abs(l_pack)) and gdiff < 1e-4 * max(1.0, scale),
              f"loss {l_pad:.5f} vs {l_pack:.5f}, max |grad difference| {gdiff:.2e} (largest gradient {scale:.2e})")
        if kind == "gru":
            steps = {}
            for fused in (True, False):
                mm = copy.deepcopy(km)
                opt = make_optimizer(mm.parameters(), "adam", 1e-3) if fused else \
                    torch.optim.Adam(mm.parameters(), lr=1e-3, foreach=False)
                if fused:
                    check(f"make_optimizer's Adam is fused on {dev.type}",
                          bool(opt.defaults.get("fused")), f"fused={opt.defaults.get('fused')}")
                for p, g in zip(mm.parameters(), g_pad):
                    p.grad = g.clone()
                opt.step()
                steps[fused] = [p.detach() for p in mm.parameters()]
            adiff = max(float((a - c).abs().max()) for a, c in zip(steps[True], steps[False]))
            check(f"fused Adam step = for-loop Adam step on {dev.type}", adiff < 1e-6, f"max |difference| {adiff:.2e}")
    if not quick:  # packed vs padded training time on the device (festag preset: LSTMs, same initial weights)
        _, lstm_model = prepare_tagger("festag", sp.train, scheme="binary", encoding="BIO", embeddings=None, seed=0)
        t = {}
        for packed in (False, True):
            m = copy.deepcopy(lstm_model).to(dev)
            with packed_rnns() if packed else contextlib.nullcontext():
                t0 = time.perf_counter()
                train(m, sents, None, None, epochs=1, batch_size=bs[str(dev)], seed=0, device=dev, progress=False)
                sync()
            t[packed] = time.perf_counter() - t0
        _say(f"  on {dev.type}, one festag epoch: padded {t[False]:.2f} s, packed {t[True]:.2f} s "
             f"(packed / padded {t[True] / t[False]:.2f}x)")

    # 2. the same weights on both devices: emissions, tags, operating points
    ref = models["cpu"].eval() if cross else models[str(dev)].eval()
    moved = copy.deepcopy(ref).to(dev).eval()
    if cross:
        words = [s.words for s in sents[:128]]
        b = ref.featurizer.encode(words)
        with torch.no_grad():
            e_cpu, e_tf32 = ref.emissions(b), moved.emissions(b.to(dev)).cpu()
            with _no_tf32():
                e_dev = moved.emissions(b.to(dev)).cpu()
        diff = float((e_cpu - e_dev).abs().max())
        check("same weights, same emissions (TF32 off)", diff < 1e-4,
              f"max |difference| {diff:.2e}; with cuDNN's default TF32 {float((e_cpu - e_tf32).abs().max()):.2e}")
        tags_cpu = predict_tags(ref, words)
        with _no_tf32():
            tags_dev = predict_tags(moved, words, device=dev)
        same = sum(a == c for a, c in zip(tags_cpu, tags_dev))
        check("same weights, same tags (TF32 off)", same == len(words), f"{same}/{len(words)} sentences identical")
        th = (0.5, 0.1)
        with _no_tf32():
            p_dev = _phi_marginals(moved, sp.test, dev)
            op_dev = operating_points(moved, sp.test, th, device=dev, own=False)
        p_cpu = _phi_marginals(ref, sp.test, "cpu")
        op_cpu = operating_points(ref, sp.test, th, own=False)
        gap = max(abs(a[k] - c[k]) for a, c in zip(op_cpu, op_dev) for k in ("precision", "recall"))
        tie = tie_report(p_cpu, p_dev, th)
        # different decisions only at float32 ties; equal curves when there is none; a tie moves P/R by
        # about one token over the test notes' PHI tokens, so a handful of them stays far below 1e-2
        ok = tie["max_marginal_difference"] < 1e-4 and (gap < 1e-12 if tie["flipped"] == 0 else gap < 1e-2)
        check("operating_points on the device (TF32 off)", ok,
              f"PHI marginals differ by at most {tie['max_marginal_difference']:.2e}; {tie['flipped']} token "
              f"decision(s) differ, each a tie at a threshold ({tie['near_threshold']} tokens lie within that "
              f"difference of 0.5 or 0.1); largest P/R difference {gap:.2e}")
    else:
        skip("cross-device emissions, tags and operating points", "the device is the CPU")
    for d, m in ((("cpu", ref), (str(dev), moved)) if cross else ((str(dev), moved),)):
        rows[d]["gru:predict_test_s"], _ = _timed(lambda m=m, d=d: evaluate_tagger(m, sp.test, device=d),
                                                  args.repeats, sync)

    # 3. DP-SGD: clipped sums per method, noise scale, a short train_dp
    lot = sents[: args.lot]
    bl = ref.featurizer.encode([s.words for s in lot], [s.tags for s in lot])
    groups = [[i] for i in range(len(lot))]
    if cross:
        _, s_cpu, _ = _micro_clipped_sum(ref, bl, groups, 1.0)
        small = ref.featurizer.encode([s.words for s in lot[:16]], [s.tags for s in lot[:16]])  # vmap: G backward passes
        _, g_cpu = per_unit_gradients(ref, small, method="vmap")
        with torch.backends.cudnn.flags(enabled=False):  # eval-mode RNN backward: not with cuDNN
            _, s_dev, _ = _micro_clipped_sum(moved, bl.to(dev), groups, 1.0)
            _, g_dev = per_unit_gradients(moved, small.to(dev), method="vmap")
        diff = max(float((a - c.cpu()).abs().max()) for a, c in zip(s_cpu, s_dev))
        # each side against float64 on the CPU: how far float32 rounding alone moves the sums
        _, s_64, _ = _micro_clipped_sum(copy.deepcopy(ref).double(), bl, groups, 1.0)
        e_cpu, e_dev = (max(float((a.double().cpu() - c).abs().max()) for a, c in zip(s, s_64)) for s in (s_cpu, s_dev))
        check("DP micro clipped sums agree", diff < 1e-4,
              f"max |difference| {diff:.2e} (each against float64 on the CPU: cpu {e_cpu:.2e}, {dev.type} {e_dev:.2e})")
        diff = max(float((a - c.cpu()).abs().max()) for a, c in zip(g_cpu, g_dev))
        check("DP vmap per-sentence gradients agree", diff < 1e-4, f"max |difference| {diff:.2e}")
    else:
        skip("cross-device DP clipped sums", "the device is the CPU")
    from deidlib.privacy.secure import SecureRandom

    C, sigma, L = 0.5, 1.2, float(len(lot))
    for label, gen in (("seeded", torch.Generator().manual_seed(0)), ("OS CSPRNG", SecureRandom())):
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
        check(f"DP noise on {dev.type} ({label})", on_dev and abs(ratio - 1) < tol,
              f"sd / (σC) = {ratio:.4f} over {noise.numel()} coordinates (tolerance {tol:.4f})")
    for d, m in ((("cpu", ref), (str(dev), moved)) if cross else ((str(dev), moved),)):
        mm = copy.deepcopy(m).train()
        opt = make_optimizer(mm.parameters(), "adam", 1e-3)
        bb = bl.to(d)
        rows[d]["gru:dp_step_s"], _ = _timed(
            lambda mm=mm, bb=bb, opt=opt: dp_step(mm, bb, opt, max_grad_norm=1.0, noise_multiplier=1.0,
                                                  denominator=L, method="micro", generator=SecureRandom()),
            args.repeats, sync)
    m = copy.deepcopy(cpu_model).to(dev)
    t0 = time.perf_counter()
    _, led = train_dp(m, sents, None, None, epochs=0.25 if quick else 1,
                      batch_size=min(32 if quick else 128, len(sents) // 4), target_epsilon=8.0,
                      optimizer="adam", lr=3e-3, seed=0, device=dev, progress=False)
    sync()
    _, _, f = evaluate_tagger(m, sp.dev, device=dev)
    check(f"train_dp runs on {dev.type}", math.isfinite(led.epsilon) and led.epsilon <= 8.0 + 1e-6,
          f"ε {led.epsilon:.2f}, {led.steps} steps in {time.perf_counter() - t0:.1f} s, dev F1 {f:.3f}")


def _minilm_section(args, sp, dev, cross, bs, rows, check, skip, sync) -> None:
    from deidlib.models.encoder_tagger import clear_encoder_caches
    from deidlib.privacy.gradients import dp_step
    from deidlib.privacy.secure import SecureRandom
    from deidlib.training import evaluate_tagger, prepare_tagger, train
    from deidlib.training.loop import make_optimizer
    from deidlib.training.precision import autocast_dtype, full_precision

    _say("MiniLM+CRF (minilm preset: the encoder fine-tuned, linear -> CRF)")
    try:
        sents, base = prepare_tagger("minilm", sp.train, scheme="binary", encoding="BIO", seed=0)
    except (ImportError, OSError, ValueError) as e:
        skip("MiniLM+CRF", f"the encoder is not available here ({str(e).splitlines()[0][:100]})")
        return
    sents = [s for s in sents if s.tokens]
    n_all = len(sents)
    if args.quick and not cross:
        sents = sents[:512]
    epochs = 3 if cross else 1
    bf16 = autocast_dtype(base, dev) is not None
    devs = ["cpu", dev] if cross and not args.quick else [dev]
    _say(f"  {len(sents)} training sentences (of {n_all}), {epochs} epoch(s); encoder in "
         f"{'bf16 autocast' if bf16 else 'float32'} on {dev.type}")
    trained = {}
    for d in devs:
        runs = (("float32", True), ("bf16", False)) if bf16 and str(d) == str(dev) else (("float32", True),)
        for label, fp32 in runs:
            m = copy.deepcopy(base).to(d)
            with full_precision() if fp32 else contextlib.nullcontext():
                hist = train(m, sents, sp.dev, None, epochs=epochs, batch_size=bs[str(d)], seed=0, device=d,
                             progress=False)
            sync()
            sec = statistics.median(e["train_seconds"] for e in hist.epochs)
            key = "minilm" if label == "float32" else "minilm_bf16"
            rows.setdefault(str(d), {}).update({f"{key}:train_s_per_epoch": sec,
                                                f"{key}:train_sentences_per_s": len(sents) / sec,
                                                f"{key}:dev_f1": hist.epochs[-1].get("dev_f1", float("nan"))})
            trained[(str(d), label)] = m
            _say(f"  trained on {d} in {label} (batch {bs[str(d)]}): {sec:.2f} s per epoch "
                 f"({len(sents) / sec:.0f} sentences/s), dev F1 {rows[str(d)][f'{key}:dev_f1']:.3f}")
    if bf16:
        f32, fb = rows[str(dev)]["minilm:dev_f1"], rows[str(dev)]["minilm_bf16:dev_f1"]
        m = trained[(str(dev), "float32")]
        with full_precision():
            _, _, g32 = evaluate_tagger(m, sp.dev, device=dev)
        _, _, gb = evaluate_tagger(m, sp.dev, device=dev)
        if max(f32, fb) < 0.3:  # two models that tag nothing agree whatever autocast does: no check
            skip("bf16 autocast against float32", f"dev F1 {fb:.3f} and {f32:.3f} are too low to compare "
                 f"({epochs} epochs on {len(sents)} sentences; give more --patients or --epochs)")
        else:
            check(f"MiniLM trained {epochs} epochs in bf16 autocast within 0.05 dev F1 of float32",
                  abs(f32 - fb) <= 0.05, f"dev F1 {fb:.3f} vs {f32:.3f}")
            check("MiniLM prediction in bf16 autocast within 0.005 dev F1 of float32 (same weights)",
                  abs(g32 - gb) <= 0.005, f"dev F1 {gb:.4f} vs {g32:.4f}")
    else:
        skip("bf16 autocast comparisons", f"bf16 autocast runs on a CUDA device with bf16 only (here {dev.type})")
    for (d, label), m in trained.items():
        key = "minilm" if label == "float32" else "minilm_bf16"
        with full_precision() if label == "float32" else contextlib.nullcontext():
            rows[d][f"{key}:predict_test_s"], _ = _timed(lambda m=m, d=d: evaluate_tagger(m, sp.test, device=d),
                                                         args.repeats, sync)
    # DP step of the DP recipe's tagger (frozen encoder, BiGRU head, vectorized per-sentence gradients),
    # the encoder's vectors computed inside every timed step (cache cleared before it)
    _, dpm = prepare_tagger("minilm", sp.train, scheme="binary", encoding="BIO", seed=0, finetune_layers=0,
                            layers=[2, 3, 4], hidden=64)
    lot = sents[: args.lot]
    bl = dpm.featurizer.encode([s.words for s in lot], [s.tags for s in lot])
    for d in devs:
        mm = copy.deepcopy(dpm).to(d).train()
        opt = make_optimizer(mm.parameters(), "adam", 1e-3)
        bb = bl.to(d)
        rows.setdefault(str(d), {})["minilm:dp_step_s"], _ = _timed(
            lambda mm=mm, bb=bb, opt=opt: dp_step(mm, bb, opt, max_grad_norm=1.0, noise_multiplier=1.0,
                                                  denominator=float(len(lot)), method="vectorized",
                                                  generator=SecureRandom()),
            args.repeats, sync, before=clear_encoder_caches)
        _say(f"  DP step on {d} (lot {len(lot)}, vectorized, frozen encoder): {rows[str(d)]['minilm:dp_step_s']:.3f} s")
    clear_encoder_caches()


if __name__ == "__main__":
    sys.exit(main())
