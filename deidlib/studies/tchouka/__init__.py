"""Study of notebook ``08_tchouka_surrogates``: differentially private surrogate generation.

Tchouka, Couchot & Laiymani (2023), "An Easy-to-use and Robust Approach for the
Differentially Private De-Identification of Clinical Textual Documents", section 4. All
computation of the notebook lives here; the surrogate engine itself is
:mod:`deidlib.surrogates`.

* (a) :func:`thread_example` — the paper's thread example ("Mr. Durand born in Dijon, 40
  years old, ...", section 4) end to end with the French locale: spans, the uniform budget
  split of section 4.1 (2 dates + 1 age + 1 city = 4 entities, ε/4 each), the sampled
  surrogates. :func:`figure6_data` — the Figure 6 analog: the ``k = 10`` candidates of
  Algorithm 1 around Dijon, their distances, scores ``U = 1 - d`` and the exponential
  mechanism's probabilities for several ε.
* (b) :func:`date_utility` / :func:`location_utility` — utility against ε: absolute error,
  chronology and length-of-stay error for dates, absolute error for ages, for the
  ε·d-private discrete Laplace (``dp``) and the baselines (``ldp``: bounded Laplace of
  Tchouka et al. 2022; ``shift``: one uniform shift per patient, Stubbs et al. 2015;
  ``none``); for cities, the expected normalised feature distance and geographic distance
  between a city and its substitute for the fixed-candidate exponential mechanism,
  Algorithm 1 as published, geo-indistinguishability and a uniform random place.
* (c) :func:`known_date_attack` — the attack of section 2 ("an attacker only needs to know
  one date in file to reconstruct the others"): the attacker knows one true date of each
  patient and its surrogate; under ``shift`` it recovers every other date exactly.
  :func:`guarantee_checks` — each mechanism's ε·d bound checked on neighbouring inputs,
  exactly where the output law is known in closed form and empirically (histograms of
  sampled outputs, :func:`deidlib.surrogates.audit.ratio_test`).
* (d) :func:`before_after` — a synthetic note with its gold PHI surrogated.
* Thread table (:mod:`.thread_values`, the paper's Figure 5 analog): :func:`thread_table`
  lists, per mention, the original and surrogate values and the shift of the paper example
  and of one synthetic patient's notes (:func:`patient_thread`, one ε and memo per patient);
  :func:`plot_thread` draws it.
* Table 2 analog (:mod:`.ner`): :func:`table2` scores the tagger that feeds ``deidlib
  deidentify`` (:func:`default_tagger_predictions`) per paper label with the i2b2 scorer,
  beside the paper's Table 2.

**Choices where the paper is silent (named here, also in the notebook).**

* Utility curves are drawn against the ε *of one entity* (after the budget split), since
  the split depends on how many entities a note holds.
* Patient timelines for (b)/(c) are simulated (:func:`simulate_timelines`): 1–4 stays per
  patient over the 20 years before the reference date, gaps of about 6 months between
  stays, stays of Geometric(mean 5) >= 1 days, one age per patient (18–99). They stand in
  for the paper's French hospital records, which are not public.
* Dates are integers in days before the reference date (the d-privacy mechanism is
  translation invariant, so this is the engine's mechanism exactly; the LDP baseline needs
  the reference date for its time categories).
* Geo-indistinguishability is calibrated per kilometre; to put it on the same ε axis as
  the exponential mechanism over the normalised metric ``d``, it gets
  ``ε_km = ε / L`` with ``L`` the kilometres that correspond to ``d = 1`` on the
  coordinate part of ``d`` (:func:`km_per_unit`; so two cities that differ only in place
  get about the same ε·d bound under both).
* The attacker of (c) is reported with two estimators: the *shift estimator* (the paper's
  attack: add the offset learned from the known date to every other surrogate) and the
  *MAP estimator* (take each surrogate as is: the most likely original under the
  independent, zero-centred d-privacy noise). Success means exact recovery of a date;
  a patient is compromised when every other date is recovered.
"""

from __future__ import annotations

from . import figures, ner, params, privacy, summarize, thread, thread_values, utility
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
