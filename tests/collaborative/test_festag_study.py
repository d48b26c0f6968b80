"""festag study analysis (Table 3, Figure 6, checks) and the binary token evaluator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from deidlib.studies import festag


def _results():
    runs = []
    for seed in (0, 1):
        runs.append({"experiment": "A", "seed": seed, "records": [
            {"epoch": 1, "site": "global", "f1": 0.5 + seed / 10, "dev_f1": 0.5},
            {"epoch": 2, "site": "global", "f1": 0.8 + seed / 10, "dev_f1": 0.6}]})
        runs.append({"experiment": "B", "seed": seed, "records": [
            {"epoch": 1, "site": "global", "f1": 0.5, "dev_f1": 0.5}, {"epoch": 2, "site": "global", "f1": 0.8,
                                                                       "dev_f1": 0.6}]})
        for name, base in (("C_0.1", 0.7), ("C_0.5", 0.4), ("D", 0.6)):
            recs = []
            for e in (1, 2):
                for i in range(3):
                    f1 = base + 0.01 * i + 0.05 * e + 0.01 * seed
                    recs.append({"epoch": e, "site": f"site{i + 1}", "f1": f1,
                                 **{f"dev_f1@site{j + 1}": f1 - 0.1 * (j != i) for j in range(3)}})
            runs.append({"experiment": name, "seed": seed, "records": recs})
    return {"experiments": list(festag.EXPERIMENTS), "runs": runs, "seeds": [0, 1], "corpus": "x", "profile": "smoke",
            "params": {"patience": None}}


def test_table3_hand_computed():
    t = festag.table3(_results())
    assert t.loc["A", "mean"] == pytest.approx(0.85) and t.loc["A", "min"] == pytest.approx(0.8)
    assert t.loc["A", "max"] == pytest.approx(0.9) and t.loc["A", "n"] == 2
    # C_0.1 at epoch 2: 0.8 + {0, .01, .02} + {0, .01}
    assert t.loc["C_0.1", "min"] == pytest.approx(0.8) and t.loc["C_0.1", "max"] == pytest.approx(0.83)
    assert t.loc["C_0.1", "mean"] == pytest.approx(0.815) and t.loc["C_0.1", "n"] == 6


def test_shape_checks_and_figure():
    r = _results()
    c = festag.shape_checks(r)
    assert c["A_minus_B"] == pytest.approx(0.05)
    assert c["C01_minus_D"] == pytest.approx(0.1)
    assert c["fluctuation_C01"] == pytest.approx(0.05)  # epochs 1 -> 2: +0.05 for every worker
    fig = festag.figure6(r)
    assert len(fig.axes) == 2
    labels = [line.get_label() for line in fig.axes[1].get_lines() if not line.get_label().startswith("_")]
    assert [lab.split()[0] for lab in labels] == ["D", "C_0.5", "B", "A"]
    # every series has its band: one filled area per series, A and B over seeds too
    assert len(fig.axes[0].collections) == 4
    a_band = fig.axes[0].collections[3].get_paths()[0].vertices[:, 1]
    assert a_band.min() == pytest.approx(0.5) and a_band.max() == pytest.approx(0.9)  # min of seed 0, max of seed 1


def test_table3_best_epoch_and_theta_table():
    r = _results()
    best = festag.table3(r, at="best")
    # A's best epoch is its last: 0.8 / 0.9; C_0.5 rises too, so best == final here
    assert best.loc["A", "mean"] == pytest.approx(0.85)
    assert best.loc["C_0.5", "n"] == 6
    r["runs"][0]["records"][1]["f1"] = 0.1  # seed 0's A collapses on test at its last epoch, dev still rises
    assert festag.table3(r, at="best").loc["A", "min"] == pytest.approx(0.1)  # dev chose epoch 2: test unseen
    assert festag.table3(r).loc["A", "min"] == pytest.approx(0.1)
    with pytest.raises(ValueError):
        festag.table3(r, at="median")
    r["params"] = {"theta_d": 0.1, "theta_d_high": 0.5, "epochs": 2}
    sweep = {"seed": 1, "thetas": [1.0], "runs": [
        {"experiment": "C_1", "seed": 1, "theta_d": 1.0,
         "records": [{"epoch": e, "site": f"site{i}", "f1": 0.3 + 0.1 * i + 0.1 * e} for e in (1, 2) for i in range(2)]}]}
    t = festag.theta_table(r, sweep)
    assert list(t.theta_d.dropna()) == [0.1, 0.5, 1.0]
    c1 = t[t.experiment == "C_1"].iloc[0]
    assert (c1.final_min, c1.final_mean, c1.final_max) == pytest.approx((0.5, 0.55, 0.6))
    c01 = t[t.experiment == "C_0.1"].iloc[0]  # seed 1's C_0.1 at epoch 2: 0.81 + {0, .01, .02}
    assert c01.final_mean == pytest.approx(0.82)
    assert set(t[t.theta_d.isna()].experiment) == {"A", "B", "D"}
    fig = festag.figure_theta_sweep(r, sweep)
    assert fig.axes[0].get_xscale() == "log"


def test_params_for_overrides_and_errors():
    p = festag.params_for("smoke", epochs=3, theta_d=0.2, tagger={"dropout": 0.1})
    assert p.epochs == 3 and p.theta_d == 0.2 and p.tagger["dropout"] == 0.1
    assert p.tagger["token_hidden"] == festag.PROFILE_PARAMS["smoke"].tagger["token_hidden"]
    assert festag.params_for("paper").epochs == 200 and festag.params_for("paper").batch_size == 1
    assert festag.params_for("paper").lr == 0.9
    # the cpu profile keeps the paper's optimisation: batch 1, lr 0.9, no clipping, NeuroNER's loss
    cpu = festag.params_for("cpu")
    assert (cpu.batch_size, cpu.lr, cpu.grad_clip, cpu.loss, cpu.n_seeds) == (1, 0.9, None, "token_mean", 3)
    with pytest.raises(ValueError, match="loss"):
        festag.params_for("smoke", loss="sum")
    with pytest.raises(ValueError, match="theta_d_sweep"):
        festag.params_for("smoke", theta_d_sweep=(0.0,))
    assert festag.params_for("cpu", negatives_per_positive=1).negatives_per_positive == 1
    with pytest.raises(ValueError):
        festag.params_for("nope")
    with pytest.raises(ValueError, match="unknown festag"):
        festag.params_for("smoke", bogus=1)


@dataclass
class _Sent:
    words: list
    tags: list

    @property
    def tokens(self):
        return self.words


class _Feat:
    labels = ["O", "I-DATE", "I-PATIENT"]

    def encode(self, tokens, tags=None):
        from deidlib.models.protocol import Batch

        t = max(len(s) for s in tokens)
        ids = torch.zeros(len(tokens), t, dtype=torch.long)
        mask = torch.zeros(len(tokens), t, dtype=torch.bool)
        for i, s in enumerate(tokens):
            ids[i, : len(s)] = torch.tensor([int(w) for w in s])
            mask[i, : len(s)] = True
        return Batch(word_ids=ids, mask=mask)


class _EchoModel(torch.nn.Module):
    """Predicts the label id written in the token text."""

    featurizer = _Feat()

    def predict(self, batch):
        return [row[m].tolist() for row, m in zip(batch.word_ids, batch.mask)]


def test_binary_token_evaluator_hand_computed():
    test = [
        _Sent(["0", "1", "2"], ["O", "I-DATE", "O"]),  # pred PHI at 1 (TP), 2 (FP)
        _Sent(["0", "0"], ["I-PATIENT", "O"]),  # FN
        _Sent(["2"], ["I-DATE"]),  # TP (wrong class still counts: binary scoring)
    ]
    ev = festag.binary_token_evaluator(test, batch_size=2)
    s = ev(_EchoModel())
    assert s["precision"] == pytest.approx(2 / 3) and s["recall"] == pytest.approx(2 / 3)
    assert s["f1"] == pytest.approx(2 / 3)


def _former_festag_scores(test, model):
    """festag's own P/R/F1 before it called the scorer (kept here as the reference)."""
    labels = model.featurizer.labels
    gold = np.concatenate([[t != "O" for t in s.tags] for s in test]).astype(bool)
    pred = np.concatenate([[labels[int(w)] != "O" for w in s.words] for s in test]).astype(bool)
    tp, fp, fn = int((pred & gold).sum()), int((pred & ~gold).sum()), int((~pred & gold).sum())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f}, gold, pred


