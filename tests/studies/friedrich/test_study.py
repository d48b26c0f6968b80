"""Friedrich et al. (ACL 2019) study pieces: parameters, the score, the sweep summary and
Table 2 analog, the shared de-identification trainer, and the attack's controls (a
representation without privacy training must be attackable, or no "near chance" result means
anything)."""

import math

import numpy as np
import pandas as pd
import pytest

from deidlib.corpus.labels import TaggedSentence
from deidlib.corpus.tokenize import Token
from deidlib.embeddings.neighbours import NeighbourIndex
from deidlib.embeddings.public import PublicEmbeddings
from deidlib.studies import friedrich
from deidlib.studies.friedrich import adversarial as fa
from deidlib.studies.friedrich import claims as fclaims
from deidlib.studies.friedrich import pseudonymization as fp
from deidlib.studies.friedrich import tables as ftables
from deidlib.studies.friedrich.common import FriedrichData

EMB = 8


def test_profiles_resolve_and_bad_values_are_one_line_errors():
    for prof in ("smoke", "cpu", "paper"):
        p = friedrich.params_for(prof)
        assert p.profile == prof and min(p.adv_neighbours) >= 2
    paper = friedrich.params_for("paper")
    assert paper.neighbours == (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
    assert (paper.n_seeds, paper.frozen_epochs, paper.d, paper.deid_hidden, paper.deid_layers) == (5, 50, 50, 128, 2)
    cpu = friedrich.params_for("cpu")  # Figure 5's protocol at the cpu scale: K = 50, N up to 1000, spread over seeds
    assert cpu.frozen_epochs == 50 and cpu.adv_neighbours == (10, 100, 500, 1000) and cpu.adv_seeds >= 3
    assert cpu.controls and cpu.attack_sentences and cpu.attack_heldout
    with pytest.raises(ValueError, match="attack_sentences"):
        friedrich.params_for("smoke", attack_sentences=0)
    with pytest.raises(ValueError, match="attack_lr"):
        friedrich.params_for("smoke", attack_lr=0.0)
    with pytest.raises(ValueError, match="attack_batch_size"):
        friedrich.params_for("smoke", attack_batch_size=0)
    assert friedrich.params_for("smoke", neighbours=[1, 5]).neighbours == (1, 5)
    with pytest.raises(ValueError, match="embeddings"):
        friedrich.params_for("smoke", embeddings=("word2vec",))
    with pytest.raises(ValueError, match="adv_neighbours"):
        friedrich.params_for("smoke", adv_neighbours=(1, 10))
    with pytest.raises(ValueError, match="unknown friedrich parameters"):
        friedrich.params_for("smoke", neighbors=(1,))
    with pytest.raises(ValueError, match="even"):
        friedrich.params_for("smoke", d=7)


def _sweep_frame():
    rows = []
    for e, base in (("glove", 0.9), ("fasttext", 0.8)):
        for n, rel in ((1, 1.0), (100, 0.99), (1000, 0.5)):
            for s, jitter in ((0, -0.01), (1, 0.01)):
                rows.append({"embedding": e, "n": n, "seed": s, "f1": base * rel + jitter})
    return pd.DataFrame(rows)


def test_sweep_summary_relative_to_the_non_private_model_and_the_paper_shape():
    s = ftables.summarize_sweep(_sweep_frame())
    g = s[s.embedding == "glove"].set_index("n")
    assert g.loc[1, "f1_mean"] == pytest.approx(0.9) and g.loc[1, "relative_to_n1"] == pytest.approx(1.0)
    assert g.loc[1000, "relative_to_n1"] == pytest.approx(0.5)
    assert (g.loc[1000, "f1_min"], g.loc[1000, "f1_max"]) == pytest.approx((0.44, 0.46))
    assert (s.seeds == 2).all()
    # the paper: flat to 200, ~0.95 absolute at 500 and ~0.90 at 1000 from ~0.975
    assert fclaims.paper_relative(20) == 1.0 and fclaims.paper_relative(200) == 1.0
    assert fclaims.paper_relative(1000) == pytest.approx(0.90 / 0.975)
    assert 0.90 / 0.975 < fclaims.paper_relative(700) < 0.95 / 0.975
    chk = friedrich.pseudo_shape_checks({"summary": s})
    assert set(chk.n) == {100, 1000} and (chk[chk.n == 1000].ours_relative == 0.5).all()


def test_table2_rows_are_means_over_runs_with_the_papers_values():
    p = friedrich.params_for("smoke")
    sw = _sweep_frame()
    extra = pd.DataFrame([{"embedding": "glove", "f1": 0.7}, {"embedding": "glove", "f1": 0.8}])
    adv = pd.DataFrame([{"embedding": "glove", "f1": 0.6}])
    assert p.table_neighbours == 100
    t = ftables.table2(sw, extra, adv, p).set_index("model")
    assert t.loc["non-private GloVe", "f1_mean"] == pytest.approx(0.75)
    assert t.loc["non-private GloVe", "runs"] == 2 and t.loc["non-private GloVe", "paper"] == pytest.approx(0.9724)
    assert t.loc["non-private GloVe + casing", "f1_mean"] == pytest.approx(0.9)
    assert t.loc["non-private FastText", "f1_mean"] == pytest.approx(0.8)
    assert t.loc[f"pseudonymized N={p.table_neighbours} GloVe", "f1_mean"] == pytest.approx(0.9 * 0.99)
    assert t.loc[f"adversarial N={p.table_neighbours} GloVe", "f1_mean"] == pytest.approx(0.6)
    assert f"adversarial N={p.table_neighbours} FastText" not in t.index  # no runs, no row


# ----------------------------------------------------------------------------- toy data


def _embeddings():
    rng = np.random.default_rng(0)
    words = [f"name{i}" for i in range(60)] + [f"word{i}" for i in range(40)]
    return PublicEmbeddings("toy", words, rng.normal(size=(len(words), EMB)).astype(np.float32))


def _sentences(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        T = int(rng.integers(4, 8))
        words = [f"word{rng.integers(40)}" for _ in range(T)]
        tags = ["O"] * T
        i = int(rng.integers(T))
        words[i], tags[i] = f"Name{rng.integers(60)}", "B-PHI"
        out.append(TaggedSentence(f"d{k}", [Token(w, 0, len(w)) for w in words], tags))
    return out


@pytest.fixture(scope="module")
def toy():
    emb = _embeddings()
    data = FriedrichData(_sentences(160, 1), _sentences(40, 2), _sentences(200, 3), "toy", "fp")
    return data, emb, NeighbourIndex(emb)


def _tiny(**kw):
    base = dict(epochs=3, patience=2, deid_hidden=8, deid_layers=1, d=8, adv_hidden=16, p1_epochs=2, p2_epochs=2,
                p3_epochs=2, dann_epochs=2, frozen_epochs=2, lr=1e-2, batch_size=16, adv_neighbours=(10,),
                procedures=("three_phase", "dann"))
    return friedrich.params_for("smoke", **{**base, **kw})


def test_non_private_model_learns_and_is_deterministic(toy):
    data, emb, index = toy
    p = _tiny(epochs=6)
    a = fp.train_pseudonymized(data, emb, index, 1, p, seed=0)
    b = fp.train_pseudonymized(data, emb, index, 1, p, seed=0)
    assert a["f1"] > 0.8, a  # PHI words are their own vocabulary: easy
    assert a["f1"] == b["f1"] and a["epochs"] == b["epochs"]
    assert a["unchanged_draws"] == a["replaced"]  # N = 1 keeps every token
    c = fp.train_pseudonymized(data, emb, index, 20, p, seed=0)
    assert c["replaced"] == a["replaced"] and c["unchanged_draws"] < c["replaced"]


def test_adversarial_run_reports_f1_and_frozen_accuracy(toy):
    data, emb, index = toy
    p = _tiny()
    for proc, first in (("three_phase", "P1"), ("dann", "DANN")):
        r = fa.adversarial_run(data, emb, index, 10, p, procedure=proc, seed=0)
        assert r["stages"].split()[0] == first
        assert 0 <= r["adversary_accuracy"] <= 1 and r["adversary_pairs"] == 2 * 200
        assert 0 <= r["f1"] <= 1 and r["noise_std_in"] > 0
    with pytest.raises(ValueError, match="procedure"):
        fa.adversarial_run(data, emb, index, 10, p, procedure="gan", seed=0)


def test_the_raw_embedding_control_is_attackable(toy):
    """The yardstick: on R = E (no privacy at all) the same attack must beat chance clearly,
    else the budget is too small for any 'near chance' result to mean privacy."""
    data, emb, index = toy
    rows = fa.control_runs(data, emb, index, _tiny(frozen_epochs=25, epochs=2), seed=0)
    by = {r["procedure"]: r for r in rows}
    assert set(by) == set(fclaims.CONTROLS) and all(r["n"] == 10 for r in rows)
    n = by["control raw"]["adversary_pairs"]
    assert by["control raw"]["adversary_accuracy"] > 0.5 + 4 * math.sqrt(0.25 / n), by["control raw"]
    assert [c["epoch"] for c in by["control raw"]["curve"]] == [5, 10, 15, 20, 25]  # every K/5 epochs


def test_the_frozen_adversary_trains_on_its_own_pool_and_scores_held_out_pairs(toy):
    data, emb, index = toy
    pool, heldout = _sentences(120, 11), _sentences(70, 12)
    d = FriedrichData(data.train, data.dev, data.test, "toy", "fp", pool, heldout)
    r = fa.adversarial_run(d, emb, index, 10, _tiny(frozen_epochs=1), procedure="dann", seed=0)
    assert r["adversary_train_pairs"] == 2 * 120 and r["adversary_pairs"] == 2 * 70
    r0 = fa.adversarial_run(data, emb, index, 10, _tiny(frozen_epochs=1), procedure="dann", seed=0)
    assert r0["adversary_train_pairs"] == 2 * 160 and r0["adversary_pairs"] == 2 * 200  # default: train / test


@pytest.mark.parametrize("length_buckets", [True, False])
def test_length_buckets_batch_the_frozen_adversary_only_never_the_tagger(toy, monkeypatch, length_buckets):
    """Length-bucketed batches cost the three-phase and DANN taggers test F1: the procedure
    trains on uniformly shuffled batches whatever ``length_buckets`` says; only the frozen
    adversary (the attack) follows it."""
    from deidlib.privacy.adversarial import AdversarialTrainer

    data, emb, index = toy
    seen: dict[int, set] = {}
    real = AdversarialTrainer._batches

    def spy(self, items, rng):
        seen.setdefault(id(self), set()).add(self.bucket)
        return real(self, items, rng)

    monkeypatch.setattr(AdversarialTrainer, "_batches", spy)
    for proc in ("three_phase", "dann"):
        seen.clear()
        fa.adversarial_run(data, emb, index, 10, _tiny(frozen_epochs=1, length_buckets=length_buckets),
                           procedure=proc, seed=0)
        tagger, frozen = list(seen.values())  # in order of first use: the procedure, then the attack
        assert tagger == {False} and frozen == {length_buckets}, (proc, seen)


def test_figures_state_their_scale_and_bands_stay_non_negative():
    p = friedrich.params_for("smoke", n_seeds=2)
    sw = _sweep_frame().assign(f1=lambda d: d.f1 - 0.45)  # some minima below 0 before clipping
    res = {"params": p.__dict__ | {}, "summary": ftables.summarize_sweep(sw), "sizes": {"train": 10, "dev": 2, "test": 5},
           "corpus": "synthetic"}
    res["params"] = {k: v for k, v in res["params"].items()}
    fig = friedrich.figure4(res)
    ax = fig.axes[0]
    assert "smoke profile" in ax.get_title() and "2 seeds" in ax.get_title() and "epochs" in ax.get_title()
    for coll in ax.collections:  # min–max bands
        for path in coll.get_paths():
            assert path.vertices[:, 1].min() >= 0
    assert any(abs(line.get_ydata()[0] - 0.95) < 1e-9 for line in ax.get_lines() if len(line.get_ydata()) == 2)


def test_labels_cover_hipaa_phi_only():
    from deidlib.corpus.document import Document, Span
    from deidlib.studies.friedrich.common import _sentences

    text = "Mr Smith works as a plumber in Boston."
    spans = [Span.of(text, 3, 8, "PATIENT"), Span.of(text, 20, 27, "PROFESSION"), Span.of(text, 31, 37, "CITY")]
    (s,) = _sentences([Document("d1", text, spans)])
    tagged = {w for w, t in zip(s.words, s.tags) if t != "O"}
    assert tagged == {"Smith", "Boston"}  # PROFESSION is not a HIPAA identifier


class _StubTrainer:
    """Dev loss flat; the head tags the dev PHI token from epoch ``phi_from`` on (F1 1 then)."""

    def __init__(self, phi_from):
        self.phi_from, self.epoch, self.batch_size, self.seed = phi_from, 0, 1, 0
        self.dev = [TaggedSentence("d", [Token("a", 0, 1), Token("b", 2, 3)], ["B-PHI", "O"])]

    def run_epoch(self, phase):
        self.epoch += 1

    def predict(self, items):
        return [["B-PHI" if self.epoch >= self.phi_from else "O", "O"] for _ in items]

    def state(self, components):
        return {"epoch": self.epoch}

    def load(self, state):
        self.loaded = state


@pytest.mark.parametrize("phi_from, epochs, stalled, best", [(1, 3, 0, 1), (5, 7, 3, 5), (99, 10, 9, 1)])
def test_early_stopping_keeps_training_while_all_o_and_restores_the_best_dev_f1(monkeypatch, phi_from, epochs,
                                                                               stalled, best):
    from deidlib.studies.friedrich import common

    monkeypatch.setattr(common, "AdversarialTrainer", lambda *a, **k: _StubTrainer(phi_from))
    monkeypatch.setattr(common, "_dev_deid_loss", lambda trainer, items: 1.0)  # flat: never the reason to go on
    trainer, info = common.train_deid(None, None, None, [], [], _tiny(epochs=10, patience=2), seed=0)
    # all-O epochs (F1 0, loss flat) do not count towards patience; a flat F1 after it tags PHI does
    assert (info["epochs"], info["stalled_all_o"]) == (epochs, stalled)
    assert trainer.loaded == {"epoch": best}  # the first state with the best dev F1
    assert info["dev_f1"] == (1.0 if phi_from <= 10 else 0.0)


def test_each_procedure_is_read_against_the_weaker_control():
    """A procedure near chance reads as private only where both controls are attacked at >= 0.8;
    with a control below it the attack is too weak to judge."""

    def summary(raw, p1, tp, dann):
        rows = [("control raw", 100, raw), ("control P1", 100, p1), ("three_phase", 100, tp), ("dann", 100, dann)]
        return pd.DataFrame([{"embedding": "glove", "procedure": p, "n": n, "adversary_mean": a, "adversary_min": a,
                              "adversary_max": a, "seeds": 3, "f1_mean": 0.9} for p, n, a in rows])

    chk = friedrich.adv_shape_checks({"summary": summary(0.86, 0.90, 0.52, 0.85)}).set_index("procedure")
    assert chk.loc["three_phase", "control_accuracy"] == 0.86
    assert chk.loc["three_phase", "reading"].startswith("near chance while the controls are broken")
    assert chk.loc["dann", "reading"] == "broken like the controls"
    weak = friedrich.adv_shape_checks({"summary": summary(0.86, 0.62, 0.52, 0.7)}).set_index("procedure")
    assert weak.loc["three_phase", "reading"].startswith("attack too weak to judge")
    assert weak.loc["control raw", "reading"] == "control"
    leak = friedrich.adv_shape_checks({"summary": summary(0.86, 0.9, 0.7, 0.9)}).set_index("procedure")
    assert leak.loc["three_phase", "reading"].startswith("leaks")


def test_run_study_runs_the_experiment_its_argument_names(toy, monkeypatch):
    from deidlib.studies.friedrich import run

    data, emb, _ = toy
    monkeypatch.setattr(run, "prepare_data", lambda params, **kw: data)
    monkeypatch.setattr(run, "load_embeddings", lambda name, params, **kw: emb)
    p = _tiny(embeddings=("glove",), neighbours=(1, 2), n_seeds=1, adv_seeds=1, controls=False,
              procedures=("dann",), table_neighbours=10)
    pseudo = friedrich.run_study(p, experiment="pseudonymization", adversarial_rows=False)
    assert isinstance(pseudo, run.PseudoResults) and isinstance(pseudo, friedrich.FriedrichResults)
    assert sorted(pseudo.sweep.n) == [1, 2] and pseudo["table2"] is pseudo.table2
    assert "non-private GloVe + casing" in set(pseudo.table2.model) and pseudo.adversarial_table_runs is None
    adv = friedrich.run_study(p, experiment="adversarial")
    assert isinstance(adv, run.AdvResults) and list(adv.runs.procedure) == ["dann"]
    assert adv.sizes["attack_train"] == len(data.train) and len(adv.summary) == 1
    with pytest.raises(ValueError, match="unknown friedrich experiment 'figure5'; choose one of pseudonymization, adversarial"):
        friedrich.run_study(p, experiment="figure5")
    with pytest.raises(TypeError, match="resolved FriedrichParams"):
        friedrich.run_study("smoke", experiment="adversarial")
