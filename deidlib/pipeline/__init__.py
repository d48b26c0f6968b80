"""De-identification in one call (``deidlib deidentify``).

* :mod:`.formats` — read .txt folders, i2b2 XML, JSONL/CSV with a text column and PhysioNet
  deid folders; write the de-identified notes back in the same format, other columns dropped
  unless kept, patient ids and file names pseudonymised.
* :mod:`.pseudonyms` — keyed (HMAC-SHA256) pseudonyms of patient ids and file names.
* :mod:`.run` — tag with a saved tagger, replace by surrogates or masks, count the gold PHI
  that survives verbatim; on one process, N local processes or a dask.distributed cluster,
  with the same output for any number of workers when a seed is given.
* :mod:`.default_model` — the default tagger, trained on the embedded synthetic corpus only
  (no real data), built on first use and cached; its recipe is one dict.
"""

from .default_model import DEFAULT_MODEL_RECIPE, build_default_model, default_model_dir, ensure_default_model
from .formats import FORMATS, InputCorpus, read_input
from .run import DeidOptions, ModelBlob, chunk_documents, run_dask, run_local, run_processes

__all__ = [
    "DEFAULT_MODEL_RECIPE",
    "build_default_model",
    "default_model_dir",
    "ensure_default_model",
    "FORMATS",
    "InputCorpus",
    "read_input",
    "DeidOptions",
    "ModelBlob",
    "chunk_documents",
    "run_local",
    "run_processes",
    "run_dask",
]