@pytest.mark.parametrize("seed", range(6))
def test_binary_token_evaluator_gives_the_former_numbers_through_the_scorer(seed):
    """Same numbers, bit for bit, as festag's former hand-written P/R/F1, and as sklearn's
    binary scores; includes sets with no predicted or no gold PHI (scores 0)."""
    from sklearn.metrics import precision_recall_fscore_support

    rng = np.random.default_rng(seed)
    phi_rate = (0.0, 0.05, 0.3, 0.5, 0.9, 1.0)[seed]
    test = []
    for _ in range(int(rng.integers(1, 12))):
        n = int(rng.integers(1, 9))
        tags = ["O" if rng.random() >= phi_rate else "I-DATE" for _ in range(n)]
        words = [str(int(rng.integers(0, 3))) if seed else "0" for _ in range(n)]
        test.append(_Sent(words, tags))
    got = festag.binary_token_evaluator(test, batch_size=3)(_EchoModel())
    want, gold, pred = _former_festag_scores(test, _EchoModel())
    assert got == want
    p, r, f, _ = precision_recall_fscore_support(gold, pred, average="binary", zero_division=0)
    assert (got["precision"], got["recall"], got["f1"]) == pytest.approx((p, r, f))


def _deps_missing() -> str | None:
    try:
        from deidlib.corpus.splits import partition_by_patient  # noqa: F401
        from deidlib.datasets import load_corpus  # noqa: F401
        from deidlib.models import build_tagger  # noqa: F401
    except ImportError as e:  # the foundation / tagger are written in parallel
        return str(e)
    return None


