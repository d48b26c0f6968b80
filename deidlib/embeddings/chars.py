"""Character and casing inputs of the taggers (pure functions).

* festag et al. 2020, "Preprocessing": each character is a one-hot vector in
  {0,1}^128 — the dimension is the character's code point when it is below 127, and the
  last dimension for every other character. :func:`_char_id` returns that dimension + 1
  (0 is padding), so ids run 1..128; a fixed identity embedding makes it exactly the
  paper's one-hot input, a learned embedding gives the ahmed/Lample character embeddings
  over the same ids.
* friedrich et al. 2019, section 4: the casing feature of Reimers & Gurevych —
  numeric, mainly numeric, all lower, all upper, initial upper, contains digit, other.
"""

from __future__ import annotations

__all__ = ["N_CHAR_IDS", "char_ids", "CASINGS", "casing_id"]

#: ids 1..128 plus padding 0
N_CHAR_IDS = 129


def _char_id(c: str) -> int:
    o = ord(c)
    return o + 1 if o < 127 else 128


def char_ids(token: str, max_len: int | None = None) -> list[int]:
    s = token if max_len is None else token[:max_len]
    return [_char_id(c) for c in s]


#: index 0 is padding
CASINGS = ("<pad>", "numeric", "mainly_numeric", "all_lower", "all_upper", "initial_upper", "contains_digit", "other")
_CASING_INDEX = {c: i for i, c in enumerate(CASINGS)}


def casing(token: str) -> str:
    """Reimers & Gurevych (2017) casing class of a token (used by friedrich et al. 2019)."""
    if not token:
        return "other"
    digits = sum(c.isdigit() for c in token)
    if token.isdigit():
        return "numeric"
    if digits / len(token) > 0.5:
        return "mainly_numeric"
    if token.islower():
        return "all_lower"
    if token.isupper():
        return "all_upper"
    if token[0].isupper():
        return "initial_upper"
    if digits:
        return "contains_digit"
    return "other"


def casing_id(token: str) -> int:
    return _CASING_INDEX[casing(token)]
