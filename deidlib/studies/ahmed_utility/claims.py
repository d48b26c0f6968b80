"""The "paper vs ours" claims of the ahmed_utility study (Ahmed 2020 thesis, Tables 4.5, 4.6 and
4.9): the thesis' numbers, this run's number for each and a verdict computed by
:func:`deidlib.reporting.verdict`, never typed by hand. The claims compare differences (tagger
output − gold spans, de-identified − original): absolute scores depend on the corpus.
"""

from __future__ import annotations

import pandas as pd

from ...reporting import Claim, claims_table, flat_table, table_value

__all__ = ["paper_vs_ours"]

_flat = flat_table
_one = table_value


def _thesis_transform(df: pd.DataFrame) -> str | None:
    """The transform the thesis measures (Tables 4.5, 4.6, 4.9: PHI removed) when the table has it,
    else the first surrogate transform (the table of an older run)."""
    if df.empty or "transform" not in df:
        return None
    names = [str(t) for t in df["transform"].unique()]
    if "removal" in names:
        return "removal"
    s = [t for t in names if t.startswith("surrogate")]
    return s[0] if s else None


def paper_vs_ours(bleu: pd.DataFrame | None, topics: pd.DataFrame | None,
                  classification: pd.DataFrame | None) -> pd.DataFrame:
    """Ahmed, Tables 4.5, 4.6 and 4.9 ("Ours" = our GRU-CRF tagger, "GT" = gold spans, both with
    the thesis' transform: PHI removed, :func:`_thesis_transform`): the tables of
    :mod:`deidlib.studies.ahmed_utility`. The classification row claims no loss of accuracy (the
    thesis' +0.3): a loss is never faithful, a loss within 2 points is partial."""
    bleu, topics, cls = _flat(bleu), _flat(topics), _flat(classification)
    tb, tt, tc = _thesis_transform(bleu), _thesis_transform(topics), _thesis_transform(cls)
    return claims_table([
        Claim(f"tagger output keeps BLEU-1 at least as high as gold de-identification ({tb or 'removal'}): "
              "Ours − GT (Table 4.5, i2b2: 0.923 vs 0.898)", 0.923 - 0.898,
              _one(bleu, "BLEU-1", source="GRU-CRF", transform=tb) - _one(bleu, "BLEU-1", source="ground truth", transform=tb),
              "same_sign", 0.005),
        Claim(f"topic words matched ({tt or 'removal'}): Ours − GT, overall % (Table 4.6, i2b2: 84 vs 83.3)", 84 - 83.3,
              _one(topics, "Overall", source="GRU-CRF", transform=tt) - _one(topics, "Overall", source="ground truth", transform=tt),
              "close", 5.0),
        Claim(f"de-identification ({tc or 'removal'}) loses no diagnosis accuracy, 3 codes: Ours − non-sanitized, % "
              "(Table 4.9: 91.8 vs 91.5)", 0.0,
              _one(cls, "acc 3", source="GRU-CRF", transform=tc) - _one(cls, "acc 3", source="non-sanitized"),
              "at_least", 2.0, paper_text="≥ 0 (+0.3)"),
    ])
