"""ahmed chapter-4 study: parameters, configuration grid, hyperparameter mapping, tables,
the per-category table against a direct scorer call, and determinism for a seed."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from deidlib.corpus.document import Document, Span
from deidlib.evaluation import binary_token_prf, evaluate
from deidlib.models import build_tagger, count_parameters
from deidlib.reporting import json_ready, to_markdown
from deidlib.studies import ahmed_models as am
from deidlib.studies.ahmed_models import effects as am_effects
from deidlib.studies.ahmed_models import params as am_params
from deidlib.studies.ahmed_models import run as am_run
from deidlib.studies.ahmed_models import tables as am_tables

# tiny everything: one or two epochs over a few dozen sentences
TINY = dict(
    epochs=1,
    max_train_sentences=24,
    max_dev_documents=1,
    max_test_documents=2,
    gru_dropouts=(0.0, 0.5),
    sat_dropouts=(0.25,),
    deltas=(1, 10),
    word2vec_epochs=1,
)


@pytest.fixture(scope="module")
def results():
    return am.run_study(am.params_for("smoke", **TINY), seeds=(0, 1), progress=False)


@pytest.fixture(scope="module")
def tiny_data():
    params = am.params_for("smoke", **{**TINY, "max_train_sentences": 120, "max_test_documents": 3})
    return params, am_run.prepare_data("synthetic", None, "smoke", 0, params)


# --------------------------------------------------------------------- parameters


def test_params_for_profiles_and_errors():
    paper = am.params_for("paper")
    assert (paper.lr, paper.clip, paper.epochs, paper.patience, paper.optimizer) == (
        1e-5,
        5.0,
        100,
        10,
        "adam",
    )
    assert paper.deltas == (1, 3, 5, 10, 15) and paper.gru_dropouts == (0, 0.25, 0.5)
    assert am.params_for("smoke").epochs <= 2
    p = am.params_for("cpu", epochs=None, sizes={"gru": {"hidden": 7}})
    assert p.epochs == am_params.PROFILE_PARAMS["cpu"].epochs  # None means "the profile's value"
    assert (
        p.sizes["gru"]["hidden"] == 7
        and p.sizes["gru"]["word_dim"] == am_params.PROFILE_PARAMS["cpu"].sizes["gru"]["word_dim"]
    )
    with pytest.raises(ValueError, match="unknown profile"):
        am.params_for("laptop")
    with pytest.raises(ValueError, match="unknown ahmed_models parameters"):
        am.params_for("smoke", epoch=3)
    with pytest.raises(ValueError, match="δ_p"):
        am.params_for("smoke", deltas=(0.5,))
    with pytest.raises(ValueError, match="dropout"):
        am.params_for("smoke", rnn_dropout=1.0)
    with pytest.raises(ValueError, match="unknown tagger kinds"):
        am.params_for("smoke", sizes={"bert": {}})


def test_paper_transformer_has_thesis_size():
    """Table 4.1: 12 blocks, 12 heads, hidden size 768."""
    from deidlib.models import Featurizer

    fz = Featurizer(["<pad>", "<unk>", "a"], ["O", "S-DATE"])
    hp = am_params.tagger_hparams(am.config_grid(am.params_for("paper"))["transformer-crf-d0.25"], am.params_for("paper"))
    t = build_tagger("transformer", fz, **hp)
    assert t.d_model == 768 and len(t.encoder.layers) == 12 and t.encoder.layers[0].self_attn.num_heads == 12


def test_config_grid_shares_rows_and_covers_tables():
    p = am.params_for("paper")
    grid = am.config_grid(p)
    rows = am_params.table_configs(p)
    # the thesis's tables, Table 4.2 with the from-scratch transformer as an extra row
    assert len(rows["4.2"]) == 7 and len(rows["4.3"]) == 9 and len(rows["4.4"]) == 5
    assert set(grid) == {r for t in rows.values() for r in t}  # every row is trained, nothing else
    assert len(grid) == 7 + 9 + 5 - 3  # shared: GRU 0.5 and SAT 0.25 (Table 4.3), SAT δ_p=1 (Table 4.4)
    assert rows["4.2"][-1] == "transformer-crf-d0.25" and grid["transformer-crf-d0.25"].kind == "transformer"
    assert "transformer" not in {c.kind for c in am.config_grid(dataclasses.replace(p, scratch_transformer=False)).values()}
    assert rows["4.3"].index("sat-softmax-d0.25") == rows["4.3"].index("sat-crf-d0.25") + 1
    only44 = am.config_grid(p, tables=("4.4",))
    assert [c.delta_p for c in only44.values()] == [1, 3, 5, 10, 15]
    assert all(c.kind == am.SAT_KIND == "minilm" for c in only44.values())  # δ_p on the pre-trained SAT
    with pytest.raises(ValueError, match="unknown tables"):
        am.config_grid(p, tables=("4.5",))


def test_tagger_hparams_map_study_knobs():
    p = am.params_for("smoke")
    g = am.config_grid(p)
    nochar = am_params.tagger_hparams(g["gru-nochar-crf-d0.5"], p)
    assert nochar["char"] is None and nochar["crf"] is True
    assert nochar["input_dropout"] == nochar["output_dropout"] == 0.5
    soft = am_params.tagger_hparams(g["gru-softmax-d0.5"], p)
    assert soft["crf"] is False and "char" not in soft
    stack = am_params.tagger_hparams(g["gru_gru-crf-d0.5"], p)
    assert stack["between_dropout"] == 0.5
    sat = am_params.tagger_hparams(g["sat-crf-d0.1"], p)
    # the SAT's one dropout sits before its label decoding layer (thesis §4.2.2)
    assert sat["input_dropout"] == 0.1 and "attn_dropout" not in sat and sat["recall_penalty"] is None
    assert "char" not in sat  # the encoder reads sub-words; no character embedding to switch
    assert am_params.tagger_hparams(g["sat-crf-d0.25-dp10"], p)["recall_penalty"] == 10.0
    scratch = am_params.tagger_hparams(g["transformer-crf-d0.25"], p)
    assert scratch["input_dropout"] == scratch["attn_dropout"] == 0.25
    base = am_params.tagger_hparams(g["festag-softmax"], p)
    assert "input_dropout" not in base  # the Dernoncourt baseline keeps its preset dropout
    # the hyperparameters really reach the taggers
    from deidlib.models import Featurizer

    fz = Featurizer(["<pad>", "<unk>", "a"], ["O", "S-DATE"])
    t = build_tagger("gru", fz, **nochar)
    assert t.char is None and t.crf is not None
    t = build_tagger("gru", fz, **soft)
    assert t.char is not None and t.crf is None
    t = build_tagger("transformer", fz, **{**am_params.tagger_hparams(g["transformer-crf-d0.25"], p), "recall_penalty": 10.0})
    assert t.recall_penalty == 10.0
    # every RNN row of the study (the Dernoncourt baseline too) gets the study's FNN activation
    import torch

    for name in ("festag-softmax", "gru-crf-d0.5", "gru_gru-crf-d0.5", "lstm_gru-crf-d0.5"):
        t = build_tagger(g[name].kind, fz, **am_params.tagger_hparams(g[name], p))
        assert isinstance(t.ff[1], torch.nn.ReLU), name
    assert "ff_activation" not in am_params.tagger_hparams(g["sat-crf-d0.1"], p)
    pt = am.params_for("smoke", ff_activation="tanh")
    t = build_tagger("gru", fz, **am_params.tagger_hparams(g["gru-crf-d0.5"], pt))
    assert isinstance(t.ff[1], torch.nn.Tanh)
    with pytest.raises(ValueError, match="ff_activation"):
        am.params_for("smoke", ff_activation="sigmoid")


# ------------------------------------------------------------------------- tables


def test_tables_shapes_and_values(results):
    assert set(results) == {f.name for f in dataclasses.fields(am.AhmedResults)}
    assert len(results["runs"]) == 2 * len(results["configs"])
    assert json.dumps(json_ready(results)) == json.dumps(dict(results))  # JSON-able, as the dict it was
    rows = results["table_rows"]
    df = am_tables.runs_frame(results)

    t42 = am.table_4_2(results)
    assert list(t42["config"]) == rows["4.2"]
    assert {"model", "P_mean", "P_sd", "R_mean", "R_sd", "F1_mean", "F1_sd", "n"} <= set(t42.columns)
    assert (t42["n"] == 2).all()
    for _, row in t42.iterrows():
        f = df[df.config == row["config"]]["f1"].to_numpy() * 100
        assert row["F1_mean"] == pytest.approx(f.mean())
        assert row["F1_sd"] == pytest.approx(np.std(f, ddof=1))
        assert (row["F1_min"], row["F1_max"]) == pytest.approx((f.min(), f.max()))
    # the figure's error bars span exactly [min, max] over seeds: never below 0
    from deidlib.studies.ahmed_models.figures import min_max_err

    err = min_max_err(t42, "F1")
    assert np.allclose(t42["F1_mean"] - err[0], t42["F1_min"]) and (t42["F1_mean"] - err[0] >= 0).all()
    assert np.allclose(t42["F1_mean"] + err[1], t42["F1_max"])

    t43 = am.table_4_3(results)
    assert list(t43["config"]) == rows["4.3"]
    assert list(t43["CE"]) == [("n/a (sub-words)" if c.startswith("sat-") else c != "gru-nochar-crf-d0.5")
                               for c in rows["4.3"]]
    assert list(t43["softmax"]) == ["softmax" in c for c in rows["4.3"]]
    assert set(t43["model"]) == {"GRU", "SAT (pre-trained MiniLM)"}

    t44 = am.table_4_4(results)
    assert list(t44["delta_p"]) == [1.0, 10.0]

    t410 = am.table_4_10(results)
    assert list(t410["config"]) == rows["4.2"]
    assert (t410["train_s_per_epoch_mean"] > 0).all() and (t410["predict_s_mean"] > 0).all()
    assert (t410["n_parameters"] > 0).all()
    # GRU-GRU adds a context layer to GRU; CRF adds transitions to the softmax baseline
    n = t410.set_index("config")["n_parameters"]
    assert n["gru_gru-crf-d0.5"] > n["gru-crf-d0.5"] and n["festag-crf"] > n["festag-softmax"]

    # the vocabulary split: per run, the groups' counts add up to the run's binary-token scores
    for r in results["runs"]:
        c = r["by_vocabulary"]
        assert set(c) <= {"oov", "in-vocabulary", "?"} and "oov" in c
        tp, fp, fn = (sum(g[k] for g in c.values()) for k in ("tp", "fp", "fn"))
        if tp:
            assert (tp / (tp + fp), tp / (tp + fn)) == pytest.approx((r["precision"], r["recall"]))
    tv = am.table_vocabulary(results)
    assert set(tv["tokens"]) == {"oov", "in-vocabulary"}
    assert set(tv["config"]) == set(rows["4.2"]) | set(rows["4.3"]) and (tv["n"] == 2).all()
    row = tv[(tv.config == "gru-crf-d0.5") & (tv.tokens == "oov")].iloc[0]
    rec = [r["by_vocabulary"]["oov"]["recall"] for r in results["runs"] if r["config"] == "gru-crf-d0.5"]
    assert row["R_mean"] == pytest.approx(100 * np.mean(rec))
    assert row["gold"] == sum(results["runs"][0]["by_vocabulary"]["oov"][k] for k in ("tp", "fn"))

    md = to_markdown(t42)
    assert md.count("\n") == len(t42) + 1 and "±" in md


def test_best_config_and_figure_a1_data(results):
    best = am.best_config(results)
    df = am_tables.runs_frame(results)
    rows = results["table_rows"]["4.2"]
    means = df[df.config.isin(rows)].groupby("config")["best_dev_f1"].mean()
    assert means[best] == means.max()
    a1 = am.table_a1(results)
    assert set(a1["config"]) == {best} and "OTHER" not in set(a1["category"])
    fa = am.figure_a1_data(results, best, level="type")
    assert (fa["test_gold"] > 0).all()
    inst = results["train_instances"]["type"]
    assert list(fa["train_instances"]) == [inst.get(t, 0) for t in fa["type"]]
    assert sum(results["train_instances"]["category"].values()) == sum(inst.values()) > 0


def test_figures_build(results):
    import matplotlib.pyplot as plt

    fig = am.figure_4_2(results)
    assert len(fig.axes[0].patches) == 3 * len(results["table_rows"]["4.2"])
    title = fig._suptitle.get_text()
    assert "epochs" in title and "training sentences" in title and "seed" in title  # the scale is stated
    plt.close(fig)
    fig = am.figure_a1(results)
    assert len(fig.axes) == 2
    plt.close(fig)


def test_to_markdown_mean_sd():
    import pandas as pd

    df = pd.DataFrame(
        {"model": ["GRU"], "F1_mean": [97.2812], "F1_sd": [0.5], "P_mean": [1.0], "P_sd": [math.nan]}
    )
    assert to_markdown(df).splitlines() == [
        "| model | F1 | P |",
        "|---|---|---|",
        "| GRU | 97.28 ± 0.50 | 1.00 |",
    ]


# --------------------------------------------------- per-category vs the scorer


def test_category_table_matches_direct_scorer_call_handmade():
    text = "Dr Smith saw John on 2020-01-02 in Boston ."
    gold = Document(
        "d1",
        text,
        [
            Span.of(text, 3, 8, "DOCTOR"),
            Span.of(text, 13, 17, "PATIENT"),
            Span.of(text, 21, 31, "DATE"),
            Span.of(text, 35, 41, "CITY"),
        ],
    )
    sys_ = gold.with_spans(
        [
            Span.of(text, 3, 8, "DOCTOR"),
            Span.of(text, 13, 17, "DOCTOR"),
            Span.of(text, 21, 31, "DATE"),
            Span.of(text, 0, 2, "CITY"),
        ]
    )
    rep = evaluate([gold], [sys_])
    rec = {
        "seed": 0,
        "per_category": am_run._per(rep.per_category["token"]),
        "per_type": am_run._per(rep.per_type["token"]),
    }
    t = am_tables.category_table([rec]).set_index("category")
    for cat, (prf, (tp, _fp, fn)) in rep.per_category["token"].items():
        assert t.loc[cat, "F1_mean"] == pytest.approx(100 * prf.f1)
        assert t.loc[cat, "P_mean"] == pytest.approx(100 * prf.precision)
        assert t.loc[cat, "test_gold"] == tp + fn
    assert t.loc["NAME", "P_mean"] == 50.0 and t.loc["LOCATION", "F1_mean"] == 0.0


def test_run_config_scores_match_direct_scorer_call(tiny_data):
    params, data = tiny_data
    # enough steps for the tiny self-attention tagger to predict some PHI (binary F1 ~0.7)
    params = am.params_for(
        "smoke",
        **{
            **TINY,
            "epochs": 3,
            "max_train_sentences": 120,
            "max_test_documents": 3,
            "batch_size": 8,
            "lr": 2e-2,
        },
    )
    cfg = am.config_grid(params)["transformer-crf-d0.25"]
    out = am_run.run_config(cfg, data, params, seed=0)
    from deidlib.training import predict_documents

    preds = predict_documents(out.tagger, data.test_docs)
    assert [d.spans for d in preds] == [d.spans for d in out.predictions]
    assert sum(len(d.spans) for d in preds) > 0, "the tiny tagger should predict some PHI"
    rep = evaluate(data.test_docs, preds)
    t = am_tables.category_table([out.record]).set_index("category")
    for cat, (prf, _counts) in rep.per_category["token"].items():
        if cat in t.index:
            assert t.loc[cat, "P_mean"] == pytest.approx(100 * prf.precision)
            assert t.loc[cat, "R_mean"] == pytest.approx(100 * prf.recall)
            assert t.loc[cat, "F1_mean"] == pytest.approx(100 * prf.f1)
    p, r, f = binary_token_prf(data.test_docs, preds)
    assert (out.record["precision"], out.record["recall"], out.record["f1"]) == pytest.approx((p, r, f))
    assert out.record["n_parameters"] == count_parameters(out.tagger)
    assert out.record["epochs_run"] == 3 and len(out.record["history"]) == 3


def test_run_config_deterministic_for_a_seed(tiny_data):
    params, data = tiny_data
    cfg = am.config_grid(params)["gru-crf-d0.5"]
    a = am_run.run_config(cfg, data, params, seed=3).record
    b = am_run.run_config(cfg, data, params, seed=3).record
    c = am_run.run_config(cfg, data, params, seed=4).record
    keys = ("precision", "recall", "f1", "per_category", "per_type", "n_parameters")
    assert {k: a[k] for k in keys} == {k: b[k] for k in keys}
    assert [e["train_loss"] for e in a["history"]] == [e["train_loss"] for e in b["history"]]
    assert [e["train_loss"] for e in a["history"]] != [e["train_loss"] for e in c["history"]]


def test_run_study_restores_torch_threads():
    import torch

    torch.set_num_threads(2)
    try:
        res = am.run_study(am.params_for("smoke", **{**TINY, "deltas": (1,)}), seeds=(0,), tables=("4.4",),
                           progress=False)
        assert torch.get_num_threads() == 2 and res["torch_threads"] == 1
    finally:
        torch.set_num_threads(1)
    assert [r["config"] for r in res["runs"]] == ["sat-crf-d0.25"]


# ------------------------------------------------------------- seeds, intervals, paired effects


def test_only_configurations_no_claim_reads_train_on_fewer_seeds():
    cpu = am.params_for("cpu")
    assert cpu.n_seeds == 5 and cpu.n_seeds_sat == 2 and cpu.sat_dropouts == (0.25,)
    p = am.params_for("cpu", sat_dropouts=(0.1, 0.25, 0.5), n_seeds_other=1, n_seeds_sat=3)
    claimed = am_params.claim_configs(p)
    others = set(am.config_grid(p)) - claimed
    assert others == {"sat-crf-d0.1", "sat-crf-d0.5"}
    for e in am_effects.effects_for(p):  # every configuration an effect reads is claimed
        assert e.a in claimed and (e.b == am_effects.BEST_RNN or e.b in claimed)
    assert am_run.seeds_for("sat-crf-d0.1", p, range(5)) == [0]
    assert am_run.seeds_for("gru-crf-d0", p, range(5)) == [0, 1, 2, 3, 4]
    # the SAT row of Table 4.2 (the "self-attention is best" claim) trains on every seed, the other
    # SAT claim rows on n_seeds_sat
    assert am.main_sat(p) == "sat-crf-d0.25" and am_run.seeds_for("sat-crf-d0.25", p, range(5)) == [0, 1, 2, 3, 4]
    assert am_run.seeds_for("sat-softmax-d0.25", p, range(5)) == [0, 1, 2]
    assert am_run.seeds_for("transformer-crf-d0.25", p, range(5)) == [0, 1, 2, 3, 4]
    assert am_run.seeds_for("sat-crf-d0.1", dataclasses.replace(p, n_seeds_other=None), range(5)) == [0, 1, 2]
    assert am_run.seeds_for("sat-crf-d0.1", dataclasses.replace(p, n_seeds_other=None, n_seeds_sat=None),
                        range(5)) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="n_seeds_other"):
        am.params_for("cpu", n_seeds_other=0)


def _run(config, seed, f1, kind="gru", **kw):
    return {"config": config, "seed": seed, "kind": kind, "f1": f1, "recall": f1, "precision": f1, **kw}


def test_paired_effects_find_a_consistent_gain_and_reverse_a_consistent_loss():
    seed_shift = [0.0, 0.2, -0.15, 0.1, -0.05]  # large seed-to-seed spread shared by both configurations
    runs = []
    for s, sh in enumerate(seed_shift):
        runs += [_run("base", s, 0.7 + sh), _run("better", s, 0.72 + sh + 0.001 * s),
                 _run("worse", s, 0.68 + sh - 0.001 * s), _run("same", s, 0.7 + sh + (0.002 if s % 2 else -0.002)),
                 _run("sat", s, 0.75 + sh, kind="minilm"), _run("scratch", s, 0.9 + sh, kind="transformer")]
    # the from-scratch transformer is no RNN: "the best RNN" never names it
    results = {"runs": runs, "table_rows": {"4.2": ["base", "better", "sat", "scratch"]}}
    E = am_effects.Effect
    eff = am.paired_effects(results, [
        E("up", "better beats base", "better", "base", "f1", 1.0),
        E("down", "worse beats base", "worse", "base", "f1", 1.0),
        E("zero", "same beats base", "same", "base", "f1", 1.0),
        E("claimed_down", "worse is below base", "worse", "base", "f1", -1.0),
        E("best", "sat beats the best RNN", "sat", am_effects.BEST_RNN, "f1", 1.0),
        E("missing", "a config never run", "nowhere", "base", "f1", 1.0),
    ]).set_index("key")
    assert eff.loc["up", "verdict"] == "found" and eff.loc["up", "mean"] == pytest.approx(2.2)
    assert eff.loc["down", "verdict"] == "reversed"
    assert eff.loc["zero", "verdict"] == "not distinguishable from zero"
    assert eff.loc["claimed_down", "verdict"] == "found"
    assert eff.loc["best", "b"] == "better" and eff.loc["best", "n"] == 5  # the RNN with the highest mean F1
    assert eff.loc["missing", "verdict"] == "not measured" and eff.loc["missing", "n"] == 0
    # unpaired, the 'up' configurations' seed intervals overlap: only the pairing separates them
    lo_better = am_tables.summarize(am_tables.runs_frame(results).query("config == 'better'"), "config")["F1_ci_lo"].iloc[0]
    hi_base = am_tables.summarize(am_tables.runs_frame(results).query("config == 'base'"), "config")["F1_ci_hi"].iloc[0]
    assert lo_better < hi_base


def test_tables_carry_the_t_interval_of_the_seed_mean(results):
    from deidlib.studies.seed_stats import t_interval

    t = am.table_4_3(results).set_index("config")
    df = am_tables.runs_frame(results)
    for c in t.index:
        m, lo, hi = t_interval(100 * df[df.config == c]["f1"].to_numpy())
        assert t.loc[c, "F1_ci_lo"] == pytest.approx(lo) and t.loc[c, "F1_ci_hi"] == pytest.approx(hi)
    view = am.interval_view(am.table_4_3(results))
    assert "F1 [95% CI]" in view and "F1_mean" not in view and "F1_sd" not in view
    row = am.table_4_3(results).iloc[0]
    assert view["F1 [95% CI]"].iloc[0] == f"{row.F1_mean:.1f} [{row.F1_ci_lo:.1f}, {row.F1_ci_hi:.1f}]"


def test_misspelled_split_scores_partition_the_binary_counts(results):
    for r in results["runs"]:
        m = r["misspelled"]
        toks = m["by_token"]
        tp = toks["misspelled"]["tp"] + toks["intact"]["tp"]
        fn = toks["misspelled"]["fn"] + toks["intact"]["fn"]
        assert toks["misspelled"]["tp"] + toks["misspelled"]["fn"] > 0  # PHI tokens were misspelled
        if tp + fn:
            assert m["binary"]["recall"] == pytest.approx(tp / (tp + fn))
    assert results["data"]["misspelled_test_tokens"] > 0
    tm = am.table_misspelled(results)
    assert set(tm.tokens) == {"misspelled", "intact"}
    eff = am.paired_effects(results, am.params_for("smoke", **TINY)).set_index("key")
    assert eff.loc["char_misspelled", "n"] == 2 and eff.loc["char_misspelled", "metric"] == "misspelled_recall"


# ------------------------------------------------------- the self-attention tagger is pre-trained


def _package_encoder_state():
    from deidlib.embeddings.encoders import load_encoder_model

    return load_encoder_model("minilm").state_dict()


def test_sat_row_is_the_pretrained_minilm_encoder_with_a_crf(tiny_data):
    """The Table 4.2 self-attention row builds the pre-trained all-MiniLM-L6-v2 encoder: its
    parameters include MiniLM's embeddings, and at initialisation every encoder weight equals
    the package's; the cpu profile fine-tunes its top two layers (embeddings and lower layers frozen)."""
    from deidlib.models.encoder_tagger import EncoderTagger

    _, data = tiny_data
    p = am.params_for("cpu")
    cfg = am.config_grid(p)[am.main_sat(p)]
    assert cfg.kind == "minilm" and "pre-trained" in cfg.label and cfg.crf
    t = build_tagger(cfg.kind, data.encoder_featurizer(), seed=0, **am_params.tagger_hparams(cfg, p))
    assert isinstance(t, EncoderTagger) and t.crf is not None
    names = dict(t.named_parameters())
    assert "encoder.embeddings.word_embeddings.weight" in names
    ref = _package_encoder_state()
    mine = t.encoder.state_dict()
    assert set(mine) == {k for k in ref if not k.startswith("pooler.")}
    assert all(torch.equal(mine[k], ref[k]) for k in mine)
    trained = {n for n, q in names.items() if q.requires_grad}
    assert not any(n.startswith("encoder.embeddings.") for n in trained)
    layers = {int(n.split(".")[3]) for n in trained if n.startswith("encoder.encoder.layer.")}
    assert layers == {4, 5}  # the top two of six
    assert {"out.weight", "crf.transitions"} <= trained


