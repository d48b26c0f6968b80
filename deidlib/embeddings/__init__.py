"""Word vectors (gensim), character ids and casing features for the taggers."""

from .chars import CASINGS, N_CHAR_IDS, casing_id, char_ids
from .vectors import embedding_matrix, load_vectors, normalize_token, train_word_vectors

__all__ = [
    "train_word_vectors", "load_vectors", "embedding_matrix", "normalize_token", "char_ids", "N_CHAR_IDS",
    "CASINGS", "casing_id",
]
