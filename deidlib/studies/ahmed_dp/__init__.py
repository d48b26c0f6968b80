"""Ahmed 2020 (thesis) chapter 5 and appendix A.3/A.4, notebook ``04_ahmed_dp_ensemble``: DP-SGD
taggers, the ε table (Table 5.3), a privacy–utility curve, and the DP ensemble with minimality
aggregation (Definition 5.1.1; Tables 5.1, 5.2, A.3).

All training goes through :func:`deidlib.privacy.dpsgd.train_dp` (Algorithm 1), all accounting
through :mod:`deidlib.privacy.accounting`; the thesis' Table 5.3 and its inversion to sequence
counts live in :mod:`.accounting`, the thesis' numbers in :mod:`.claims`.

Deviations, each stated (the thesis trains a 110M-parameter self-attention tagger on i2b2 2014,
MIMIC-III and the nursing notes; none fits a 2-core CPU, MIMIC-III and i2b2 are not here):

* three synthetic sites (one per hospital, split by patient) stand in for the three data sets;
  ``corpus="physionet"`` adds the nursing notes as the curve's corpus and a fourth site;
* the self-attention tagger (§5.1.2) is shrunk by the profiles; labels are binary PHI with BIO;
  its DP cost (Table 5.3) is measured against notebook 02's SAT (:func:`sat_dp_cost`);
* the privacy unit is the sentence (the thesis' "sequence"); the vocabulary comes from each
  site's training sentences, as in the thesis, and is *not* protected by DP-SGD (stated);
* profiles train on keyed per-sentence subsets (:mod:`.data`), so the add/remove guarantee of a
  model trained on the subset holds for the full training set;
* noise and lots are seeded (``secure=False``, reproducible): the (ε, δ) does not hold against
  anyone holding the seed, and every ledger says so; ``deidlib train --dp-*`` uses the CSPRNG;
* scenario A (owner without labels: the other sites' members, alone and aggregated), scenario B
  (owner with labels: its own member and the ensemble of all), fine-tuning (A.3/A.4: a member
  pre-trained elsewhere, fine-tuned with DP-SGD on the owner's data);
* members are DP per sentence on disjoint sites, so the ensemble is (max ε_i, max δ)-DP per
  sentence by parallel composition (:func:`deidlib.privacy.ensemble.ensemble_guarantee`), not
  per person as the thesis argues.

Every choice with its reason and the measurements behind it: ``docs/studies/ahmed_dp.md``.
"""

from .claims import paper_vs_ours
from .figures import plot_curve, plot_recipe_curves, plot_rules
from .params import params_for
from .run import DPStudyResults, run_study
from .tables import dp_costs

__all__ = [
    "DPStudyResults", "params_for", "run_study", "plot_curve", "plot_recipe_curves", "plot_rules", "dp_costs",
    "paper_vs_ours",
]
