"""The training engine shared by every study (see :mod:`.trainer`)."""

from .api import TaggerInputs, build_inputs, fit_tagger, prepare_tagger, word_embeddings
from .batching import bucket_batches, epoch_order
from .io import load_tagger, save_ensemble, save_tagger
from .loop import OPTIMIZERS, make_optimizer, step, train_epoch
from .predict import (
    THRESHOLD_GRID,
    choose_threshold,
    evaluate_tagger,
    operating_points,
    predict_documents,
    predict_tags,
    refine_threshold,
    threshold_for_recall,
    write_predictions,
)
from .stopping import EarlyStopping, select_epoch
from .trainer import History, TrainingInterrupted, train

__all__ = [
    "train",
    "History",
    "TrainingInterrupted",
    "EarlyStopping",
    "select_epoch",
    "fit_tagger",
    "prepare_tagger",
    "build_inputs",
    "word_embeddings",
    "TaggerInputs",
    "make_optimizer",
    "step",
    "train_epoch",
    "OPTIMIZERS",
    "bucket_batches",
    "epoch_order",
    "predict_tags",
    "predict_documents",
    "operating_points",
    "threshold_for_recall",
    "refine_threshold",
    "THRESHOLD_GRID",
    "choose_threshold",
    "save_ensemble",
    "evaluate_tagger",
    "write_predictions",
    "save_tagger",
    "load_tagger",
]
