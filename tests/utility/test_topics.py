import pytest

from deidlib.utility.topics import _preprocess, choose_num_topics, fit_topics, topic_overlap

CARDIO = "heart cardiac artery coronary infarction troponin chest angina stent ventricle".split()
NEURO = "brain stroke seizure neuron cortex headache migraine aphasia neural epilepsy".split()


def corpus(words_a, words_b, n=30):
    docs = []
    for i in range(n):
        w = words_a if i % 2 else words_b
        docs.append(" ".join(w[(i + j) % len(w)] for j in range(25)))
    return docs


def test_preprocess_drops_stopwords_punctuation_and_short_tokens():
    assert _preprocess("The patient, a 63 yo man, had a Stroke.") == ["patient", "yo", "man", "stroke"]


def test_identical_topic_lists_overlap_fully_and_disjoint_ones_not_at_all():
    a = [["x", "y"], ["z", "w"]]
    same = topic_overlap(a, [["z", "w"], ["y", "x"]])
    assert same.per_topic == [100.0, 100.0] and same.overall == 100.0 and same.pairing == [1, 0]
    none = topic_overlap(a, [["p", "q"], ["r", "s"]])
    assert none.per_topic == [0.0, 0.0] and none.overall == 0.0


def test_matching_is_one_to_one_and_maximises_total_shared_words():
    # greedy on topic 0 would take deid topic 0 (2 shared) and leave topic 1 with 0;
    # the assignment pairs 0->1 (1 shared) and 1->0 (2 shared): total 3 > 2
    orig = [["a", "b", "c"], ["a", "b", "d"]]
    deid = [["a", "b", "x"], ["c", "y", "z"]]
    r = topic_overlap(orig, deid)
    assert r.pairing == [1, 0]
    assert r.per_topic == pytest.approx([100 / 3, 200 / 3])


def test_lda_on_identical_corpora_gives_100_percent_and_disjoint_vocab_0():
    docs = corpus(CARDIO, NEURO)
    t1 = fit_topics(docs, 2, top_n=10, seed=3)
    t2 = fit_topics(list(docs), 2, top_n=10, seed=3)
    r = topic_overlap(t1, t2)
    assert r.per_topic == [100.0, 100.0] and r.overall == 100.0
    other = corpus([w + "x" for w in CARDIO], [w + "q" for w in NEURO])
    assert topic_overlap(t1, fit_topics(other, 2, top_n=10, seed=3)).overall == 0.0


def test_lda_and_coherence_are_deterministic_and_pick_a_candidate():
    docs = corpus(CARDIO, NEURO, n=20)
    assert fit_topics(docs, 2, top_n=5, seed=1) == fit_topics(docs, 2, top_n=5, seed=1)
    k1, s1 = choose_num_topics(docs, (2, 3), measure="u_mass", top_n=5, seed=1)
    k2, s2 = choose_num_topics(docs, (2, 3), measure="u_mass", top_n=5, seed=1)
    assert (k1, s1) == (k2, s2) and k1 in (2, 3) and s1[k1] == max(s1.values())
    with pytest.raises(ValueError, match="coherence measure"):
        choose_num_topics(docs, (2,), measure="npmi")
