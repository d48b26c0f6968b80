"""Notebook ``09_privacy_frontier``: every privacy method of the package attacked the same way on
one synthetic corpus, its utility next to the attack's success (the privacy–utility frontier).

The population is the training split's sentences (whole patients, capped); the test split
scores utility (binary-token F1). Every part but the ε audits runs on ``seeds`` seeds; the
frontier gives the mean over seeds with the min–max interval, the statements the F1 cost with
the 95 % t interval of the paired difference (:mod:`deidlib.studies.seed_stats`).

* :mod:`.membership`: DP-SGD through a recipe that learns (frozen public MiniLM, DP-Adam, large
  lots) and the from-scratch taggers (the thesis' way), attacked by membership inference (loss
  threshold, offline LiRA: Yeom et al. 2018, Carlini et al. 2022) per sentence and per patient
  and by canary exposure (Carlini et al. 2019). The guarantee is per sentence; a ``k``-copy
  canary is bounded only through group privacy (``k·ε``).
* :mod:`.releases`: DSSGD (word reconstruction from the first upload), surrogates (note linkage,
  equal-value disclosure), pseudonymization (Friedrich et al. 2019 §4; word recovery).
* :mod:`.representations`: friedrich §5 (notebook 06) and alawad's shared layers (notebook 07)
  through their own notebooks' functions, each with its no-privacy controls.
* :mod:`.accountant`: the one-step white-box audit (Jagielski et al. 2020, Nasr et al. 2021) and
  the one-run audit of ``train_dp`` (Steinke, Nasr & Jagielski 2023); a correct mechanism whose
  lower bound beats the accountant's ε raises, a deliberately broken one must exceed its claim.
* :mod:`.methods` lists every method with its attack family (one frontier panel each) and what
  it protects; :mod:`.tables`, :mod:`.claims` (:func:`missing_methods`, the per-method
  statements) and :mod:`.figures` turn the run (:mod:`.run`) into the notebook's outputs.

The set-up of every part, its choices and their reasons: ``docs/studies/audits.md``.
"""

from .claims import missing_methods, paper_vs_ours
from .figures import plot_frontier
from .methods import METHODS
from .params import alawad_params, friedrich_params, params_for
from .run import AuditResults, run_study

__all__ = [
    "paper_vs_ours", "params_for", "plot_frontier", "run_study", "AuditResults", "METHODS", "missing_methods",
    "friedrich_params", "alawad_params",
]
