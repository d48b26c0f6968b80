"""Person-name surrogates that keep the surface form (Tchouka et al. 2023, section 4: names
are replaced at random — "Durand could be replaced by any name, Julien for instance" — and
memoised).

The span is split into titles, name words, initials and separators; each name word gets a
role (first / middle / last) from its position: "Last, First [M.]" when a comma follows
the first word(s), else the last word is the surname; a single word is a surname after a
title (inside the span or just before it), a first name if an earlier span of the scope used it as one (a surname if as a
surname) or Faker lists it as a first name, else a surname. Each word is replaced by a Faker name of the same role (and,
for first names Faker knows, the same sex), memoised per ``(role, word)`` in the scope's
:class:`~deidlib.surrogates.memo.Memo` and never one of the scope's original name words
(``Memo.originals``: "Taylor" is not replaced by "Smith" when the scope also names a Smith), so "Durand", "M. Durand", "DURAND" and
"Durand, Marie" all use the same surrogate surname. Kept: titles (Mr., Dr., M., Mme, ...),
capitalisation (ALL CAPS, Title, lower), hyphenated parts, possessives ("Durand's"),
initials (an initial whose letter matches a memoised name of the same role takes the
initial of that name's surrogate, else a random letter, itself memoised), and the
whitespace around the span.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from .memo import Memo
from .pools import Pools
from .randomness import SurrogateRNG

__all__ = []

TITLES = frozenset(
    t.lower()
    for t in ("Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Doctor", "Prof", "Professor", "Pr", "Sir", "Dame", "Rev",
              "M", "Mme", "Mlle", "Mmes", "MM", "Monsieur", "Madame", "Mademoiselle", "Docteur", "Professeur",
              "Sr", "Jr", "Nurse", "RN", "MD", "PhD", "NP", "PA")
)
_SUFFIX_TITLES = frozenset({"jr", "sr", "md", "phd", "rn", "np", "pa", "ii", "iii", "iv"})
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_LETTERS = "ABCDEFGHIJKLMNOPRSTVW"
_POSSESSIVE = re.compile(r"(['’]s|s['’])$")


@functools.lru_cache(maxsize=1 << 16)
def _fold(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).lower()


def _case(word: str) -> str:
    letters = [c for c in word if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return "upper"
    if letters and all(c.islower() for c in letters):
        return "lower"
    return "title"


def _apply(word: str, case: str) -> str:
    if case == "upper":
        return word.upper()
    if case == "lower":
        return word.lower()
    return word


def _draw_first(key: str, pools: Pools, rng: SurrogateRNG, exclude=frozenset()) -> str:
    if key in pools.female_keys and key not in pools.male_keys:
        pool = pools.first_female
    elif key in pools.male_keys and key not in pools.female_keys:
        pool = pools.first_male
    else:
        pool = pools.first_female if rng.randbelow(2) else pools.first_male
    for _ in range(32):
        c = pool[rng.randbelow(len(pool))]
        if _fold(c) != key and _fold(c) not in exclude:
            return c
    return c


def _draw_last(key: str, pools: Pools, rng: SurrogateRNG, exclude=frozenset()) -> str:
    for _ in range(32):
        c = pools.last[rng.randbelow(len(pools.last))]
        if _fold(c) != key and _fold(c) not in exclude:
            return c
    return c


def _word_surrogate(word: str, role: str, pools: Pools, rng: SurrogateRNG, memo: Memo) -> str:
    """Surrogate for one name word (no hyphen), memoised per (role, word)."""
    key = _fold(word)
    ns = "name_first" if role in ("first", "middle") else "name_last"
    sur = memo.get(ns, key)
    if sur is None:
        exclude = memo.originals
        sur = _draw_first(key, pools, rng, exclude) if ns == "name_first" else _draw_last(key, pools, rng, exclude)
        memo.set(ns, key, sur)
        ikey = ("name_initial", "first" if ns == "name_first" else "last")
        letter = key[:1].upper()
        if memo.get(ikey[0], (ikey[1], letter)) is None:
            memo.set(ikey[0], (ikey[1], letter), _fold(sur)[:1].upper())
    return _apply(sur, _case(word))


def _initial_surrogate(letter: str, role: str, rng: SurrogateRNG, memo: Memo) -> str:
    r = "first" if role in ("first", "middle") else "last"
    key = letter.upper()
    sur = memo.get("name_initial", (r, key))
    if sur is None:
        sur = key
        for _ in range(8):
            sur = _LETTERS[rng.randbelow(len(_LETTERS))]
            if sur != key:
                break
        memo.set("name_initial", (r, key), sur)
    return sur if letter.isupper() else sur.lower()


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text): kind in word | sep."""
    out = []
    pos = 0
    for m in _WORD.finditer(text):
        if m.start() > pos:
            out.append(("sep", text[pos:m.start()]))
        out.append(("word", m.group()))
        pos = m.end()
    if pos < len(text):
        out.append(("sep", text[pos:]))
    return out


