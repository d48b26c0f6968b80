"""The synthetic corpus generator: longitudinal patients across sites with exact PHI spans.

``generate(patients=100, sites=5, seed=0)`` returns i2b2-2014-style documents
(:class:`deidlib.corpus.Document`) with ids ``PPP-RR`` (patient number, record number),
``patient_id = PPP`` and ``site = "site0" .. "site{K-1}"``.

Determinism: every random choice comes from ``random.Random`` instances seeded via
:func:`deidlib.rng.derive_seed` (per site for pools, per patient for content) and from
Faker instances seeded with ``seed_instance``; no global RNG is touched. A patient's
notes depend only on ``(seed, patient index, sites, locale, options)``, so
``generate(patients=200)`` starts with the documents of ``generate(patients=100)``.

Longitudinal records: each patient keeps name, MRN, contacts and doctors across
2-6 (default) records whose dates advance by weeks to months; ages follow the birth
date. Sites differ in writing style, PHI surface forms and mixes, as much as
``heterogeneity`` says (:mod:`deidlib.synthetic.styles`).
"""

from __future__ import annotations

import datetime as _dt
import random
from collections.abc import Iterator

from ..corpus.document import Document
from ..rng import derive_seed
from .identities import SitePools, build_site_pools, make_patient, styled_pools
from .notes.context import NoteContext
from .notes.icu import icu_casing
from .notes.note_types import render_note
from .styles import (
    DEFAULT_HETEROGENEITY,
    GUIDELINE_NOTE_TYPES,
    NOTE_TYPES,
    check_heterogeneity,
    site_names,
    site_style,
)
from .vocab import DIAGNOSIS_LABELS, PRIMARY_SITES

__all__ = ["generate", "generate_iter"]


def _check_extra(extra_note_types):
    if extra_note_types is not None and (set(extra_note_types) - set(GUIDELINE_NOTE_TYPES)
                                         or any(not w >= 0 for w in extra_note_types.values())):
        raise ValueError(f"extra_note_types must map some of {GUIDELINE_NOTE_TYPES} to weights >= 0, "
                         f"got {extra_note_types!r}")


def _check(patients, sites, notes_per_patient, note_mix, diagnosis_weights):
    if not isinstance(patients, int) or patients < 0:
        raise ValueError(f"patients must be a non-negative integer, got {patients!r}")
    if not isinstance(sites, int) or sites < 1:
        raise ValueError(f"sites must be a positive integer, got {sites!r}")
    try:
        lo, hi = notes_per_patient
    except (TypeError, ValueError):
        raise ValueError(f"notes_per_patient must be a (min, max) pair, got {notes_per_patient!r}") from None
    if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi <= 99):
        raise ValueError(f"notes_per_patient must satisfy 1 <= min <= max <= 99, got {notes_per_patient!r}")
    if note_mix is not None:
        bad = set(note_mix) - set(NOTE_TYPES)
        if bad or not any(v > 0 for v in note_mix.values()):
            raise ValueError(f"note_mix must weight some of {NOTE_TYPES}, got {note_mix!r}")
    if diagnosis_weights is not None:
        bad = set(diagnosis_weights) - set(DIAGNOSIS_LABELS)
        if bad or not any(v > 0 for v in diagnosis_weights.values()):
            raise ValueError(f"diagnosis_weights must weight some of {DIAGNOSIS_LABELS}, got {diagnosis_weights!r}")
    return lo, hi


