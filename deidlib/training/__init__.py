"""The training engine shared by every study (see :mod:`.trainer`)."""

from .api import build_inputs, fit_tagger, prepare_tagger, word_embeddings
from .io import load_tagger, save_ensemble, save_tagger
from .loop import make_optimizer
from .predict import (
    THRESHOLD_GRID,
    choose_threshold,
    evaluate_tagger,
    operating_points,
    predict_documents,
    predict_tags,
    write_predictions,
)
from .stopping import EarlyStopping, select_epoch
from .trainer import History, train

__all__ = [
    "train", "History", "EarlyStopping", "select_epoch", "fit_tagger", "prepare_tagger", "build_inputs",
    "word_embeddings", "make_optimizer", "predict_tags", "predict_documents", "operating_points",
    "THRESHOLD_GRID", "choose_threshold", "save_ensemble", "evaluate_tagger", "write_predictions",
    "save_tagger", "load_tagger",
]
