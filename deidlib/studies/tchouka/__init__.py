"""Study of notebook ``08_tchouka_surrogates``: differentially private surrogate generation.

Tchouka, Couchot & Laiymani (2023), "An Easy-to-use and Robust Approach for the
Differentially Private De-Identification of Clinical Textual Documents", section 4. All
computation of the notebook lives here; the surrogate engine itself is
:mod:`deidlib.surrogates`.

* (a) :func:`thread_example` — the paper's thread example (section 4) end to end with the
  French locale and the uniform budget split of section 4.1; :func:`figure6_data` — the
  Figure 6 analog (Algorithm 1's ``k = 10`` candidates, scores ``U = 1 - d``, the exponential
  mechanism's probabilities per ε).
* (b) :func:`date_utility` / :func:`location_utility` — utility against ε for the ε·d-private
  mechanisms and their baselines (bounded Laplace of Tchouka et al. 2022, one shift per
  patient of Stubbs et al. 2015, geo-indistinguishability, a uniform place).
* (c) :func:`known_date_attack` — the attack of section 2 (one known date reconstructs the
  others under a shift); :func:`guarantee_checks` — each mechanism's ε·d bound checked on
  neighbouring inputs, exactly and empirically (:func:`deidlib.surrogates.audit.ratio_test`).
* (d) :func:`before_after` — a synthetic note with its gold PHI surrogated.
* :mod:`.thread_values` (Figure 5 analog: :func:`thread_table`, :func:`patient_thread`,
  :func:`plot_thread`) and :mod:`.ner` (Table 2 analog: :func:`table2`).

Where the paper is silent (named in the notebook too): utility is drawn against the ε of one
entity (after the budget split); patient timelines are simulated (:func:`simulate_timelines`);
dates are days before the reference date; geo-indistinguishability is put on the same ε axis
through :func:`km_per_unit`; the attacker of (c) has a shift and a MAP estimator. The details
and their reasons: ``docs/studies/tchouka.md``.
"""

from __future__ import annotations

from . import claims, figures, ner, params, privacy, summarize, thread, thread_values, utility
from .claims import paper_vs_ours
from .figures import plot_date_utility, plot_figure6, plot_location_utility, plot_privacy, plot_thread
from .ner import PAPER_LABEL, PAPER_TABLE2, default_tagger_predictions, table2
from .params import DATE_METHODS, LOCATION_STUDY_METHODS, PROFILE_PARAMS, TchoukaParams, params_for
from .privacy import guarantee_checks, known_date_attack
from .summarize import summary
from .thread import (
    THREAD_REFERENCE,
    THREAD_SPANS,
    THREAD_TEXT,
    before_after,
    figure6_data,
    load_french_places,
    thread_document,
    thread_example,
)
from .thread_values import patient_thread, thread_table
from .utility import Timelines, date_utility, km_per_unit, location_utility, simulate_timelines

__all__ = [
    "paper_vs_ours",
    "claims",
    "figures",
    "ner",
    "thread_values",
    "params",
    "privacy",
    "summarize",
    "thread",
    "utility",
    "DATE_METHODS",
    "LOCATION_STUDY_METHODS",
    "TchoukaParams",
    "PROFILE_PARAMS",
    "params_for",
    "THREAD_TEXT",
    "THREAD_SPANS",
    "THREAD_REFERENCE",
    "thread_document",
    "thread_example",
    "figure6_data",
    "simulate_timelines",
    "Timelines",
    "date_utility",
    "km_per_unit",
    "location_utility",
    "known_date_attack",
    "guarantee_checks",
    "before_after",
    "plot_figure6",
    "plot_date_utility",
    "plot_location_utility",
    "plot_privacy",
    "summary",
    "load_french_places",
    "patient_thread",
    "thread_table",
    "plot_thread",
    "PAPER_LABEL",
    "PAPER_TABLE2",
    "default_tagger_predictions",
    "table2",
]