@pytest.mark.skipif(_deps_missing() is not None, reason=f"dependencies not available: {_deps_missing()}")
def test_run_study_smoke_end_to_end():
    r = festag.run_study(festag.params_for("smoke", epochs=1), seeds=[0], experiments=["A", "C_0.1", "D"],
                         progress=False)
    assert set(r) == set(festag.FestagResults.__annotations__) and r["params"]["profile"] == "smoke"
    t = festag.table3(r)
    assert set(t.index) == {"A", "C_0.1", "D"}
    assert np.isfinite(t["mean"]).all() and (t["max"] <= 1).all()
    assert t.loc["D", "n"] == len(r["data"][0]["site_names"]) > 1


def test_best_table_takes_the_test_score_at_the_dev_selected_epoch_not_the_test_max():
    r = _results()
    a0 = r["runs"][0]["records"]  # seed 0's A: test 0.5 -> 0.8
    a0[0]["dev_f1"], a0[1]["dev_f1"] = 0.7, 0.4  # dev prefers epoch 1
    best = festag.table3(r, at="best")
    assert best.loc["A", "min"] == pytest.approx(0.5)  # the test max (0.8) would be chosen on test
    sel = festag.selection(r).set_index(["experiment", "seed", "site"])
    assert sel.loc[("A", 0, "global"), "selected_epoch"] == 1
    # a worker is selected on its own site's dev split, not on another site's
    c = r["runs"][2]["records"]  # C_0.1 seed 0
    for rec in c:
        if rec["site"] == "site1":
            rec["dev_f1@site1"] = 0.9 if rec["epoch"] == 1 else 0.2
            rec["dev_f1@site2"] = 0.1 if rec["epoch"] == 1 else 0.95
    sel = festag.selection(r).set_index(["experiment", "seed", "site"])
    assert sel.loc[("C_0.1", 0, "site1"), "selected_epoch"] == 1
    for rec in r["runs"][0]["records"]:
        del rec["dev_f1"]
    with pytest.raises(ValueError, match="dev scores"):
        festag.table3(r, at="best")


def test_select_epoch_stops_patience_epochs_after_the_dev_best():
    assert festag.select_epoch([0.1, 0.3, 0.2, 0.25, 0.9], patience=2) == (1, 3)  # 0.9 comes too late
    assert festag.select_epoch([0.1, 0.3, 0.2, 0.25, 0.9], patience=None) == (4, 4)
    assert festag.select_epoch([0.5, 0.5, 0.5], patience=5) == (0, 2)  # ties: the first; never fired
    # a flat start (no PHI predicted yet) does not stop a unit before min_epochs
    assert festag.select_epoch([0.0, 0.0, 0.0, 0.0, 0.4, 0.5], patience=2) == (0, 2)
    assert festag.select_epoch([0.0, 0.0, 0.0, 0.0, 0.4, 0.5], patience=2, min_epochs=5) == (5, 5)
    with pytest.raises(ValueError):
        festag.select_epoch([], patience=1)


