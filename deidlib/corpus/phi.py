"""The i2b2 2014 PHI taxonomy: categories (XML tag names) and their TYPE subtypes.

Source: Stubbs & Uzuner (2015), the i2b2/UTHealth 2014 de-identification track
annotation guidelines; the festag paper's Table 1 lists the 28 subtypes it uses
(all of i2b2's except ROOM, DEPARTMENT and OTHER).
"""

from __future__ import annotations

__all__ = ["CATEGORIES", "TYPE_TO_CATEGORY", "HIPAA_TYPES"]

#: XML tag (category) -> allowed TYPE attribute values, in i2b2 order.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "NAME": ("PATIENT", "DOCTOR", "USERNAME"),
    "PROFESSION": ("PROFESSION",),
    "LOCATION": (
        "ROOM",
        "DEPARTMENT",
        "HOSPITAL",
        "ORGANIZATION",
        "STREET",
        "CITY",
        "STATE",
        "COUNTRY",
        "ZIP",
        "LOCATION-OTHER",
    ),
    "AGE": ("AGE",),
    "DATE": ("DATE",),
    "CONTACT": ("PHONE", "FAX", "EMAIL", "URL", "IPADDR"),
    "ID": (
        "SSN",
        "MEDICALRECORD",
        "HEALTHPLAN",
        "ACCOUNT",
        "LICENSE",
        "VEHICLE",
        "DEVICE",
        "BIOID",
        "IDNUM",
    ),
    "OTHER": ("OTHER",),
}

TYPE_TO_CATEGORY: dict[str, str] = {t: c for c, ts in CATEGORIES.items() for t in ts}
_ALL_TYPES: tuple[str, ...] = tuple(TYPE_TO_CATEGORY)

#: The 28 subtypes of festag Table 1 (29 classes with non-PHI).
FESTAG_TYPES: tuple[str, ...] = tuple(
    t for t in _ALL_TYPES if t not in ("ROOM", "DEPARTMENT", "OTHER")
)

#: (category, TYPE) pairs that the official i2b2 2014 script counts as HIPAA PHI.
HIPAA_TYPES: frozenset[tuple[str, str]] = frozenset(
    [("NAME", "PATIENT")]
    + [("LOCATION", t) for t in ("CITY", "STREET", "ZIP", "ORGANIZATION")]
    + [("DATE", "DATE"), ("AGE", "AGE")]
    + [("CONTACT", t) for t in ("PHONE", "FAX", "EMAIL")]
    + [("ID", t) for t in CATEGORIES["ID"]]  # every ID subtype is HIPAA PHI
)


class UnknownPHITypeError(ValueError):
    """A TYPE (or category) that is not part of the i2b2 2014 taxonomy."""


def category_of(subtype: str) -> str:
    """Return the category (XML tag) of an i2b2 TYPE, e.g. ``"CITY" -> "LOCATION"``."""
    try:
        return TYPE_TO_CATEGORY[subtype]
    except KeyError:
        raise UnknownPHITypeError(
            f"unknown PHI TYPE {subtype!r}; expected one of {', '.join(_ALL_TYPES)}"
        ) from None
