"""A tiny tagger trained on synthetic notes, shared by the de-identification tests."""

from __future__ import annotations

import pytest

#: small and fast: category labels, 16-dimensional everything (without the CRF it stays all-O
#: on this little data; with it, 2 epochs of batch 4 reach binary-token recall ~0.3)
TINY_HPARAMS = dict(word_dim=16, hidden=16, char_hidden=8, char_emb_dim=8, ff_dim=16)


def train_tiny(out, docs, epochs: int = 2):
    from deidlib.corpus.splits import CorpusSplits
    from deidlib.training import fit_tagger, save_tagger

    tagger, _ = fit_tagger("gru", CorpusSplits(docs, [], [], "tiny"), scheme="category", encoding="BIO",
                           embeddings=None, hparams=dict(TINY_HPARAMS), epochs=epochs, lr=0.02, batch_size=4,
                           evaluate_test=False, progress=False)
    save_tagger(tagger, out)
    return out


@pytest.fixture(scope="session")
def synth_docs():
    from deidlib.datasets import synthetic_documents

    return synthetic_documents("smoke", seed=0)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory, synth_docs):
    """A saved tagger (the format 'deidlib train' writes) trained 4 epochs on the PHI-dense notes among
    the first 24 synthetic notes (the PHI-sparse ICU nursing notes would keep so small a model all-O).
    After 2 epochs whether it has left the all-O start depends on the corpus draw (it tags nothing on
    some seeds' notes); after 4 it tags some of notes 24-30 on each corpus tried."""
    dense = [d for d in synth_docs[:24] if d.metadata["note_type"] != "icu_nursing_note"]
    return train_tiny(tmp_path_factory.mktemp("tiny") / "model", dense, epochs=4)


@pytest.fixture(scope="session")
def blind_model(tmp_path_factory, tiny_model):
    """The tiny tagger with its output layer forced to 'O': it tags nothing (every PHI is missed)."""
    import torch

    from deidlib.training import load_tagger, save_tagger

    t = load_tagger(tiny_model)
    with torch.no_grad():
        t.out.weight.zero_()
        t.out.bias.fill_(-10.0)
        t.out.bias[t.featurizer.labels.index("O")] = 10.0
    return save_tagger(t, tmp_path_factory.mktemp("blind") / "model")


#: a pseudonym key that passes the key checks (printable, ~200 bits by deidlib.pipeline.pseudonyms._key_bits)
STRONG_KEY = "side-channel test key, 32 bytes"


def write_key(path, text: str = STRONG_KEY):
    """A key file as a user should keep one: readable by its owner only (mode 600)."""
    path.write_text(text)
    path.chmod(0o600)
    return path
