"""Study of notebook ``08_tchouka_surrogates``: differentially private surrogate generation.

Tchouka, Couchot & Laiymani (2023), "An Easy-to-use and Robust Approach for the
Differentially Private De-Identification of Clinical Textual Documents", section 4. The
notebook resolves :func:`params_for`, calls :func:`run_study` (:class:`TchoukaResults`: every
table below, in the notebook's order) and draws with the ``plot_*`` functions of ``figures``;
``tables`` holds the JSON summary, ``claims`` the paper's statements. The surrogate engine
itself is :mod:`deidlib.surrogates`. The study's own parts, used by ``run``:

* (a) :func:`.thread.thread_example` — the paper's thread example (section 4) end to end with the
  French locale and the uniform budget split of section 4.1; :func:`.thread.figure6_data` — the
  Figure 6 analog (Algorithm 1's ``k = 10`` candidates, scores ``U = 1 - d``, the exponential
  mechanism's probabilities per ε).
* (b) :func:`.utility.date_utility` / :func:`.utility.location_utility` — utility against ε for the ε·d-private
  mechanisms and their baselines (bounded Laplace of Tchouka et al. 2022, one shift per
  patient of Stubbs et al. 2015, geo-indistinguishability, a uniform place).
* (c) :func:`.privacy.known_date_attack` — the attack of section 2 (one known date reconstructs the
  others under a shift); :func:`.privacy.guarantee_checks` — each mechanism's ε·d bound checked on
  neighbouring inputs, exactly and empirically (:func:`deidlib.surrogates.audit.ratio_test`).
* (d) :func:`.thread.before_after` — a synthetic note with its gold PHI surrogated.
* :mod:`.thread_values` (Figure 5 analog: the thread table, :func:`plot_thread`) and
  :mod:`.ner` (Table 2 analog).

Where the paper is silent (named in the notebook too): utility is drawn against the ε of one
entity (after the budget split); patient timelines are simulated (``utility.simulate_timelines``);
dates are days before the reference date; geo-indistinguishability is put on the same ε axis
through ``utility.km_per_unit``; the attacker of (c) has a shift and a MAP estimator. The details
and their reasons: ``docs/studies/tchouka.md``.
"""

from __future__ import annotations

from .claims import paper_vs_ours
from .figures import plot_date_utility, plot_figure6, plot_location_utility, plot_privacy, plot_thread
from .params import TchoukaParams, params_for
from .run import TchoukaResults, run_study

__all__ = [
    "TchoukaParams",
    "TchoukaResults",
    "params_for",
    "run_study",
    "plot_figure6",
    "plot_date_utility",
    "plot_location_utility",
    "plot_privacy",
    "plot_thread",
    "paper_vs_ours",
]
