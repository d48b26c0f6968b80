"""Format-preserving random replacement of identifiers and contacts, and pool-based
replacement of the other non-DP categories (Tchouka et al. 2023, section 4: "a random
strategy may be chosen for replacing names, phone numbers…"; Stubbs et al. 2015:
"alphanumeric strings are replaced by a randomly generated string").

* :func:`shape_replace` — IDs (SSN, MRN, health plan, account, license, vehicle, device,
  bio id, IDNUM), ROOM, phone/fax, ZIP: digits become random digits, letters random
  letters of the same case, every other character (separators, ``#``, spaces) is kept.
  Known non-identifying prefixes (``MR``, ``ACCT``, ``SN``, ``MD``, ``HP``, ``DEA``, ...)
  are kept. Phone numbers keep a leading ``+CC`` country code, a ``1-`` trunk prefix and
  the French leading ``0``. The surrogate character sequence is memoised on the
  alphanumeric content (case-insensitive), so "629-85-89" and "6298589" get the same
  digits, each in its own shape.
* :func:`surrogate_email`, :func:`surrogate_url`, :func:`surrogate_ip` — e-mails keep
  the shape of the local part (``first.last`` → another ``first.last``, digits → digits)
  and public free-mail domains (``gmail.com``...; any other domain is replaced by a Faker
  domain); URLs keep scheme, ``www.`` and path shape; IPv4 keeps the private prefixes
  (``10.``, ``192.168.``, ``172.16-31.``) and randomises the rest.
* :func:`pool_replace` — streets, states, countries, departments, professions, OTHER,
  LOCATION-OTHER, organisations and hospitals from the locale's pools; hospitals and
  organisations keep their generic words ("General Hospital", "Centre Hospitalier de",
  "Inc") and replace the proper names (by the memoised city surrogate when the word is a
  city already replaced in the scope).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from .memo import Memo
from .pools import Pools
from .randomness import SurrogateRNG

__all__ = []

_KEEP_PREFIXES = frozenset({"MR", "MRN", "ACCT", "ACC", "HP", "SN", "MD", "DEA", "BIO", "FP", "ORD", "MCR", "ID",
                           "NO", "NUM", "DR", "RN", "PT", "REF", "IPP", "NIR", "SS", "LIC", "VIN"})
_GENERIC_ORG_WORDS = frozenset(
    w.lower() for w in (
        "Hospital", "Hospitals", "General", "Medical", "Center", "Centre", "Clinic", "Clinics", "Infirmary",
        "University", "Memorial", "Regional", "Community", "Health", "Healthcare", "Care", "Institute", "Saint",
        "St", "Children's", "Childrens", "Women's", "Rehabilitation", "Rehab", "Nursing", "Home", "Hospice",
        "Heart", "Cancer", "Mental", "County", "City", "State", "of", "the", "and", "&", "Inc", "LLC", "Ltd",
        "Group", "Corp", "Corporation", "Company", "Co", "Insurance", "Associates", "Partners", "Services",
        "Foundation", "Hôpital", "Hopital", "Hospitalier", "Hospitalière", "Universitaire", "CHU", "CH", "CHR",
        "CHRU", "Clinique", "Polyclinique", "Groupe", "Hospitalier", "de", "du", "des", "la", "le", "les",
        "Sainte", "Mutuelle", "Assurance", "Caisse", "Primaire", "Maladie", "CPAM", "SA", "SAS", "SARL",
        "Baptist", "Methodist", "Presbyterian", "Lutheran", "Mercy", "Kaiser", "Permanente", "VA", "Veterans",
        "Blue", "Cross", "Shield", "Humana", "Aetna", "TRICARE", "Medicare", "Medicaid",
    )
)
_UP = "ABCDEFGHJKLMNPQRSTUVWXYZ"
_LOW = "abcdefghijkmnpqrstuvwxyz"


@functools.lru_cache(maxsize=1 << 16)
def _fold(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).lower()


def _split_ws(text: str) -> tuple[str, str, str]:
    core = text.strip()
    if not core:
        return text, "", ""
    a = text.index(core)
    return text[:a], core, text[a + len(core):]


def _apply_case(s: str, like: str) -> str:
    letters = [c for c in like if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return s.upper()
    if letters and all(c.islower() for c in letters):
        return s.lower()
    return s


def _keep_mask(core: str, kind: str) -> list[bool]:
    """Characters of ``core`` that are kept as they are (prefixes, country codes)."""
    keep = [not c.isalnum() for c in core]
    m = re.match(r"[A-Za-z]+", core)
    if m and m.group().upper() in _KEEP_PREFIXES and m.end() < len(core):
        for i in range(m.end()):
            keep[i] = True
    if kind == "phone":
        m = re.match(r"\+\d{1,3}", core)
        if m:
            for i in range(m.end()):
                keep[i] = True
            m2 = re.match(r"\+\d{1,3}\s*\(0\)", core)
            if m2:
                for i in range(m2.end()):
                    keep[i] = True
        elif re.match(r"1[-. ]", core):
            keep[0] = True
        elif re.match(r"0\d", core):
            keep[0] = True
    return keep


def _nanp_lead(idx: list[int], j: int, core: str) -> bool:
    """Whether the j-th replaced digit of a phone number must be 2-9 under the North American
    Numbering Plan (NPA-NXX-XXXX: the area code's and the exchange's first digits are 2-9).
    Counted from the end, ignoring a leading country code 1: for numbers of 10 digits or more the
    digits at positions -10 and -7 (from the last digit), for 7-digit numbers position -7;
    numbers of other lengths keep only the first digit non-0/1 (the rule before)."""
    digits = [k for k, i in enumerate(idx) if core[i].isdigit()]
    if j not in digits:
        return False
    n = len(digits)
    pos = digits.index(j)
    if n >= 10:
        return n - pos in (10, 7)
    if n == 7:
        return pos == 0
    return pos == 0


def shape_replace(text: str, rng: SurrogateRNG, memo: Memo | None = None, *, kind: str = "id") -> str:
    """Digits -> random digits, letters -> random letters (same case), rest kept; memoised
    on the alphanumeric content. ``kind``: ``id`` | ``phone`` | ``zip`` (namespace and rules)."""
    lead, core, trail = _split_ws(text)
    if not core:
        return text
    keep = _keep_mask(core, kind)
    idx = [i for i, c in enumerate(core) if not keep[i]]
    if not idx:
        return text
    key = "".join(core[i] for i in idx).upper()
    seq = memo.get(f"shape_{kind}", key) if memo is not None else None
    if seq is None:
        for _ in range(16):
            new = []
            for j, i in enumerate(idx):
                c = core[i]
                if c.isdigit():
                    if kind == "phone" and _nanp_lead(idx, j, core):
                        new.append(str(2 + rng.randbelow(8)))
                    else:
                        new.append(str(rng.randbelow(10)))
                else:
                    new.append(_UP[rng.randbelow(len(_UP))])
            seq = "".join(new)
            if seq != key:
                break
        if memo is not None:
            memo.set(f"shape_{kind}", key, seq)
    if seq is None:  # the loop above always draws one
        raise RuntimeError("no surrogate shape was drawn")
    out = list(core)
    for j, i in enumerate(idx):
        ch = seq[j]
        if core[i].isdigit() != ch.isdigit():  # same key, different kinds cannot happen; be safe
            ch = str(rng.randbelow(10)) if core[i].isdigit() else _UP[rng.randbelow(len(_UP))]
        out[i] = ch.lower() if core[i].islower() else ch
    return lead + "".join(out) + trail


def _local_part(local: str, pools: Pools, rng: SurrogateRNG) -> str:
    digits = sum(c.isdigit() for c in local)
    first = "".join(c for c in _fold(pools.first_female[rng.randbelow(len(pools.first_female))]) if c.isalpha())
    last = "".join(c for c in _fold(pools.last[rng.randbelow(len(pools.last))]) if c.isalpha())
    sep = next((c for c in local if c in "._-"), None)
    letters = sum(c.isalpha() for c in local)
    if sep:
        body = f"{first}{sep}{last}"
    elif letters <= 3:
        body = (first[:1] + last)[: max(letters, 1)]
    else:
        body = first[:1] + last
    return body + "".join(str(rng.randbelow(10)) for _ in range(digits))


def surrogate_email(text: str, pools: Pools, rng: SurrogateRNG, memo: Memo) -> str:
    """A surrogate e-mail address of the same shape (see module docstring); memoised."""
    lead, core, trail = _split_ws(text)
    if "@" not in core:
        return shape_replace(text, rng, memo)
    key = core.lower()
    sur = memo.get("email", key)
    if sur is None:
        local, _, domain = core.rpartition("@")
        new_local = _local_part(local, pools, rng)
        new_domain = domain.lower() if domain.lower() in pools.free_domains else \
            pools.domains[rng.randbelow(len(pools.domains))]
        sur = f"{new_local}@{new_domain}"
        memo.set("email", key, sur)
    return lead + _apply_case(sur, core) + trail


def surrogate_url(text: str, pools: Pools, rng: SurrogateRNG, memo: Memo) -> str:
    """A surrogate URL: scheme and ``www.`` kept, host from the domain pool, path shape kept."""
    lead, core, trail = _split_ws(text)
    key = core.lower()
    sur = memo.get("url", key)
    if sur is None:
        m = re.match(r"^(?P<scheme>[a-z][a-z0-9+.-]*://)?(?P<www>www\d?\.)?(?P<host>[^/?#:]+)(?P<rest>.*)$", core, re.I)
        if not m:
            sur = shape_replace(core, rng, memo)
        else:
            host = pools.domains[rng.randbelow(len(pools.domains))]
            rest = m.group("rest")
            rest = re.sub(r"[A-Za-z0-9]", lambda c: (str(rng.randbelow(10)) if c.group().isdigit() else
                                                     _LOW[rng.randbelow(len(_LOW))]), rest) if rest else ""
            # keep path words that are generic (letters only, common words) readable
            sur = f"{m.group('scheme') or ''}{m.group('www') or ''}{host}{rest}"
        memo.set("url", key, sur)
    return lead + sur + trail


def surrogate_ip(text: str, rng: SurrogateRNG, memo: Memo) -> str:
    """A random IPv4 address (private prefixes kept); non-IPv4 input gets :func:`shape_replace`."""
    lead, core, trail = _split_ws(text)
    parts = core.split(".")
    if len(parts) != 4 or not all(p.isdigit() and 0 <= int(p) <= 255 for p in parts):
        return shape_replace(text, rng, memo)
    sur = memo.get("ip", core)
    if sur is None:
        o = [int(p) for p in parts]
        if o[0] == 10:
            keep = 1
        elif (o[0] == 192 and o[1] == 168) or (o[0] == 172 and 16 <= o[1] <= 31):
            keep = 2
        else:
            keep = 0
        new = o[:keep]
        while len(new) < 4:
            new.append(1 + rng.randbelow(254) if len(new) in (0, 3) else rng.randbelow(256))
        if keep == 0 and new[0] in (10, 127, 192, 172):
            new[0] = 1 + (new[0] + 1) % 223
        sur = ".".join(map(str, new))
        memo.set("ip", core, sur)
    return lead + sur + trail


def _pick(pool, key: str, rng: SurrogateRNG) -> str:
    for _ in range(8):
        c = pool[rng.randbelow(len(pool))]
        if _fold(c) != key:
            return c
    return c


def pool_replace(text: str, subtype: str, pools: Pools, rng: SurrogateRNG, memo: Memo) -> str:
    """Replace a STREET, STATE, COUNTRY, DEPARTMENT, PROFESSION, OTHER, LOCATION-OTHER,
    ORGANIZATION or HOSPITAL span from the locale pools (memoised per value, case kept)."""
    lead, core, trail = _split_ws(text)
    if not core:
        return text
    key = _fold(core)
    sur = memo.get(f"pool_{subtype}", key)
    if sur is None:
        if subtype == "STREET":
            sur = _pick(pools.streets, key, rng)
        elif subtype == "STATE":
            if len(core) == 2 and core.isupper() and pools.state_abbrs:
                sur = _pick(pools.state_abbrs, key, rng)
            else:
                sur = _pick(pools.states or pools.countries, key, rng)
        elif subtype == "COUNTRY":
            sur = _pick(pools.countries, key, rng)
        elif subtype == "DEPARTMENT":
            sur = _pick(pools.departments, key, rng)
        elif subtype == "PROFESSION":
            sur = _pick(pools.jobs, key, rng)
        elif subtype == "OTHER":
            sur = _pick(pools.others, key, rng)
        elif subtype == "LOCATION-OTHER":
            sur = _pick(pools.landmarks, key, rng)
        elif subtype in ("HOSPITAL", "ORGANIZATION"):
            sur = _organisation(core, subtype, pools, rng, memo)
        else:
            raise ValueError(f"pool_replace cannot replace TYPE {subtype!r}")
        memo.set(f"pool_{subtype}", key, sur)
    return lead + _apply_case(sur, core) + trail


def _organisation(core: str, subtype: str, pools: Pools, rng: SurrogateRNG, memo: Memo) -> str:
    words = re.split(r"(\W+)", core)
    proper = [i for i, w in enumerate(words) if w and w[0].isalnum() and _fold(w) not in _GENERIC_ORG_WORDS]
    generic = [i for i, w in enumerate(words) if w and w[0].isalnum() and _fold(w) in _GENERIC_ORG_WORDS]
    if not generic or not proper:
        pool = pools.companies if subtype == "ORGANIZATION" else pools.companies
        name = _pick(pool, _fold(core), rng)
        return name if subtype == "ORGANIZATION" else f"{name} {'Hospital' if pools.locale.startswith('en') else 'Clinique'}".strip()
    out = list(words)
    for i in proper:
        w = words[i]
        city = memo.get("location_name", _fold(w))
        if city is not None:
            out[i] = city
        else:
            k = _fold(w)
            s = memo.get("org_word", k)
            if s is None:
                s = _pick(pools.last, k, rng)
                memo.set("org_word", k, s)
            out[i] = s
    return "".join(out)
