"""Keyed pseudonyms for what ``deidlib deidentify`` writes besides the note text: patient ids
(a ``--patient-column``, ``--patient-from-filename``, an i2b2 file's ``PPP-`` prefix or META,
a PhysioNet ``pid``) and output file names.

A pseudonym is the first :data:`PSEUDONYM_HEX` hex digits of ``HMAC-SHA256(key, kind NUL value)``
(``kind``: ``"patient"`` or ``"file"``, so a patient id and a file name never share one).

* With a key the user holds (``--pseudonym-key-file FILE`` or the environment variable
  :data:`KEY_ENV`; at least :data:`MIN_KEY_BYTES` bytes, surrounding whitespace ignored), the
  same id gets the same pseudonym in every run: batches released at different times link.
  Without the key nobody can tell which id a pseudonym stands for (short ids such as MRNs
  cannot be brute-forced: the key is the secret, not the id).
* Without a key, a fresh random key of 32 bytes from the OS CSPRNG is drawn for the run and
  never stored: the only record of which id became which pseudonym is the map written into
  ``--audit`` (none without ``--audit``).

Two different values whose pseudonyms coincide (about 2**-64 per pair) are refused rather
than merged. ``tests/pipeline/test_side_channels.py`` guards that no id leaves in clear.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

__all__ = ["KEY_ENV", "MIN_KEY_BYTES", "PSEUDONYM_HEX", "Pseudonyms", "PseudonymError", "load_key"]

#: environment variable holding the pseudonym key (``--pseudonym-key-file`` wins when both are given)
KEY_ENV = "DEIDLIB_PSEUDONYM_KEY"
MIN_KEY_BYTES = 16
#: hex digits kept of the HMAC (64 bits)
PSEUDONYM_HEX = 16


class PseudonymError(ValueError):
    """A key that is missing, unreadable or too short, or a pseudonym collision (one line)."""


def load_key(key_file: str | os.PathLike | None = None, environ=os.environ) -> bytes | None:
    """The key from ``key_file``, else from ``$DEIDLIB_PSEUDONYM_KEY``, else ``None``."""
    if key_file is not None:
        try:
            key = Path(key_file).read_bytes().strip()
        except OSError as e:
            raise PseudonymError(f"--pseudonym-key-file {key_file}: cannot read ({e.strerror})") from None
        where = f"--pseudonym-key-file {key_file}"
    elif environ.get(KEY_ENV):
        key, where = environ[KEY_ENV].encode("utf-8").strip(), f"${KEY_ENV}"
    else:
        return None
    if len(key) < MIN_KEY_BYTES:
        raise PseudonymError(f"{where}: the key has {len(key)} bytes; use at least {MIN_KEY_BYTES} random bytes "
                             "(e.g. 'openssl rand -hex 32 > KEYFILE')")
    return key


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
        known = self._map.get(kind, {}).get(value)
        if known is not None:
            return known
        p = hmac.new(self._key, f"{kind}\0{value}".encode(), hashlib.sha256).hexdigest()[:PSEUDONYM_HEX]
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
