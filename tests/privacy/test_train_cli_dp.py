"""``deidlib train --dp-*`` as a user runs it (and σ = 0): the default
is secure randomness and a DP vocabulary; the printed guarantee is what holds."""

import json
import math
from collections import Counter

import pytest
import torch

from deidlib.cli import main
from deidlib.corpus.tokenize import tokenize
from deidlib.datasets import load_corpus
from deidlib.embeddings.vectors import normalize_token
from deidlib.privacy.accounting import epsilon

SMALL = ["--model", "gru", "--scheme", "binary", "--batch-size", "8", "--dp-accountant", "rdp",
         "--set", "word_dim=12", "--set", "hidden=8", "--set", "char_hidden=6", "--set", "char_emb_dim=6",
         "--set", "ff_dim=8"]
FEW_STEPS = ["--epochs", "0.03"]


def _run(out, *extra):
    rc = main(["train", str(out), *SMALL, "--dp-noise", "1.2", *extra])
    assert rc == 0
    return json.loads((out / "privacy.json").read_text()), json.loads((out / "scores.json").read_text())


def _weights(out):
    return torch.load(out / "model" / "weights.pt", map_location="cpu")


def _vocabulary(out):
    return json.loads((out / "model" / "config.json").read_text())["featurizer"]["words"]


def test_default_dp_noise_is_secure_not_derived_from_the_seed(tmp_path, capsys):
    # noise from seeded generators, with the seed in scores.json, would be known to anyone reading it
    a, sa = _run(tmp_path / "a", *FEW_STEPS, "--seed", "4")
    b, _ = _run(tmp_path / "b", *FEW_STEPS, "--seed", "4")
    assert a["secure_rng"] and a["guarantee"]["randomness"] == "os-csprng" and "rng_note" not in a
    assert sa["dp_randomness"] == "os-csprng" and "seed" not in sa["dp_guarantee"]
    wa, wb = _weights(tmp_path / "a"), _weights(tmp_path / "b")
    assert all(not torch.equal(wa[k], wb[k]) for k in wa if wa[k].is_floating_point())
    assert "WARNING" not in capsys.readouterr().err


def test_seeded_dp_noise_needs_a_flag_and_says_the_guarantee_fails_for_seed_holders(tmp_path, capsys):
    a, sa = _run(tmp_path / "a", *FEW_STEPS, "--dp-seeded-noise", "--seed", "4")
    out = capsys.readouterr()
    b, _ = _run(tmp_path / "b", *FEW_STEPS, "--dp-seeded-noise", "--seed", "4")
    claim = "does NOT hold against anyone who holds the seed"
    assert not a["secure_rng"] and claim in a["rng_note"] and claim in a["guarantee"]["text"]
    assert a["guarantee"]["randomness"] == "seeded" and sa["dp_randomness"] == "seeded"
    assert claim in sa["dp_guarantee"] and claim in out.out and "WARNING" in out.err
    wa, wb = _weights(tmp_path / "a"), _weights(tmp_path / "b")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)  # reproducible, which is the point of the flag
    assert _vocabulary(tmp_path / "a") == _vocabulary(tmp_path / "b")
    assert main(["train", str(tmp_path / "c"), "--dp-noise", "1", "--dp-seeded-noise", "--dp-secure"]) == 2


def _training_only_phi_words():
    """Normalised tokens of NAME/ID/CONTACT/LOCATION spans of the CLI's training split that are
    seen at least twice in training (a non-private count-threshold vocabulary keeps those) and never in dev/test."""
    sp = load_corpus("synthetic", profile="smoke", seed=0)

    def phi_words(docs):
        c = Counter()
        for d in docs:
            for s in d.spans:
                if s.category in ("NAME", "ID", "CONTACT", "LOCATION"):
                    c.update(normalize_token(t.text) for t in tokenize(s.text))
        return c

    def all_words(docs):
        return Counter(normalize_token(t.text) for d in docs for t in tokenize(d.text))

    train_all = all_words(sp.train)
    elsewhere = set(all_words(sp.dev + sp.test))
    return {w for w in phi_words(sp.train) if train_all[w] >= 2 and w not in elsewhere and len(w) > 2}


