"""The transfer study's reference numbers. No paper states a transfer result: the rules-based
peers' binary-token F1 on the nursing notes (:data:`PEERS_NURSING`) is what a tagger trained on
synthetic notes only is set against, next to the target (:data:`~.params.TARGET`). The study has
no claims table of its own; its scores are in :func:`~.tables.score_rows`.
"""

from __future__ import annotations

__all__ = ["PEERS_NURSING"]

#: rules-based peers on the nursing notes' 486 test notes, binary-token F1
PEERS_NURSING = {"Philter (UCSF)": 0.118, "Presidio": 0.100}
