"""The study's sites (one synthetic hospital each, split by patient) and its training sentences
(PHI-free ones thinned, then subsampled, both by per-sentence keyed coins so that one sentence more
or less changes no other decision: the add/remove DP guarantee holds for the full set)."""

from __future__ import annotations

from dataclasses import dataclass

from ...corpus.labels import keyed_subsample, tagged_sentences, thin_negatives
from ...corpus.splits import split_by_patient, subsample
from ...profiles import get_profile
from ...rng import derive_seed
from ...synthetic import generate
from .params import ENCODING, SCHEME, DPParams, params_for

__all__ = []


@dataclass
class SiteData:
    name: str
    train: list  # Documents
    dev: list
    test: list


def prepare_sites(profile: str = "cpu", seed: int = 0, params: DPParams | None = None) -> list[SiteData]:
    """Three (``n_sites``) synthetic hospitals, each split by patient into train/dev/test."""
    params = params or params_for(profile)
    n = params.patients or get_profile(profile).patients
    docs = generate(patients=n, sites=params.n_sites, seed=seed)
    sites = []
    for name in sorted({d.site for d in docs}):
        part = [d for d in docs if d.site == name]
        sp = split_by_patient(part, (0.6, 0.1, 0.3), seed=derive_seed(seed, "site-split", name))
        if not (sp.train and sp.test):
            raise ValueError(f"site {name} has too few patients to split ({len(part)} documents)")
        sites.append(
            SiteData(
                name,
                list(sp.train),
                list(sp.dev),
                subsample(list(sp.test), params.max_eval_documents, derive_seed(seed, "eval", name)),
            )
        )
    return sites



def _sentences(docs, rate: float | None, seed: int, keep_rate: float | None = None):
    return _thin_and_subsample(tagged_sentences(docs, SCHEME, ENCODING, "default"), rate, seed, keep_rate)


def _thin_and_subsample(sents, rate: float | None, seed: int, keep_rate: float | None):
    """Non-empty sentences, PHI-free ones thinned (``keep_rate``), then each kept with
    probability ``rate``; both by per-sentence coins keyed by the sentence (seeded keys), so
    one sentence more or less changes no other decision."""
    sents = [s for s in sents if s.tokens]
    if keep_rate is not None:
        sents = thin_negatives(sents, keep_rate, derive_seed(seed, "dp-thin"))
    if rate is not None:
        sents = keyed_subsample(sents, rate, derive_seed(seed, "train-subsample"))
    return sents