def test_stop_rule_reads_dev_scores_of_every_unit_never_test():
    from types import SimpleNamespace

    stop = festag.stop_rule(1)

    def hist(*recs):
        return SimpleNamespace(records=list(recs))

    # A/B: the pooled dev falls while test rises -> stop; dev rises while test falls -> go on
    assert stop(hist({"epoch": 1, "site": "global", "f1": 0.1, "dev_f1": 0.5},
                     {"epoch": 2, "site": "global", "f1": 0.9, "dev_f1": 0.4}))
    assert not stop(hist({"epoch": 1, "site": "global", "f1": 0.9, "dev_f1": 0.4},
                         {"epoch": 2, "site": "global", "f1": 0.1, "dev_f1": 0.5}))
    # C/D: each worker on its own site's dev; the run goes on until every worker has fired
    w = [{"epoch": 1, "site": "s1", "f1": 0.5, "dev_f1@s1": 0.5, "dev_f1@s2": 0.1},
         {"epoch": 1, "site": "s2", "f1": 0.5, "dev_f1@s1": 0.1, "dev_f1@s2": 0.5},
         {"epoch": 2, "site": "s1", "f1": 0.9, "dev_f1@s1": 0.4, "dev_f1@s2": 0.9},
         {"epoch": 2, "site": "s2", "f1": 0.1, "dev_f1@s1": 0.1, "dev_f1@s2": 0.6}]
    assert not stop(hist(*w))  # s1 fired, s2 still improves on its own dev
    w[3]["dev_f1@s2"] = 0.3
    assert stop(hist(*w))
    assert not festag.stop_rule(None)(hist(*w))


def test_sites_are_the_documents_own_sites_when_they_carry_several():
    from deidlib.synthetic import generate

    docs = list(generate(patients=12, sites=3, seed=0))
    assert len({d.site for d in docs}) > 1
    params = festag.params_for("smoke")
    mode, names, groups = festag.site_groups(docs, params, seed=0)
    assert mode == "documents" and names == sorted({d.site for d in docs})
    assert all({d.site for d in g} == {n} for n, g in zip(names, groups))
    assert sum(map(len, groups)) == len(docs)
    # the random patient partition stays available, and is what one-site corpora get
    mode, names, groups = festag.site_groups(docs, festag.params_for("smoke", site_split="random"), seed=0)
    assert mode == "random" and len(groups) == params.n_sites
    assert any(len({d.site for d in g}) > 1 for g in groups)
    for d in docs:
        d.site = "only"
    mode, _, groups = festag.site_groups(docs, params, seed=0)
    assert mode == "random" and len(groups) == params.n_sites
    with pytest.raises(ValueError, match="site_split"):
        festag.params_for("smoke", site_split="hospital")


@pytest.mark.skipif(_deps_missing() is not None, reason=f"dependencies not available: {_deps_missing()}")
def test_every_strategy_records_dev_scores_and_a_dev_selected_epoch():
    r = festag.run_study(festag.params_for("smoke", epochs=3, patience=1), seeds=[0], progress=False)
    d = r["data"][0]
    assert d["site_split"] == "documents" and all(n > 0 for n in d["dev_sentences"])
    sel = festag.selection(r)
    assert set(sel.experiment) == set(festag.EXPERIMENTS)
    assert sel.selected_epoch.notna().all() and (sel.selected_epoch <= sel.stop_epoch).all()
    for run in r["runs"]:
        for rec in run["records"]:
            assert festag.dev_key(rec["site"]) in rec  # the stopping rule's input for every unit
            assert set(d["site_names"]) <= {k.split("@")[1] for k in rec if k.startswith("dev_f1@")}
    # the same rule stopped every run: no unit trained past patience epochs after its dev best
    assert ((sel.stop_epoch - sel.selected_epoch) <= 1).all()


def test_heterogeneity_table_compares_levels_on_the_same_seeds_and_measures_the_site_gap():
    r = _results()
    r["params"] = {"patience": None, "heterogeneity": 0.8}
    flat = _results()
    flat["params"] = {"patience": None, "heterogeneity": 0.0}
    flat["experiments"] = ["A", "D"]
    flat["runs"] = [x for x in flat["runs"] if x["experiment"] in ("A", "D") and x["seed"] == 0]
    for x in flat["runs"]:
        for rec in x["records"]:
            for k in rec:
                if k.startswith("dev_f1@"):
                    rec[k] = rec["f1"]  # alike sites: a worker scores the same on every site's dev
    het = {"levels": [0.0], "seeds": [0], "runs": [flat]}
    t = festag.heterogeneity_table(r, het).set_index(["heterogeneity", "experiment"])
    assert set(t.index) == {(0.0, "A"), (0.0, "D"), (0.8, "A"), (0.8, "D")}
    assert t.loc[(0.8, "A"), "best_mean"] == pytest.approx(0.8)  # seed 0 only, not seed 1's 0.9
    assert t.loc[(0.8, "D"), "cross_site_gap"] == pytest.approx(0.1)  # own dev − other sites' dev
    assert t.loc[(0.0, "D"), "cross_site_gap"] == pytest.approx(0.0)
    fig = festag.figure_heterogeneity(r, het)
    assert len(fig.axes) == 2
