"""deidlib: privacy-preserving de-identification of clinical text, five papers in one library.

The package is thin on purpose. From the bottom layer up (DESIGN.md, "Layers"):
``deidlib.corpus`` (data model, readers, tokenization, labels, splits);
``deidlib.synthetic`` (embedded default corpus), ``deidlib.evaluation`` (i2b2 2014 scorer),
``deidlib.embeddings``; ``deidlib.datasets`` (``load_corpus``), ``deidlib.models``
(featurizer, taggers), ``deidlib.surrogates``; ``deidlib.training``; ``deidlib.privacy``,
``deidlib.collaborative``; ``deidlib.studies`` (one module per paper). Submodules are
imported on demand; ``import deidlib`` is cheap.
"""

__version__ = "0.2.0"
__all__ = ["__version__"]