def test_sat_run_trains_the_encoder_model_and_keeps_frozen_weights(tiny_data):
    """A study run of the SAT row trains an EncoderTagger on the encoder's WordPiece pieces (no
    word vocabulary from the training text); the smoke profile's frozen encoder leaves training
    exactly at the package's weights."""
    from deidlib.models.encoder_tagger import EncoderTagger

    params, data = tiny_data
    out = am_run.run_config(am.config_grid(params)[am.main_sat(params)], data, params, seed=0)
    assert isinstance(out.tagger, EncoderTagger) and out.record["kind"] == "minilm"
    assert out.tagger.featurizer.num_words == 2  # <pad>, <unk>: no training words
    ref = _package_encoder_state()
    assert all(torch.equal(v, ref[k]) for k, v in out.tagger.encoder.state_dict().items())
    assert out.record["n_parameters_total"] > out.record["n_parameters"]  # frozen encoder weights count apart


def test_tables_label_the_scratch_row_and_mark_inapplicable_cells(results):
    t42 = am.table_4_2(results).set_index("config")
    assert t42.loc["transformer-crf-d0.25", "model"] == "transformer (from scratch)"
    assert t42.loc["sat-crf-d0.25", "kind"] == "minilm" and "pre-trained" in t42.loc["sat-crf-d0.25", "model"]
    t43 = am.table_4_3(results).set_index("config")
    assert t43.loc["sat-crf-d0.25", "CE"] == "n/a (sub-words)"  # no character embedding to switch
    assert t43.loc["gru-nochar-crf-d0.5", "CE"] is False and t43.loc["gru-crf-d0.5", "CE"] is True
