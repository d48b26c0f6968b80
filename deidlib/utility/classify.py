"""Downstream document classification on original vs de-identified text (Ahmed thesis §4.3.2, Table 4.9).

The thesis trains "a supervised deep learning model" (unspecified) on MIMIC-III notes with 3, 5
and 7 ICD9 codes (Tables 4.7/4.8, nested sets) and reports P/R/F1 and accuracy. We use a
well-kept, fast, deterministic classifier instead: scikit-learn TF-IDF (word 1-2-grams,
sublinear tf) + multinomial logistic regression, evaluated on a seeded stratified split.

Class choice (the thesis lists its 7 codes without a rule): :func:`top_classes` takes the n
most frequent labels (ties by label), so the 3-class set is inside the 5-class set inside
the 7-class set, as in Table 4.8. Synthetic notes carry the label in
``Document.metadata["diagnosis"]`` (7 classes, :data:`deidlib.synthetic.vocab.DIAGNOSIS_LABELS`);
medical abstracts have 5 (:mod:`deidlib.utility.abstracts`).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedGroupKFold, train_test_split
from sklearn.pipeline import make_pipeline

__all__ = ["top_classes", "restrict", "classify"]


def top_classes(labels: Sequence, n: int) -> list:
    """The ``n`` most frequent labels (ties broken by label); error if fewer than ``n`` exist."""
    counts = Counter(labels)
    if n < 2 or n > len(counts):
        raise ValueError(f"cannot pick {n} classes from {len(counts)} distinct labels (need 2 <= n <= {len(counts)})")
    return sorted(counts, key=lambda c: (-counts[c], str(c)))[:n]


def restrict(texts: Sequence[str], labels: Sequence, classes: Sequence) -> tuple[list[str], list]:
    """Only the examples whose label is in ``classes``."""
    keep = set(classes)
    pairs = [(t, y) for t, y in zip(texts, labels) if y in keep]
    return [t for t, _ in pairs], [y for _, y in pairs]


def _make_classifier(seed: int = 0):
    """TF-IDF (1-2-grams, sublinear tf, min_df 2) + logistic regression (lbfgs, C=10)."""
    return make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2, lowercase=True),
        LogisticRegression(C=10.0, max_iter=2000, random_state=seed),
    )


def classify(texts: Sequence[str], labels: Sequence, *, test_texts: Sequence[str] | None = None,
             test_labels: Sequence | None = None, test_size: float = 0.25, seed: int = 0,
             groups: Sequence | None = None) -> dict[str, float]:
    """Train on ``texts``/``labels`` and score on a held-out set: accuracy, macro- and micro-F1.

    With ``test_texts``/``test_labels`` those are the test set; otherwise a seeded stratified
    ``test_size`` split; with ``groups`` (e.g. patient ids) the split keeps each group on one
    side (first fold of a seeded ``StratifiedGroupKFold`` with ``round(1/test_size)`` folds), so
    a classifier cannot recognise a patient's name instead of the diagnosis (a class with fewer
    members than folds may miss the test side; scikit-learn's warning about it is not printed).
    For Table 4.9 call it once per (de-identification, n classes) with the
    same split seed, so original and de-identified runs see the same documents.
    """
    if len(texts) != len(labels):
        raise ValueError(f"{len(texts)} texts but {len(labels)} labels")
    if len(set(labels)) < 2:
        raise ValueError("classification needs at least 2 classes")
    if test_texts is None and groups is not None:
        if len(groups) != len(labels):
            raise ValueError(f"{len(groups)} groups but {len(labels)} labels")
        folds = StratifiedGroupKFold(n_splits=max(2, round(1 / test_size)), shuffle=True, random_state=seed)
        with warnings.catch_warnings():
            # a class with fewer members than folds cannot be in every fold: the split still keeps
            # each group on one side, and the scores count the classes the test side has
            warnings.filterwarnings("ignore", message="The least populated class in y", category=UserWarning)
            tr, te = next(folds.split(list(texts), list(labels), list(groups)))
        xtr, ytr = [texts[i] for i in tr], [labels[i] for i in tr]
        xte, yte = [texts[i] for i in te], [labels[i] for i in te]
    elif test_texts is None:
        xtr, xte, ytr, yte = train_test_split(list(texts), list(labels), test_size=test_size,
                                              random_state=seed, stratify=list(labels))
    else:
        if test_labels is None or len(test_texts) != len(test_labels):
            raise ValueError("test_texts needs test_labels of the same length")
        xtr, ytr, xte, yte = list(texts), list(labels), list(test_texts), list(test_labels)
    clf = _make_classifier(seed).fit(xtr, ytr)
    pred = clf.predict(xte)
    return {
        "accuracy": float(accuracy_score(yte, pred)),
        "macro_f1": float(f1_score(yte, pred, average="macro")),
        "micro_f1": float(f1_score(yte, pred, average="micro")),
        "n_train": len(xtr),
        "n_test": len(xte),
    }
