"""Synthetic i2b2-2014-style clinical notes with exact PHI spans: the embedded default corpus.

``generate(patients, sites, seed, ...)`` builds longitudinal patients across sites whose
writing styles differ (:mod:`.styles`), with identities and places from Faker
(:mod:`.identities`), PHI surface forms from :mod:`.phi_forms`, medical content from
:mod:`.vocab` and note templates from :mod:`.notes`. See :mod:`.generator`.
"""

from .generator import DIAGNOSIS_LABELS, GUIDELINE_NOTE_TYPES, NOTE_TYPES, generate, generate_iter, site_names
from .styles import ARCHETYPES, DEFAULT_HETEROGENEITY, SiteStyle, site_style
from .vocab import EPONYMS, PRIMARY_SITES

__all__ = [
    "generate",
    "generate_iter",
    "site_names",
    "site_style",
    "DEFAULT_HETEROGENEITY",
    "SiteStyle",
    "ARCHETYPES",
    "DIAGNOSIS_LABELS",
    "NOTE_TYPES",
    "GUIDELINE_NOTE_TYPES",
    "PRIMARY_SITES",
    "EPONYMS",
]
