"""English number words, shared by the synthetic generator (ages written out) and the
surrogate engine (parsing and rewriting "forty-two years old")."""

from __future__ import annotations

__all__ = ["number_words"]

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n: int) -> str:
    """English words for 0..199 ("forty-two", "one hundred two")."""
    if n < 0 or n >= 200:
        raise ValueError(f"{n} out of range 0..199")
    if n >= 100:
        rest = n - 100
        return "one hundred" + ("" if rest == 0 else " " + number_words(rest))
    if n < 20:
        return _ONES[n]
    t, o = divmod(n, 10)
    return _TENS[t] + ("" if o == 0 else "-" + _ONES[o])
