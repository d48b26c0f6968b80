"""Synthetic i2b2-2014-style clinical notes with exact PHI spans: the embedded default corpus.

``generate(patients, sites, seed, ...)`` builds longitudinal patients across sites whose
writing styles differ (:mod:`.styles`), with identities and places from Faker
(:mod:`.identities`), PHI surface forms from :mod:`.phi_forms`, medical content from
:mod:`.vocab` and note templates from :mod:`.notes`. See :mod:`.generator`.
"""

from .generator import generate, generate_iter
from .styles import DEFAULT_HETEROGENEITY

__all__ = ["generate", "generate_iter", "DEFAULT_HETEROGENEITY"]
