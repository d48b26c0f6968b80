"""Festag & Spreckelsen (JMIR Form Res 2020;4(5):e14064): a PHI tagger trained centralized (A),
round robin (B), with DSSGD (C_0.1, C_0.5) and locally only (D), scored by binary token F1.

Notebook ``01_festag_dssgd`` resolves :func:`params_for`, calls :func:`run_study` and shows
:func:`figure6` (Figure 6: test F1 per epoch), :func:`table3` (Table 3: min / mean / max F1 at
the final and at the dev-selected epoch), the θ_d sweep (:func:`theta_sweep`), the
site-heterogeneity experiment (:func:`heterogeneity_study`) and :func:`paper_vs_ours`.

The package follows the study protocol (:mod:`deidlib.studies.protocol`): ``params`` (the
paper's setup and the profiles), ``data`` (sites, dev splits, test set, tagger factory, binary
token evaluator), ``run``, ``tables``, ``figures`` and ``claims`` (the paper's numbers).

Choices, in short (``docs/studies/festag.md`` has each one's reasons and measurements):

* the festag / Dernoncourt character-enhanced BiLSTM with the 28 PHI subtypes of Table 1 and
  non-PHI (``i2b2`` scheme, ``IO`` encoding); all training goes through
  :mod:`deidlib.collaborative`;
* the sites are the documents' own sites (a one-site corpus is partitioned by patient), each
  with its own dev split; the test set is global and never chooses an epoch;
* one early-stopping rule for every strategy (:class:`deidlib.training.EarlyStopping` on each
  run unit's own dev split; the paper trains 200 epochs without one); scores are reported at
  the final and at the dev-selected epoch;
* NeuroNER's per-token mean loss, on which the paper's learning rate 0.9 was set;
* Word2Vec vectors trained on the training sentences stand in for the paper's Wikipedia ones.
"""

from .claims import PAPER_TABLE3, paper_table3, paper_vs_ours
from .data import binary_token_evaluator
from .figures import figure6, figure_heterogeneity, figure_theta_sweep
from .params import params_for
from .run import FestagResults, heterogeneity_study, run_study, theta_sweep
from .tables import heterogeneity_table, selection, stability, table3, theta_table

__all__ = [
    "FestagResults", "params_for", "binary_token_evaluator", "run_study", "theta_sweep",
    "heterogeneity_study", "selection", "table3", "stability", "theta_table", "heterogeneity_table",
    "figure6", "figure_theta_sweep", "figure_heterogeneity", "PAPER_TABLE3", "paper_table3", "paper_vs_ours",
]
