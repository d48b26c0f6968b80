"""Ahmed (PhD thesis, chapter 4 and appendix A): GRU, stacked-RNN and self-attention PHI
taggers compared with a Dernoncourt-style BiLSTM, at the profile's scale.

Notebook ``02_ahmed_models`` calls :func:`run_study` and turns its JSON-able result into

* :func:`table_4_2` — binary-token P/R/F1 of the Dernoncourt-style BiLSTM (``festag``
  kind, softmax and CRF), GRU, GRU-GRU, LSTM-GRU and self-attention (the pre-trained
  ``minilm`` encoder with a CRF) taggers, plus a transformer trained from scratch
  (``transformer``, labelled "transformer (from scratch)"; not in the thesis) (thesis
  Table 4.2; Khin et al. has no implementation here and is left out);
* :func:`table_4_3` — GRU without/with character embedding, dropout 0 / 0.25 / 0.5, CRF
  vs softmax, and the self-attention tagger at dropout 0.1 / 0.25 / 0.5 and with softmax
  (Table 4.3; its character-embedding cell reads "n/a (sub-words)": the variable does not
  apply to a WordPiece encoder, as the thesis's "-");
* :func:`table_4_4` — the recall penalty δ_p ∈ {1, 3, 5, 10, 15} on the self-attention
  tagger (Table 4.4; §4.1.5, eq. 4.7–4.9, implemented in :mod:`deidlib.models.taggers`);
* :func:`table_vocabulary` — the same models' P/R/F1 on the test tokens out of the training
  vocabulary (only the character encoder sees them) and in it: where character features
  should matter;
* :func:`table_misspelled` — the same models on a copy of the test split with typing errors
  (:mod:`deidlib.synthetic.misspell`: keyboard-adjacent substitutions, transpositions,
  dropped and doubled letters in ``misspell_rate`` of the PHI and non-PHI words), scored on the
  misspelled tokens and the intact ones: where the thesis says characters matter;
* :func:`paired_effects` — each effect the thesis claims (self-attention vs best RNN,
  characters on all / OOV / misspelled tokens, CRF vs softmax, dropout, δ_p) as a paired
  comparison over seeds: mean difference, 95 % t interval, paired t-test, and a verdict
  ``found`` / ``not distinguishable from zero`` / ``reversed``
  (:mod:`deidlib.studies.seed_stats`);
* :func:`table_4_10` — training seconds per epoch, prediction seconds on the test split
  and trainable parameter count (Table 4.10);
* :func:`table_a1` — per-category P/R/F1 of a Table 4.2 model (Table A.1; the notebook
  shows the self-attention model, as the thesis);
* :func:`figure_a1_data` / :func:`figure_a1` — per-category (and per-TYPE) test F1
  against the number of PHI instances in the training data (Figure A.1);
* :func:`figure_4_2` — Table 4.2 as a bar chart with ± sd error bars.

Setup (thesis §4.1–4.3):

* labels: the PHI sub-categories (``i2b2`` scheme, festag's 28 TYPEs + O) in the
  **BIOES** encoding (§4.1.4 and §4.3: "We used the BIOES tagging scheme");
* every model trains with Adam, gradient-norm clipping 5.0 and early stopping on the dev
  split's binary-token F1 with patience 10 (§4.2.2); the paper profile keeps the thesis's
  initial learning rate 1e-5 and 100 epochs, the smoke/cpu profiles use a larger rate and
  few epochs so that small models learn something in minutes;
* the score is the binary token-level P/R/F1 of the i2b2 2014 scorer
  (:func:`deidlib.evaluation.evaluate`, measure ``binary_token``); the thesis calls its
  Table 4.2 measure "binary HIPAA token-based", which is also recorded
  (``hipaa_precision``/``hipaa_recall``/``hipaa_f1``, measure ``binary_hipaa_token``);
* data: :func:`deidlib.datasets.load_corpus` (PhysioNet nursing notes: the thesis's
  document-level 80/20 split, 1,948/486 notes, with 20 % of the training notes as dev;
  ``split="patient"`` for a patient-level split). The data split is fixed by
  ``data_seed``; the listed ``seeds`` vary initialisation, dropout and batch order, and
  tables report the mean and its 95 % Student t interval over them (sd, min and max in the
  CSV). Configurations no claim reads (``claim_configs``) train on the first
  ``n_seeds_other`` seeds only (cpu profile: 5 seeds for the claim rows, 3 for the SAT rows at
  dropout 0.1 and 0.5).

Deviations and choices (also visible in the returned ``params``):

* **Word vectors.** The thesis used GloVe 6B 100-d for the RNNs; it cannot be downloaded
  here. The RNN taggers (and the from-scratch transformer) get gensim Word2Vec vectors
  trained on the training sentences only (one set per ``word_dim``, seeded by
  ``data_seed``), fine-tuned during training as in §4.2.2 ("Fine Tuning").
  ``word_vectors="random"`` disables them. The self-attention tagger has no word vectors:
  its encoder reads its own public WordPiece pieces (Table A.1's word-embedding choices do
  not apply to it).
* **Self-attention.** The thesis fine-tunes a pre-trained BERT-base (12 blocks, 12 heads,
  768 hidden, ~110 M parameters) with a CRF. Here the pre-trained encoder is
  all-MiniLM-L6-v2 (6 layers, 12 heads, 384 hidden, 22.6 M parameters; a local package,
  :class:`deidlib.models.encoder_tagger.EncoderTagger`, kind ``minilm``): each word is the
  mean of its pieces' last-layer states, with the casing feature, dropout, a linear layer
  and the CRF. **What is fine-tuned**: the paper profile fine-tunes the whole encoder end to
  end (``sizes["minilm"] = {"finetune_layers": None}``); the cpu profile only its top two
  layers (``finetune_layers=2``; embeddings and layers 1–4 stay at the pre-trained weights),
  for ``sat_epochs=3`` at ``sat_lr=3e-4``, because on one CPU thread an epoch over its
  1,000 training sentences took 44 s end to end and 23 s with the top two layers (against
  1.5 s for the GRU); the smoke profile freezes it and keeps only its first layer. The
  thesis's learning rate (1e-5) and epochs are the paper profile's for every model.
  The small ``transformer`` tagger trained from scratch on word2vec vectors (with a
  character GRU) is kept as an extra Table 4.2 row, "transformer (from scratch)"
  (``scratch_transformer``); no claim reads it.
* **Seeds of the SAT rows** (``n_seeds_sat``): the Table 4.2 SAT row trains on every seed;
  the other SAT rows (softmax, dropouts, δ_p) on the first ``n_seeds_sat``. The cpu profile
  (2 seeds) also trains no SAT dropout row other than 0.25 and only δ_p ∈ {1, 10}, and
  does not score the SAT on the misspelled split (``sat_misspelled``): a SAT run cost 181 s
  against 11 s for the GRU (one thread, shared machine), and the notebook must fit 35
  minutes.
* **Dropout knob.** For the ahmed RNNs, dropout ``d`` is applied to the token features
  and to the context layer output before the label decoding layer (§4.2.2), i.e.
  ``input_dropout = output_dropout = d`` and, for stacked models, ``between_dropout = d``.
  The thesis applies the attention model's dropout "only before the label decoding
  layer": for the self-attention (MiniLM) tagger ``d`` is its ``input_dropout``, the
  dropout on the encoder's word vectors right before the linear layer and CRF. The
  from-scratch :class:`deidlib.models.TransformerTagger` has no dropout there, so ``d``
  sets its ``input_dropout`` and ``attn_dropout`` (encoder dropout) instead.
* **Dernoncourt baseline.** The thesis ran Dernoncourt et al.'s NeuroNER implementation;
  here it is the ``festag`` kind (char BiLSTM + word embedding → BiLSTM → FNN →
  softmax, or CRF), trained with the same optimiser, schedule and FNN activation as the
  ahmed models so that the comparison isolates the encoders (NeuroNER itself uses SGD and a
  tanh FNN). Its dropout stays the preset's (0.5 on the token features).
* **Khin et al.** (Table 4.2's second row) is not reimplemented.
* **Batch size** is not given in the thesis; 32 sentences (length-bucketed) is our choice
  (16 in the smoke/cpu profiles, for more steps on little data).
* **Threads.** smoke and cpu run torch on one intra-op thread (``num_threads=1``, restored
  afterwards): on a shared 2-core machine, two threads under load were several times
  slower than one (busy-waiting threads; measured in CHANGELOG.md). Table 4.10 timings are
  therefore single-thread CPU seconds (``results["torch_threads"]``), not GPU seconds;
  ``n_parameters`` counts trained parameters, ``n_parameters_total`` all (the SAT's frozen
  layers included).
* **Best model** (:func:`best_config`) is the Table 4.2 configuration with the highest
  mean dev F1; with no dev split, the highest mean test F1. The notebook's Table A.1 shows
  the self-attention model, as the thesis, and prints the best model beside it.
* **Training instances** (Figure A.1) are PHI mentions (``B-``/``S-`` tags) in the
  training sentences actually used (after the profile's sentence cap).
* **Sparse PHI** (``negatives_per_positive``, off by default): only 4 % of the nursing
  notes' training sentences hold PHI, so a 1,000-sentence cap leaves about 40 of them;
  ``negatives_per_positive=k`` keeps every PHI sentence and ``k`` PHI-free ones per PHI
  sentence before the cap. Dev and test keep their natural distribution.
* **Feed-forward activation.** The thesis puts an FNN between the context layer and the
  softmax/CRF of every RNN model (§4.1.4) without naming its activation. We use a ReLU
  (``ff_activation="relu"``, for the Dernoncourt baseline too, so that the rows differ only
  in their encoders); ``"tanh"`` (NeuroNER's) is one parameter away. Measured at the cpu
  profile (Adam 8e-3, 1,000 synthetic sentences): with tanh, after one epoch every FNN
  pre-activation of the GRU softmax tagger had ``|z| > 2`` and its emissions no longer varied
  across tokens (sd 0.000: a constant layer that encodes the label marginal, whose tanh'
  ≈ 0 passes no gradient), and the GRU softmax, GRU-GRU, LSTM-GRU and BiLSTM rows stayed in
  the all-``O`` phase for all six epochs on one or both seeds (also at lr 1e-3); with ReLU
  the emissions vary (sd 0.95) and every one of them left it by its second to fourth epoch.
* **CRF** outputs are constrained to well-formed BIOES paths (``deidlib.models.crf``);
  without that, the char-GRU-CRF rows did not leave the all-O phase in the cpu profile.
* Per-category scores use the typed ``token`` mode of the scorer (a token counts for a
  category only with the right TYPE), per-category for Table A.1 and per-TYPE for the
  second panel of Figure A.1.
"""