def surrogate_name(text: str, pools: Pools, rng: SurrogateRNG, memo: Memo, *, after_title: bool = False) -> str:
    """A surrogate for a person-name span, keeping its surface form (see module docstring).
    ``after_title``: the text just before the span ends with a title ("Dr. [Taylor]", the title
    outside the tagged span): a single name word is then a surname, as after a title inside it."""
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    core = text.strip()
    if not core:
        return text
    poss = ""
    m = _POSSESSIVE.search(core)
    if m and len(core) > 3:
        if m.group(1)[0] in "'’":
            poss, core = m.group(1), core[: m.start()]
        else:  # "Jones'" -> keep the apostrophe only
            poss, core = core[-1], core[:-1]
    toks = _tokens(core)
    words = [i for i, (k, _) in enumerate(toks) if k == "word"]
    if not words:
        return text
    # titles: leading words in TITLES (optionally followed by '.'), trailing suffix titles
    title_idx = set()
    for i in words:
        w = toks[i][1]
        if _fold(w) in TITLES and (len(words) > 1) and (i == words[0] or (i - 2 in title_idx)):
            # a bare "M" before a name is a title only when followed by '.' or a space and a name
            title_idx.add(i)
        else:
            break
    for i in reversed(words):
        if _fold(toks[i][1]) in _SUFFIX_TITLES and i != words[0] and i not in title_idx:
            title_idx.add(i)
        else:
            break
    names = [i for i in words if i not in title_idx]
    if not names:
        return text
    # all-caps initials block, e.g. "DJW"
    if len(names) == 1 and len(words) == 1 and 2 <= len(toks[names[0]][1]) <= 3 and toks[names[0]][1].isupper() \
            and _fold(toks[names[0]][1]) not in pools.last_keys and _fold(toks[names[0]][1]) not in pools.first_keys:
        w = toks[names[0]][1]
        initial_roles = ["first"] * (len(w) - 1) + ["last"]
        new = "".join(_initial_surrogate(c, r, rng, memo) for c, r in zip(w, initial_roles))
        return lead + new + poss + trail
    # roles
    comma_after = None
    for i in names[:-1]:
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        if "," in nxt:
            comma_after = i
            break
    roles: dict[int, str] = {}
    if comma_after is not None:
        for i in names:
            roles[i] = "last" if i <= comma_after else ("first" if i == next(j for j in names if j > comma_after)
                                                         else "middle")
    elif len(names) == 1:
        w = _fold(toks[names[0]][1])
        if after_title or (title_idx and names[0] > min(title_idx)):
            roles[names[0]] = "last"
        elif memo.get("name_first", w) is not None:
            roles[names[0]] = "first"
        elif memo.get("name_last", w) is not None:
            roles[names[0]] = "last"
        elif w in pools.first_keys:
            roles[names[0]] = "first"
        else:
            roles[names[0]] = "last"
    else:
        last_i = names[-1]
        for i in names:
            roles[i] = "last" if i == last_i else ("first" if i == names[0] else "middle")
    out = []
    for i, (k, t) in enumerate(toks):
        if k == "sep" or i in title_idx:
            out.append(t)
            continue
        role = roles[i]
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        if len(t) == 1 or (len(t) == 2 and t.isupper() and nxt.startswith(".") and _fold(t) not in pools.last_keys):
            out.append("".join(_initial_surrogate(c, role, rng, memo) for c in t))
        else:
            out.append(_word_surrogate(t, role, pools, rng, memo))
    return lead + "".join(out) + poss + trail


def surrogate_username(text: str, pools: Pools, rng: SurrogateRNG, memo: Memo) -> str:
    """A username built from a surrogate surname (and first-name letters), keeping case,
    separators (``.``, ``_``) and the digit count of the original; memoised."""
    key = text.strip().lower()
    sur = memo.get("username", key)
    if sur is None:
        core = text.strip()
        letters = sum(c.isalpha() for c in core)
        digits = sum(c.isdigit() for c in core)
        seps = [c for c in core if c in "._-"]
        first = _fold(pools.first_female[rng.randbelow(len(pools.first_female))] if rng.randbelow(2)
                      else pools.first_male[rng.randbelow(len(pools.first_male))])
        last = _fold(pools.last[rng.randbelow(len(pools.last))])
        first = "".join(c for c in first if c.isalpha())
        last = "".join(c for c in last if c.isalpha())
        if seps:
            body = f"{first}{seps[0]}{last}"
        else:
            body = (last + first)[: max(letters, 3)]
        body += "".join(str(rng.randbelow(10)) for _ in range(digits))
        sur = body
        memo.set("username", key, sur)
    core = text.strip()
    alpha = [c for c in core if c.isalpha()]
    if alpha and all(c.isupper() for c in alpha):
        sur = sur.upper()
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return lead + sur + trail
