"""Ahmed (PhD thesis, chapter 4 and appendix A): GRU, stacked-RNN and self-attention PHI
taggers compared with a Dernoncourt-style BiLSTM, at the profile's scale.

Notebook ``02_ahmed_models`` calls :func:`run_study` and turns its result into the thesis'
tables and figures: :func:`table_4_2` (the taggers, binary-token P/R/F1), :func:`table_4_3`
(characters, dropout, CRF vs softmax), :func:`table_4_4` (the recall penalty δ_p, §4.1.5,
eq. 4.7–4.9), :func:`table_vocabulary` and :func:`table_misspelled` (where character features
should matter), :func:`table_4_10` (time and parameters), :func:`table_a1` and
:func:`figure_a1` (per category), :func:`figure_4_2`; :func:`paired_effects` states each effect
the thesis claims as a paired comparison over seeds (:mod:`deidlib.studies.seed_stats`).

Set-up (thesis §4.1–4.3): the i2b2 PHI sub-categories in BIOES (§4.1.4, §4.3); Adam, gradient
clipping 5.0, early stopping on the dev split's binary-token F1 with patience 10 (§4.2.2); the
i2b2 2014 scorer's binary token measure (and the binary HIPAA token measure the thesis names);
the data split fixed by ``data_seed``, the ``seeds`` varying initialisation, dropout and batch
order, tables giving the mean and its 95 % t interval over them.

Deviations, each a parameter (visible in the returned ``params``):

* word vectors: Word2Vec on the training sentences (GloVe 6B cannot be downloaded here);
* self-attention: the pre-trained all-MiniLM-L6-v2 encoder with a CRF stands in for BERT-base
  (the paper profile fine-tunes it end to end, cpu only its top two layers, smoke freezes it);
* the Dernoncourt baseline is the ``festag`` kind trained like the ahmed models; Khin et al.
  is not reimplemented; batch size (not in the thesis) is ours;
* dropout ``d`` where the thesis puts it (§4.2.2: token features and context output; the
  attention model's only before the label decoding layer);
* the FNN of every RNN model uses a ReLU (the thesis names no activation); the CRF is
  constrained to well-formed BIOES paths;
* smoke and cpu run torch on one thread, so Table 4.10 gives single-thread CPU seconds.

The package follows the study protocol (:mod:`deidlib.studies.protocol`): ``params``
(configurations, profiles), ``run`` (:func:`run_study` → :class:`AhmedResults`), ``tables``,
``figures``, ``claims`` (the thesis' numbers) and its own part ``effects`` (paired tests).
Every choice with its reason and the measurements behind it: ``docs/studies/ahmed_models.md``.
"""

from __future__ import annotations

from .claims import paper_vs_ours
from .effects import paired_effects
from .figures import figure_4_2, figure_a1
from .params import SAT_KIND, TABLES, AhmedParams, config_grid, main_sat, params_for
from .run import AhmedResults, run_study
from .tables import (
    best_config,
    figure_a1_data,
    interval_view,
    table_4_2,
    table_4_3,
    table_4_4,
    table_4_10,
    table_a1,
    table_misspelled,
    table_vocabulary,
)

__all__ = [
    "AhmedParams",
    "AhmedResults",
    "params_for",
    "run_study",
    "SAT_KIND",
    "TABLES",
    "config_grid",
    "main_sat",
    "interval_view",
    "table_4_2",
    "table_4_3",
    "table_4_4",
    "table_4_10",
    "table_vocabulary",
    "table_misspelled",
    "table_a1",
    "best_config",
    "figure_a1_data",
    "figure_4_2",
    "figure_a1",
    "paired_effects",
    "paper_vs_ours",
]
