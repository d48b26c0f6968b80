"""Memoization of surrogates (Tchouka et al. 2023, section 4: "using the same substitute for
given sensitive information in the document", after Erlingsson et al. 2019 and Arcolezi et
al. 2022).

A :class:`Memo` maps ``(namespace, key)`` to a surrogate value. The engine keeps one memo
per document (scope ``"document"``, the paper) or one per patient (scope ``"patient"``:
the same original value gets the same surrogate in every note of the patient, which also
stops averaging attacks across notes). Keys are normalised values, not surface strings:
"12/02/2020" and "February 12, 2020" share the key of the date 2020-02-12 (and get the same
surrogate date, each written in its own format); "Durand" and "DURAND" share a surname key.

Reusing a memoised draw costs no privacy budget: the published values are a function of
the one draw (post-processing).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Hashable
from typing import Any

__all__ = []

_UNSET = object()


def normalise_key(s: str) -> str:
    """Case-, accent- and whitespace-insensitive key of a string."""
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if not unicodedata.combining(c))
    return " ".join(s.lower().split())


class Memo:
    """A namespaced dictionary of surrogates with hit/miss counters."""

    def __init__(self, scope_id: str = ""):
        self.scope_id = scope_id
        self._d: dict[tuple[str, Hashable], Any] = {}
        self.hits = 0
        self.misses = 0
        #: folded original name words of the scope: never drawn as surrogates (set by the engine)
        self.originals: set[str] = set()
        #: (key, previous value or _UNSET) of every write, so that a draw can be undone (:meth:`rollback`)
        self._journal: list[tuple[tuple[str, Hashable], Any]] = []

    def get(self, namespace: str, key: Hashable, default=None):
        return self._d.get((namespace, key), default)

    def __contains__(self, nk) -> bool:
        return nk in self._d

    def set(self, namespace: str, key: Hashable, value) -> None:
        k = (namespace, key)
        self._journal.append((k, self._d.get(k, _UNSET)))
        self._d[k] = value

    def mark(self) -> int:
        """A point to :meth:`rollback` to (the engine marks before each draw)."""
        return len(self._journal)

    def rollback(self, mark: int) -> None:
        """Undo every write since ``mark``: a surrogate that was drawn and refused (it equalled
        its original) leaves no trace in the memo, so the next draw is a fresh one."""
        while len(self._journal) > mark:
            k, old = self._journal.pop()
            if old is _UNSET:
                self._d.pop(k, None)
            else:
                self._d[k] = old

    def commit(self) -> None:
        """Forget the undo journal (nothing before this point can be rolled back)."""
        self._journal.clear()

    def get_or_create(self, namespace: str, key: Hashable, factory: Callable[[], Any]):
        k = (namespace, key)
        if k in self._d:
            self.hits += 1
            return self._d[k]
        self.misses += 1
        v = factory()
        self._journal.append((k, _UNSET))
        self._d[k] = v
        return v

    def items(self, namespace: str | None = None):
        for (ns, k), v in self._d.items():
            if namespace is None or ns == namespace:
                yield (ns, k), v

    def __len__(self) -> int:
        return len(self._d)