def generate_iter(
    patients: int = 100,
    sites: int = 5,
    seed: int = 0,
    notes_per_patient: tuple[int, int] = (2, 6),
    locale: str = "en_US",
    *,
    note_mix: dict[str, float] | None = None,
    note_scale: dict[str, float] | None = None,
    extra_note_types: dict[str, float] | None = None,
    diagnosis_weights: dict[str, float] | None = None,
    site_weights: list[float] | None = None,
    start_year: int = 2004,
    end_year: int = 2019,
    pool_size: int = 160,
    heterogeneity: float = DEFAULT_HETEROGENEITY,
    progress: bool = False,
) -> Iterator[Document]:
    """Yield the documents of :func:`generate` one at a time (patient by patient).

    Args: see :func:`generate`.
    """
    lo, hi = _check(patients, sites, notes_per_patient, note_mix, diagnosis_weights)
    if note_scale is not None and (set(note_scale) - set(NOTE_TYPES) or any(f < 0 for f in note_scale.values())):
        raise ValueError(f"note_scale must map some of {NOTE_TYPES} to factors >= 0, got {note_scale!r}")
    _check_extra(extra_note_types)
    heterogeneity = check_heterogeneity(heterogeneity)
    names = site_names(sites)
    styles = [site_style(i, seed, heterogeneity) for i in range(sites)]
    pools: list[SitePools] = [styled_pools(build_site_pools(seed, i, names[i], locale, size=pool_size), styles[i], seed, i)
                              for i in range(sites)]
    if site_weights is None:
        wr = random.Random(derive_seed(seed, "site-sizes", sites))
        site_weights = [wr.uniform(0.6, 1.4) for _ in range(sites)]
    elif len(site_weights) != sites or min(site_weights) < 0 or sum(site_weights) <= 0:
        raise ValueError(f"site_weights must be {sites} non-negative weights, got {site_weights!r}")
    only_path = note_mix is not None and all(v <= 0 for k, v in note_mix.items() if k != "pathology_report")
    it = range(patients)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="synthesizing patients", unit="patient")
    site_idx = list(range(sites))
    for i in it:
        rng = random.Random(derive_seed(seed, "patient", i, sites, locale))
        s = rng.choices(site_idx, weights=site_weights, k=1)[0]
        style = styles[s]
        dxw = {"cancer": 1.0} if only_path else diagnosis_weights
        pt = make_patient(f"{i + 1:03d}", pools[s], style, rng, dxw, start_year, end_year)
        mix = dict(note_mix if note_mix is not None else style.note_mix)
        for k, f in (note_scale or {}).items():
            if k in mix:
                mix[k] *= f
        for k, w in (extra_note_types or {}).items():  # after the site's own: without them, no draw changes
            mix[k] = w
        if pt.diagnosis != "cancer":
            mix.pop("pathology_report", None)
        types = [k for k, v in mix.items() if v > 0]
        weights = [mix[k] for k in types]
        n = rng.randint(lo, hi)
        date = pt.first_visit
        casings = list(style.casing)
        cweights = [style.casing[k] for k in casings]
        icu_case = icu_casing(style.casing, style.heterogeneity)
        for r in range(n):
            if r == 0 and pt.diagnosis == "cancer" and "pathology_report" in types and rng.random() < 0.6:
                nt = "pathology_report"
            else:
                nt = rng.choices(types, weights=weights, k=1)[0]
            if nt == "icu_nursing_note":
                case = rng.choices(list(icu_case), weights=list(icu_case.values()), k=1)[0]
            else:
                case = rng.choices(casings, weights=cweights, k=1)[0]
            ctx = NoteContext(rng=rng, style=style, pools=pools[s], patient=pt, note_type=nt, note_date=date,
                              record=r + 1, case=case, abbr=rng.random() < style.abbrev_rate)
            text, spans = render_note(ctx)
            meta = {
                "note_type": nt,
                "note_date": date.isoformat(),
                "date": date.isoformat(),
                "diagnosis": pt.diagnosis,
                "site": names[s],
                "style": style.name,
                "casing": case,
                "record": r + 1,
                "age": ctx.age,
                "locale": locale,
            }
            if nt == "pathology_report":
                if pt.primary_site is None:
                    raise ValueError("the patient of a pathology report has no primary site")
                info = PRIMARY_SITES[pt.primary_site]
                meta["primary_site"] = pt.primary_site
                meta["subsite"] = pt.subsite
                meta["subsite_name"] = info["subsites"][pt.subsite][0]
                meta["topography_code"] = info["code"]
            yield Document(id=f"{pt.pid}-{r + 1:02d}", text=text, spans=spans, patient_id=pt.pid,
                           site=names[s], metadata=meta)
            date = date + _dt.timedelta(days=rng.randint(3, 420))


def generate(
    patients: int = 100,
    sites: int = 5,
    seed: int = 0,
    notes_per_patient: tuple[int, int] = (2, 6),
    locale: str = "en_US",
    **kwargs,
) -> list[Document]:
    """Generate a synthetic i2b2-2014-style corpus.

    Args:
        patients: number of patients (each has ``notes_per_patient`` records over the years).
        sites: number of sites (hospitals / registries) with distinct styles; patients are
            assigned to sites with seeded unequal weights (``site_weights`` to override).
        seed: the seed; same seed, same corpus.
        notes_per_patient: (min, max) records per patient, inclusive.
        locale: Faker locale of identities and places (``en_US``; ``fr_FR`` gives French
            names, places, phone formats, day-first dates and French month names; the
            medical text stays English).
        note_mix: override every site's note-type weights, e.g. ``{"pathology_report": 1}``
            for a registry corpus (then every patient is a cancer patient).
        note_scale: multiply every site's weight of these note types, keeping the sites'
            differences, e.g. ``{"icu_nursing_note": 3}`` (the transfer study's training notes).
        extra_note_types: add note types that no site writes by default, with these weights
            (keys: ``GUIDELINE_NOTE_TYPES``, :mod:`.notes.guideline`: dictated discharge summaries
            and emergency visits with PHI in the i2b2 guideline's forms), e.g.
            ``{"dictated_discharge": 0.3, "emergency_visit": 0.3}`` (the default model's training
            notes). ``None`` (the default) leaves every draw, and so the corpus, as it was.
        diagnosis_weights: override every site's diagnosis weights (keys: ``DIAGNOSIS_LABELS``).
        site_weights: relative number of patients per site.
        start_year, end_year: range of first-visit years.
        pool_size: names per sex per site sampled from Faker (more = fewer repeated names).
        heterogeneity: how different the sites are, in [0, 1] (default
            :data:`~deidlib.synthetic.styles.DEFAULT_HETEROGENEITY`). Each site's weight tables
            and rates are ``(1 - h) * common + h * own`` (:mod:`deidlib.synthetic.styles`). 0: every
            site draws from one shared style (same note-type, diagnosis, date-format, name-form,
            phone, MRN and hospital-naming distributions, headers at random, every template
            phrasing); 1: each site writes dates, phones, MRN / account / order numbers and
            hospital names in site-exclusive forms, with its own headers, wording ("pt", "hx",
            "w/"), mixes and half of the template phrasings. The cross-site F1 this buys is
            measured by :mod:`deidlib.studies.corpus_overview.sites` (notebook 00).
        progress: show a tqdm bar.

    Returns:
        Documents sorted by patient and record, each with ``metadata`` keys ``note_type``,
        ``note_date`` (ISO; also under ``date``), ``diagnosis`` (one of 7 classes), ``site``, ``style``,
        ``casing``, ``record``, ``age``, ``locale`` and, for pathology reports,
        ``primary_site``, ``subsite`` (ICD-O-3 topography code such as ``C50.4``),
        ``subsite_name`` and ``topography_code``.
    """
    return list(generate_iter(patients, sites, seed, notes_per_patient, locale, **kwargs))
