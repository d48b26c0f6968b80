import random

import pytest

from deidlib.utility.classify import classify, restrict, top_classes

VOCAB = {c: [f"{c}word{i}" for i in range(8)] for c in ("cardio", "neuro", "onco")}
NOISE = [f"filler{i}" for i in range(40)]


def toy(n=240, seed=0):
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        c = list(VOCAB)[i % 3]
        words = rng.choices(VOCAB[c], k=4) + rng.choices(NOISE, k=12)
        rng.shuffle(words)
        texts.append(" ".join(words))
        labels.append(c)
    return texts, labels


def test_separable_toy_problem_reaches_high_f1():
    texts, labels = toy()
    r = classify(texts, labels, seed=0)
    assert r["macro_f1"] > 0.95 and r["accuracy"] > 0.95 and r["n_test"] == 60


def test_shuffled_labels_are_near_chance():
    texts, labels = toy(n=600)
    random.Random(1).shuffle(labels)
    r = classify(texts, labels, seed=0)
    assert r["accuracy"] < 0.5  # chance is 1/3


def test_deterministic_and_top_classes_are_nested_by_frequency():
    texts, labels = toy()
    assert classify(texts, labels, seed=2) == classify(texts, labels, seed=2)
    labs = list("aaaabbbccd")
    assert top_classes(labs, 2) == ["a", "b"] and top_classes(labs, 3) == ["a", "b", "c"]
    t, y = restrict(list("0123456789"), labs, ["c", "d"])
    assert t == ["7", "8", "9"] and y == ["c", "c", "d"]
    with pytest.raises(ValueError, match="cannot pick 5 classes"):
        top_classes(labs, 5)


def test_group_split_keeps_each_group_on_one_side():
    texts, labels = toy(n=240)
    groups = [i // 4 for i in range(240)]  # 60 "patients" with 4 notes each
    r = classify(texts, labels, groups=groups, seed=0)
    assert r["n_train"] + r["n_test"] == 240 and r["n_test"] % 4 == 0 and r["macro_f1"] > 0.9


def test_grouped_split_with_a_class_rarer_than_the_folds_prints_no_warning():
    import warnings

    from deidlib.utility.classify import classify

    texts = [f"fever cough patient {i}" for i in range(20)] + [f"fracture cast patient {i}" for i in range(20)]
    texts += ["rash itch patient a", "rash itch patient b"]
    labels = ["a"] * 20 + ["b"] * 20 + ["c"] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = classify(texts, labels, groups=[f"p{i}" for i in range(len(texts))], test_size=0.25)
    assert r["n_train"] + r["n_test"] == len(texts) and r["accuracy"] > 0.5
