"""Ahmed (2020) thesis §4.3.2: what de-identified text is still good for (notebook ``03_ahmed_utility``).

For every way the package removes PHI and every source of PHI spans, the de-identified corpus
is compared with the original by BLEU-1/2/3 (Table 4.5; :func:`deidlib.utility.bleu.bleu_scores`),
LDA topic overlap, 5 topics × 30 words, with k also chosen by coherence (Table 4.6;
:mod:`deidlib.utility.topics`), and downstream classification with 3, 5 and 7 classes split by
patient (Table 4.9; :func:`deidlib.utility.classify.classify`).

The package follows the study protocol (:mod:`deidlib.studies.protocol`): :func:`params_for`,
:func:`run_study` (:class:`UtilityResults`), the tables of :mod:`.tables`, :func:`plot_tradeoff`
and the claims of :func:`paper_vs_ours`; its own part :mod:`.deidentify` holds the taggers and the
ways of removing PHI. Choices, in short (``docs/studies/ahmed_utility.md`` has each in full):

* ways of removing PHI: removal, category masks, Tchouka et al. surrogates at each ε of
  ``epsilons`` (seeded: a study, not a release) and Friedrich et al. neighbour pseudonymization
  with N public GloVe neighbours, in place (skipped with a note without the GloVe package);
* span sources (:data:`SOURCES`): the gold spans, the GRU-CRF of chapter 4 and a baseline, the
  same GRU-CRF trained far shorter (two points of different recall; the thesis' baseline is a
  different model of similar quality);
* the taggers train on the training split; the de-identified corpus is dev + test (never seen
  by a tagger), and each source's binary-token P/R/F1 is scored on exactly that text;
* optional real text: the medical abstracts (Schopf et al.), de-identified by the same taggers
  and classified; their table stays in ``runs/``.
"""

from .claims import paper_vs_ours
from .figures import plot_tradeoff
from .params import params_for
from .run import UtilityResults, run_study

__all__ = ["UtilityResults", "params_for", "run_study", "plot_tradeoff", "paper_vs_ours"]
