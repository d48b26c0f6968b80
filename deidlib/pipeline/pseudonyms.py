"""Keyed pseudonyms for what ``deidlib deidentify`` writes besides the note text: patient ids
(a ``--patient-column``, ``--patient-from-filename``, an i2b2 file's ``PPP-`` prefix or META,
a PhysioNet ``pid``), PhysioNet note ids and output file names.

A pseudonym is the first :data:`_PSEUDONYM_HEX` hex digits of ``HMAC-SHA256(key, kind NUL value)``
(``kind``: ``"patient"``, ``"note"`` or ``"file"``, so a patient id and a file name never share
one). Values are compared as text: the patient id ``123`` (a JSON number) and ``"123"`` are one id.

* With a key the user holds (``--pseudonym-key-file FILE`` or the environment variable
  :data:`KEY_ENV`; surrounding whitespace ignored), the same id gets the same pseudonym in
  every run: batches released at different times link. Without the key nobody can tell which
  id a pseudonym stands for (short ids such as MRNs cannot be brute-forced: the key is the
  secret, not the id) — so a key that can be guessed or read is refused
  (:func:`_key_problems`: under :data:`_MIN_KEY_BITS` bits by :func:`_key_bits`, or a key file
  that group or others may read) unless ``allow_weak`` (then the problems are returned as
  warnings). ``tests/pipeline/test_keys.py`` guards the refusals.
* Without a key, a fresh random key of 32 bytes from the OS CSPRNG is drawn for the run and
  never stored: the only record of which id became which pseudonym is the map written into
  ``--audit`` (none without ``--audit``).

Two different values whose pseudonyms coincide (about 2**-64 per pair) are refused rather
than merged. ``tests/pipeline/test_side_channels.py`` guards that no id leaves in clear.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import secrets
import string
from pathlib import Path

__all__ = ["KEY_ENV", "Pseudonyms", "PseudonymError", "load_key"]

#: environment variable holding the pseudonym key (``--pseudonym-key-file`` wins when both are given)
KEY_ENV = "DEIDLIB_PSEUDONYM_KEY"
_MIN_KEY_BYTES = 16
#: the least estimated entropy of a user's key (:func:`_key_bits`)
_MIN_KEY_BITS = 128
#: hex digits kept of the HMAC (64 bits)
_PSEUDONYM_HEX = 16


class PseudonymError(ValueError):
    """A key that is missing, unreadable or too short, or a pseudonym collision (one line)."""


def _bits_per_symbol(key: bytes) -> float:
    """log2 of the size of the smallest usual alphabet holding every byte of ``key``."""
    chars = set(key)
    for alphabet in (string.digits, string.hexdigits, string.ascii_letters + string.digits + "+/=-_",
                     string.printable):
        if chars <= set(alphabet.encode()):
            size = len(set(alphabet.lower().encode())) if alphabet == string.hexdigits else len(set(alphabet))
            return math.log2(size)
    return 8.0


def _key_bits(key: bytes) -> float:
    """An upper estimate of the entropy of ``key`` in bits, as if each symbol were drawn at
    random: the length of its shortest period (``abcabc`` counts as ``abc``; all-same bytes as
    one byte) times log2 of its alphabet (decimal digits 3.3, hex 4, base64 6, printable
    ASCII 6.6, any byte 8). It catches short, constant, periodic and small-alphabet keys; it
    cannot judge a key a person made up (``openssl rand -hex 32`` gives 256 bits)."""
    n = len(key)
    period = next((p for p in range(1, n + 1) if all(key[i] == key[i - p] for i in range(p, n))), n)
    return period * _bits_per_symbol(key) if n else 0.0


def _key_problems(key: bytes, key_file: str | os.PathLike | None = None) -> list[str]:
    """Why ``key`` (read from ``key_file``, if any) is weak: fewer than :data:`_MIN_KEY_BYTES`
    bytes or :data:`_MIN_KEY_BITS` estimated bits (:func:`_key_bits`), or a key file that group
    or others may read (POSIX). Empty when it is fine."""
    problems = []
    bits = _key_bits(key)
    if len(key) < _MIN_KEY_BYTES or bits < _MIN_KEY_BITS:
        problems.append(f"the key has {len(key)} bytes and about {bits:.0f} bits of entropy (at most); use at "
                        f"least {_MIN_KEY_BYTES} bytes holding {_MIN_KEY_BITS} random bits (e.g. 'openssl rand -hex 32 > KEYFILE')")
    if key_file is not None and os.name == "posix":
        mode = os.stat(key_file).st_mode & 0o777
        if mode & 0o077:
            problems.append(f"the key file is open to group or others (mode {mode:03o}); 'chmod 600' it")
    return problems


def load_key(key_file: str | os.PathLike | None = None, environ=os.environ, *, allow_weak: bool = False
             ) -> tuple[bytes | None, list[str]]:
    """``(key, warnings)``: the key from ``key_file``, else from ``$DEIDLIB_PSEUDONYM_KEY``, else
    ``None``. A weak key (:func:`_key_problems`) raises :class:`PseudonymError` (one line),
    or with ``allow_weak`` comes back with its problems as warnings."""
    if key_file is not None:
        try:
            key = Path(key_file).read_bytes().strip()
        except OSError as e:
            raise PseudonymError(f"--pseudonym-key-file {key_file}: cannot read ({e.strerror})") from None
        where = f"--pseudonym-key-file {key_file}"
    elif environ.get(KEY_ENV):
        key, where = environ[KEY_ENV].encode("utf-8").strip(), f"${KEY_ENV}"
    else:
        return None, []
    problems = _key_problems(key, key_file)
    if problems and not allow_weak:
        raise PseudonymError(f"{where}: {'; '.join(problems)} (or --allow-weak-key)")
    return key, [f"{where}: {p}" for p in problems]


class Pseudonyms:
    """``p(kind, value)``: the pseudonym of ``value`` (see the module docstring).

    ``keyed`` tells whether the key came from the user; :meth:`mapping` is every value
    pseudonymised so far, by kind (it holds the original ids: audit only)."""

    def __init__(self, key: bytes | None = None):
        self.keyed = key is not None
        self._key = key if key is not None else secrets.token_bytes(32)
        self._map: dict[str, dict[str, str]] = {}
        self._back: dict[tuple[str, str], str] = {}

    def __call__(self, kind: str, value: str) -> str:
        value = str(value)
        known = self._map.get(kind, {}).get(value)
        if known is not None:
            return known
        p = hmac.new(self._key, f"{kind}\0{value}".encode(), hashlib.sha256).hexdigest()[:_PSEUDONYM_HEX]
        if (kind, p) in self._back:
            raise PseudonymError(f"two different {kind} values have the same pseudonym; run again (a fresh key) "
                                 "or use another key")
        self._back[(kind, p)] = value
        self._map.setdefault(kind, {})[value] = p
        return p

    def mapping(self) -> dict[str, dict[str, str]]:
        """``{kind: {original: pseudonym}}`` (holds the originals)."""
        return {k: dict(v) for k, v in self._map.items()}

    def describe(self) -> str:
        """How the pseudonyms were made, for the run summary (no key material)."""
        return ("HMAC-SHA256 with the user's key (the same id gets the same pseudonym in every run with this key)"
                if self.keyed else "HMAC-SHA256 with a random key drawn for this run and not kept (the map is "
                "only in the --audit file, if one was asked for)")