def test_default_vocabulary_is_dp_and_holds_no_training_only_phi(tmp_path, capsys):
    # a vocabulary of every training word seen twice ships training PHI (240 of 491 PHI tokens) under "(ε, δ)-DP"
    rare_phi = _training_only_phi_words()
    assert len(rare_phi) > 50  # the training split has PHI that a count-threshold vocabulary would ship
    priv, scores = _run(tmp_path / "dp", *FEW_STEPS)
    vocab = set(_vocabulary(tmp_path / "dp"))
    assert not (vocab & rare_phi), sorted(vocab & rare_phi)[:10]
    v = priv["vocabulary"]
    assert v["source"] == "dp" and v["covered_by_dp"] is True and len(vocab) == v["size"] + 2
    assert "vocabulary" not in priv["not_covered_by_dp"]
    # the printed ε composes the vocabulary's Gaussian phase with DP-SGD (same accountant), and
    # the threshold's δ: (ε_A + ln(1/(1-δτ)), δ_A + δτ) with δ_A + δτ = --dp-delta
    d_tau = v["delta_threshold"]
    assert priv["history"] == [[v["noise_multiplier"], 1.0, 1]] and priv["delta"] == pytest.approx(1e-5 - d_tau)
    e_a = epsilon(1.2, priv["sample_rate"], priv["steps"], 1e-5 - d_tau, "rdp", history=[(4.0, 1.0, 1)])
    assert priv["epsilon"] == pytest.approx(e_a, rel=1e-12)
    g = priv["guarantee"]
    assert g["epsilon"] == pytest.approx(e_a - math.log1p(-d_tau), rel=1e-12) and g["delta"] == pytest.approx(1e-5)
    assert g["epsilon"] > epsilon(1.2, priv["sample_rate"], priv["steps"], 1e-5, "rdp")  # the vocabulary costs ε
    assert scores["dp_epsilon"] == g["epsilon"] and "word vocabulary" in g["text"]
    assert f"({g['epsilon']:.3g}, 1e-05)-DP per sentence for the weights and the word vocabulary" in \
        capsys.readouterr().out


def test_training_vocabulary_is_opt_in_and_stated_as_not_covered(tmp_path, capsys):
    priv, scores = _run(tmp_path / "tr", *FEW_STEPS, "--dp-vocab", "training")
    head = capsys.readouterr().out
    assert "the vocabulary is NOT covered" in priv["guarantee"]["text"] and "NOT covered" in head
    assert priv["vocabulary"]["covered_by_dp"] is False and "vocabulary" in priv["not_covered_by_dp"]
    assert priv["history"] == [] and priv["guarantee"]["epsilon"] == priv["epsilon"]
    assert _training_only_phi_words() & set(_vocabulary(tmp_path / "tr"))  # what the default prevents
    # a public word list is used as given
    (tmp_path / "words.txt").write_text("the\npatient\nStable\n")
    priv, _ = _run(tmp_path / "pub", *FEW_STEPS, "--dp-vocab", str(tmp_path / "words.txt"))
    assert _vocabulary(tmp_path / "pub") == ["<pad>", "<unk>", "the", "patient", "stable"]
    assert "only if" in priv["vocabulary"]["covered_by_dp"]
    assert main(["train", str(tmp_path / "x"), "--dp-noise", "1", "--dp-vocab", str(tmp_path / "none.txt")]) == 2


@pytest.mark.parametrize("sigma", ["0", "-1"])
def test_zero_noise_is_refused_with_a_clear_error(tmp_path, capsys, sigma):
    # main printed "(inf, 1e-05)-DP" and exited 0
    assert main(["train", str(tmp_path / "z"), *SMALL, "--dp-noise", sigma]) == 2
    err = capsys.readouterr().err
    assert "--dp-noise must be > 0" in err and "no privacy guarantee" in err and "Traceback" not in err
    assert not (tmp_path / "z").exists()


def test_dp_recipe_trains_a_releasable_model_with_a_public_vocabulary(tmp_path, capsys, monkeypatch):
    """``--dp-recipe``: the recipe's model at --dp-epsilon with OS randomness, a privacy.json that
    names the unit, the public vocabulary and the public pre-training, and a model that loads."""
    pytest.importorskip("all_minilm_l6_v2")
    from deidlib.studies import dp_recipes
    from deidlib.training import load_tagger

    tiny = dp_recipes.with_overrides(dp_recipes.RECIPES["synthetic_minilm"], name="tiny", tagger={"hidden": 8},
                                     batch_size=8, epochs=1, pretrain_profile="smoke", pretrain_epochs=1)
    monkeypatch.setitem(dp_recipes.RECIPES, "tiny", tiny)
    out = tmp_path / "m"
    assert main(["train", str(out), "--scheme", "binary", "--dp-recipe", "tiny", "--dp-epsilon", "6",
                 "--dp-accountant", "rdp"]) == 0
    priv = json.loads((out / "privacy.json").read_text())
    scores = json.loads((out / "scores.json").read_text())
    assert priv["secure_rng"] and priv["guarantee"]["randomness"] == "os-csprng"
    assert priv["epsilon"] <= 6 + 1e-6 and priv["unit"] == "sentence" and priv["recipe"]["name"] == "tiny"
    assert "public" in priv["guarantee"]["text"] and "synthetic corpus" in priv["guarantee"]["text"]
    assert scores["dp_recipe"] == "tiny" and scores["model"] == "minilm" and 0 <= scores["test_f1"] <= 1
    assert load_tagger(out / "model").featurizer.words == ["<pad>", "<unk>"]
    assert "DP-SGD recipe tiny" in capsys.readouterr().out