from __future__ import annotations

from . import effects, figures, params, runs, tables
from .effects import Effect, effects_for, paired_effects
from .figures import figure_4_2, figure_a1
from .params import (
    ENCODING,
    METRICS,
    PROFILE_PARAMS,
    RNN_KINDS,
    SAT_KIND,
    SAT_LABEL,
    SCHEME,
    SCRATCH_KIND,
    SCRATCH_LABEL,
    SHORT,
    TABLES,
    AhmedParams,
    RunConfig,
    claim_configs,
    config_grid,
    main_sat,
    params_for,
    table_configs,
    tagger_hparams,
)
from .runs import AhmedData, AhmedResults, RunOutput, prepare_data, run_config, run_study, seeds_for
from .tables import (
    best_config,
    category_table,
    figure_a1_data,
    interval_view,
    runs_frame,
    summarize,
    table_4_2,
    table_4_3,
    table_4_4,
    table_4_10,
    table_a1,
    table_misspelled,
    table_vocabulary,
)

__all__ = [
    "params",
    "runs",
    "tables",
    "figures",
    "effects",
    "Effect",
    "effects_for",
    "paired_effects",
    "claim_configs",
    "main_sat",
    "SAT_KIND",
    "SAT_LABEL",
    "SCRATCH_KIND",
    "SCRATCH_LABEL",
    "seeds_for",
    "interval_view",
    "table_misspelled",
    "METRICS",
    "RNN_KINDS",
    "SHORT",
    "SCHEME",
    "ENCODING",
    "TABLES",
    "AhmedParams",
    "PROFILE_PARAMS",
    "RunConfig",
    "params_for",
    "config_grid",
    "table_configs",
    "tagger_hparams",
    "AhmedData",
    "prepare_data",
    "RunOutput",
    "AhmedResults",
    "run_config",
    "run_study",
    "runs_frame",
    "summarize",
    "table_4_2",
    "table_4_3",
    "table_4_4",
    "table_vocabulary",
    "table_4_10",
    "best_config",
    "table_a1",
    "category_table",
    "figure_a1_data",
    "figure_4_2",
    "figure_a1",
]
