"""deidlib: privacy-preserving de-identification of clinical text, five papers in one library.

The package is thin on purpose: ``deidlib.corpus`` (data model, readers, tokenization,
labels), ``deidlib.synthetic`` (embedded default corpus), ``deidlib.evaluation`` (i2b2
2014 scorer), ``deidlib.models``/``deidlib.training`` (taggers), ``deidlib.collaborative``,
``deidlib.privacy``, ``deidlib.surrogates``, ``deidlib.utility`` and ``deidlib.studies``
(one module per paper). Submodules are imported on demand; ``import deidlib`` is cheap.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