def test_dp_recipe_refusals(tmp_path, capsys):
    assert main(["train", str(tmp_path / "a"), "--dp-recipe", "nope", "--dp-epsilon", "8"]) == 2
    assert "unknown --dp-recipe" in capsys.readouterr().err
    assert main(["train", str(tmp_path / "b"), "--dp-recipe", "minilm"]) == 2
    assert "--dp-epsilon" in capsys.readouterr().err
    assert main(["train", str(tmp_path / "c"), "--dp-recipe", "thesis", "--dp-epsilon", "8"]) == 2
    assert "vocabulary of training words" in capsys.readouterr().err


def _real_format_corpus(folder, corpus):
    """A tiny corpus in a real corpus' on-disk format (i2b2 XML or PhysioNet id.text/id-phi.phrase),
    written from synthetic notes; returns its documents as read back."""
    from deidlib.corpus.i2b2 import write_i2b2_dir

    docs = load_corpus("synthetic", profile="smoke", seed=5, patients=10, sites=2).all
    folder.mkdir()
    if corpus == "i2b2":
        write_i2b2_dir(docs, folder)
    else:
        pids = {p: i + 1 for i, p in enumerate(sorted({d.patient_id for d in docs}))}
        text, phrases, seen = [], [], Counter()
        for d in docs:
            pid = pids[d.patient_id]
            seen[pid] += 1
            text.append(f"START_OF_RECORD={pid}||||{seen[pid]}||||\n{d.text}||||END_OF_RECORD\n")
            phrases += [f"{pid} {seen[pid]} {s.start} {s.end} {'HCPName' if s.category == 'NAME' else 'Date'} {s.text}\n"
                        for s in d.spans if s.category in ("NAME", "DATE") and "\n" not in s.text]
        (folder / "id.text").write_text("".join(text))
        (folder / "id-phi.phrase").write_text("".join(phrases))
    return load_corpus(corpus, data_dir=folder, seed=0)


@pytest.mark.parametrize("corpus", ["i2b2", "physionet"])
def test_dp_training_on_a_real_corpus_copies_no_test_note_unless_asked(tmp_path, capsys, corpus):
    """Under DP on a real corpus no output file holds a test note's text or name (the predictions
    are written only with --write-test-predictions), and privacy.json names what the guarantee
    leaves out: the held-out notes' scores, the predictions when written, the hyperparameters."""
    splits = _real_format_corpus(tmp_path / "data", corpus)
    assert splits.test
    args = ["train", "--corpus", corpus, "--data-dir", str(tmp_path / "data"), *SMALL, "--dp-epsilon", "5",
            *FEW_STEPS, "--seed", "0"]
    assert main([args[0], str(tmp_path / "out"), *args[1:]]) == 0
    out = tmp_path / "out"
    assert not (out / "test_predictions").exists()
    lines = {ln.strip() for d in splits.test for ln in d.text.splitlines() if len(ln.strip()) >= 25}
    assert lines  # the check below has something to find
    for f in out.rglob("*"):
        if f.is_file():
            body = f.read_bytes().decode("utf-8", errors="replace")
            leaked = [ln for ln in lines if ln in body]
            assert not leaked, f"{f.relative_to(out)} holds test-note text: {leaked[0][:40]!r}"
            assert not any(d.id in f.name for d in splits.test), f.name
    priv = json.loads((out / "privacy.json").read_text())
    assert {"test_scores", "dev_scores", "hyperparameters"} <= set(priv["not_covered_by_dp"])
    assert "test_predictions" not in priv["not_covered_by_dp"]
    assert "not covered: test_scores" in capsys.readouterr().out
    # asked for: written, and named as not covered
    assert main([args[0], str(tmp_path / "asked"), *args[1:], "--write-test-predictions"]) == 0
    written = sorted(p.stem for p in (tmp_path / "asked" / "test_predictions").glob("*.xml"))
    assert written == sorted(d.id for d in splits.test)
    priv = json.loads((tmp_path / "asked" / "privacy.json").read_text())
    assert "verbatim" in priv["not_covered_by_dp"]["test_predictions"]
