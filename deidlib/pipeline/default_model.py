"""The default de-identification model of ``deidlib deidentify``: trained on the embedded
synthetic corpus only, so it contains no real data, built on first use and cached.

**Choice.** The model is not shipped in the repository: it is a function of the
code (the synthetic generator, the tagger, the trainer) and of :data:`DEFAULT_MODEL_RECIPE`,
so it is rebuilt, not downloaded. The cache folder's name holds a fingerprint of the recipe,
the package version and the source of :mod:`deidlib.synthetic`, so a change of the
generator (e.g. a new note type) or of the recipe builds a new model
automatically. Retrain it by editing :data:`DEFAULT_MODEL_RECIPE` (one dict) or call
:func:`build_default_model` with another recipe. How it decides and what it is worth on
real notes: docs/deidentify.md ("The default model") and docs/limitations.md.

**What it contains.** The featurizer's word and character vocabularies come from the
synthetic training notes (generated from Faker identities and public word lists), the word
vectors are word2vec trained on the same synthetic text, the weights are trained on it: no
real note is read at any step.

**Where.** ``models/`` under the package's cache folder (:func:`deidlib.cache.cache_dir`:
``$DEIDLIB_CACHE_DIR``, else the user cache folder, ``$XDG_CACHE_HOME/deidlib`` or
``~/.cache/deidlib`` on Linux). The model is built into a hidden sibling folder and renamed
into place, so two processes building at once never see half a model.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from ..cache import cache_dir

__all__ = [
    "DEFAULT_MODEL_RECIPE",
    "recipe_fingerprint",
    "default_model_dir",
    "build_default_model",
    "ensure_default_model",
]

#: The one place that says how the default model is trained (``deidlib train`` options):
#: a GRU-CRF (Ahmed 2020, thesis ch. 4) with BIOES labels over the i2b2 2014 types, so
#: that surrogates can be chosen per type, on the cpu-profile synthetic corpus (300
#: patients at 5 sites, 806 training notes, 16,720 sentences), word2vec vectors on its
#: training notes, learning-rate decay as for the nursing-notes GRU of docs/cli.md (``train``). Two
#: epochs: the synthetic dev F1 is 0.99 after the first (the synthetic notes are easy; more
#: epochs only fit them closer), and an epoch took 7 minutes on the loaded 2-core machine.
#: ``phi_threshold``: the model replaces a token when its PHI marginal 1 - P(O) exceeds this
#: (:mod:`deidlib.models.decoding`; saved in the model, so ``deidentify`` and ``predict`` use
#: it), a recall-oriented decision: the model's own decision let 132 of the 356 gold mentions of
#: the nursing test notes through verbatim. It was chosen from the grid 0.3 / 0.1 / 0.03, fixed
#: beforehand, as the highest threshold reaching binary-token recall 0.85 on the nursing notes'
#: *dev* split (0.03: recall 0.895; 0.1: 0.840): one scalar of the recipe was chosen with real
#: notes, the weights contain none. The synthetic-to-real transfer recipe (docs/transfer.md:
#: ``"hparams": {"word_dropout": 0.3, "lowercase_chars": True, "casing": True}, "note_scale":
#: {"icu_nursing_note": 3.0}``) was measured as the default and not adopted: it reaches recall
#: 0.85 on the dev split at none of the thresholds (0.826 at 0.03).
DEFAULT_MODEL_RECIPE: dict = {
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


def _source_digest() -> str:
    """Hash of the synthetic generator's source files and data (what the training text depends on)."""
    from .. import synthetic

    root = Path(synthetic.__file__).parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):
        if f.is_file() and f.suffix in (".py", ".txt", ".json", ".tsv"):
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def recipe_fingerprint(recipe: dict | None = None) -> str:
    """12 hex digits naming a recipe, the package version and the generator's source."""
    from .. import __version__

    payload = json.dumps({"recipe": recipe or DEFAULT_MODEL_RECIPE, "version": __version__,
                          "synthetic": _source_digest()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def default_model_dir(recipe: dict | None = None) -> Path:
    """Cache folder of the model of ``recipe`` (default: :data:`DEFAULT_MODEL_RECIPE`)."""
    return cache_dir("models", f"default-{recipe_fingerprint(recipe)}")


def build_default_model(dest: str | os.PathLike, recipe: dict | None = None, *, progress: bool = True) -> dict:
    """Train the model of ``recipe`` on the synthetic corpus and save it to ``dest`` (the format
    ``deidlib train`` writes into ``OUT_DIR/model``, plus ``recipe.json`` with the recipe, its
    dev/test scores on synthetic notes, the build time and the size). Returns that record."""
    from ..datasets import load_corpus
    from ..evaluation import binary_token_prf
    from ..training import fit_tagger, predict_documents, save_tagger

    r = {**DEFAULT_MODEL_RECIPE, **(recipe or {})}
    if r["corpus"] != "synthetic":
        raise ValueError("the default model is trained on the synthetic corpus only (it must contain no real data)")
    t0 = time.perf_counter()
    splits = load_corpus("synthetic", profile=r["profile"], seed=r["seed"], note_scale=r.get("note_scale"))
    tagger, hist = fit_tagger(
        r["model"], splits, scheme=r["scheme"], encoding=r["encoding"], tokenizer=r["tokenizer"],
        embeddings=r["embeddings"], hparams=dict(r["hparams"]), seed=r["seed"], evaluate_test=False,
        epochs=r["epochs"], batch_size=r["batch_size"], patience=r["patience"], lr_decay=r["lr_decay"],
        progress=progress,
    )
    build_s = time.perf_counter() - t0
    if r.get("phi_threshold") is not None:
        tagger.task = {**tagger.task, "phi_threshold": float(r["phi_threshold"])}
    p, rec, f = binary_token_prf(splits.test, predict_documents(tagger, splits.test))
    dest = Path(dest)
    save_tagger(tagger, dest)
    size = sum(f_.stat().st_size for f_ in dest.iterdir() if f_.is_file())
    info = {"recipe": r, "fingerprint": recipe_fingerprint(recipe), "build_seconds": round(build_s, 1),
            "size_bytes": size, "epochs_run": len(hist.epochs),
            "synthetic_test_binary_token": {"precision": p, "recall": rec, "f1": f},
            "training_data": "embedded synthetic corpus only (no real data)"}
    (dest / "recipe.json").write_text(json.dumps(info, indent=2))
    return info


def ensure_default_model(*, log=print, progress: bool = True) -> Path:
    """The default model's folder, built (minutes, once) when not cached yet."""
    d = default_model_dir()
    if (d / "config.json").is_file() and (d / "weights.pt").is_file():
        return d
    d.parent.mkdir(parents=True, exist_ok=True)
    log(f"building the default model (synthetic notes only, {DEFAULT_MODEL_RECIPE['model']} "
        f"{DEFAULT_MODEL_RECIPE['scheme']}/{DEFAULT_MODEL_RECIPE['encoding']}, profile "
        f"{DEFAULT_MODEL_RECIPE['profile']}) into {d}; this happens once")
    tmp = Path(tempfile.mkdtemp(dir=d.parent, prefix=f".{d.name}.", suffix=".partial"))
    try:
        info = build_default_model(tmp, progress=progress)
        try:
            os.replace(tmp, d)
        except OSError:  # another process finished first: keep its model
            if not (d / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"default model built in {info['build_seconds']:.0f} s ({info['size_bytes'] / 1e6:.1f} MB); "
        f"synthetic test binary-token F1 {info['synthetic_test_binary_token']['f1']:.3f}")
    return d
