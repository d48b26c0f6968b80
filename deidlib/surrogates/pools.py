"""Locale-aware replacement pools drawn once from Faker (en_US, fr_FR, any Faker locale).

Names come straight from Faker's person provider lists (first names by sex, last names),
so a surrogate first name keeps the sex of the original when Faker knows the original;
streets, companies, jobs, countries, states/regions and e-mail/web domains are drawn from
a Faker instance seeded with ``seed`` (:func:`get_pools` caches per ``(locale, seed)``).
Pools never depend on the document being replaced, so sampling from them with the
surrogate RNG costs no privacy budget.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

__all__ = ["Pools"]

_DEPARTMENTS = {
    "en": ["Cardiology", "Radiology", "Oncology", "Neurology", "Nephrology", "Endocrinology", "Pulmonology",
           "Gastroenterology", "Orthopedics", "Emergency Department", "Internal Medicine", "Surgery", "ICU",
           "Pediatrics", "Dermatology", "Rheumatology", "Urology", "Geriatrics"],
    "fr": ["Cardiologie", "Radiologie", "Oncologie", "Neurologie", "Néphrologie", "Endocrinologie", "Pneumologie",
           "Gastro-entérologie", "Orthopédie", "Urgences", "Médecine interne", "Chirurgie", "Réanimation",
           "Pédiatrie", "Dermatologie", "Rhumatologie", "Urologie", "Gériatrie"],
}
_OTHER = {
    "en": ["former school teacher", "retired postal worker", "amateur marathon runner", "local choir member",
           "volunteer firefighter", "former bus driver", "community garden volunteer"],
    "fr": ["ancien instituteur", "postier retraité", "coureur amateur", "membre d'une chorale",
           "pompier volontaire", "ancien chauffeur de bus", "bénévole associatif"],
}
_LANDMARKS = {
    "en": ["the lake", "the state park", "the beach", "the mountains", "the county fair", "the stadium",
           "the national park", "the river"],
    "fr": ["le lac", "le parc régional", "la plage", "la montagne", "la foire", "le stade", "le parc national",
           "la rivière"],
}


def lang_of(locale: str) -> str:
    """"fr" for French locales, else "en" (date/number words)."""
    return "fr" if locale.lower().startswith("fr") else "en"


@functools.lru_cache(maxsize=1 << 16)
def _fold(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).lower()


def _names(x) -> list[str]:
    return list(x.keys()) if isinstance(x, dict) else list(x)


@dataclass(frozen=True)
class Pools:
    locale: str
    first_female: tuple[str, ...]
    first_male: tuple[str, ...]
    last: tuple[str, ...]
    female_keys: frozenset
    male_keys: frozenset
    first_keys: frozenset
    last_keys: frozenset
    titles: tuple[str, ...]
    streets: tuple[str, ...]
    companies: tuple[str, ...]
    jobs: tuple[str, ...]
    countries: tuple[str, ...]
    states: tuple[str, ...]
    state_abbrs: tuple[str, ...]
    domains: tuple[str, ...]
    free_domains: frozenset
    departments: tuple[str, ...]
    others: tuple[str, ...]
    landmarks: tuple[str, ...]
    cities: tuple[str, ...]


@functools.lru_cache(maxsize=16)
def get_pools(locale: str = "en_US", seed: int = 0, size: int = 300) -> Pools:
    """Replacement pools for ``locale`` (Faker locale name, e.g. ``en_US`` or ``fr_FR``)."""
    from faker import Faker

    try:
        fake = Faker(locale)
    except AttributeError as e:
        raise ValueError(f"unknown Faker locale {locale!r}: {e}") from None
    fake.seed_instance(seed)
    person = fake.provider("faker.providers.person")
    ff = _names(getattr(person, "first_names_female", None) or person.first_names)
    fm = _names(getattr(person, "first_names_male", None) or person.first_names)
    last = _names(person.last_names)
    ff = [n for n in ff if n.isalpha() or "-" in n]
    fm = [n for n in fm if n.isalpha() or "-" in n]
    last = [n for n in last if n.replace("-", "").replace("'", "").replace(" ", "").isalpha()]
    lang = lang_of(locale)
    titles = ("Mr.", "Mrs.", "Ms.", "Dr.") if lang == "en" else ("M.", "Mme", "Dr")

    def draw(fn, n=size):
        out = []
        for _ in range(n):
            try:
                out.append(fn())
            except (AttributeError, ValueError):
                break
        return tuple(dict.fromkeys(out))

    streets = draw(fake.street_address)
    companies = draw(fake.company)
    try:
        jobs = tuple(fake.provider("faker.providers.job").jobs)
    except (AttributeError, TypeError):
        jobs = draw(fake.job)
    countries = draw(fake.country)
    if hasattr(fake, "state"):
        states = draw(fake.state, 200)
        abbrs = draw(fake.state_abbr, 200) if hasattr(fake, "state_abbr") else ()
    elif hasattr(fake, "region"):
        states, abbrs = draw(fake.region, 200), ()
    else:
        states, abbrs = (), ()
    domains = draw(fake.domain_name, 100)
    try:
        free = frozenset(fake.provider("faker.providers.internet").free_email_domains)
    except (AttributeError, TypeError):
        free = frozenset()
    free = free | {"gmail.com", "yahoo.com", "hotmail.com", "outlook.com", "comcast.net", "aol.com", "icloud.com",
                   "orange.fr", "free.fr", "laposte.net", "yahoo.fr", "hotmail.fr", "sfr.fr", "wanadoo.fr"}
    cities = draw(fake.city, 200)
    return Pools(
        locale=locale,
        first_female=tuple(ff), first_male=tuple(fm), last=tuple(last),
        female_keys=frozenset(_fold(n) for n in ff), male_keys=frozenset(_fold(n) for n in fm),
        first_keys=frozenset(_fold(n) for n in ff + fm), last_keys=frozenset(_fold(n) for n in last),
        titles=titles, streets=streets, companies=companies, jobs=jobs, countries=countries,
        states=states, state_abbrs=abbrs, domains=domains, free_domains=free,
        departments=tuple(_DEPARTMENTS[lang]), others=tuple(_OTHER[lang]), landmarks=tuple(_LANDMARKS[lang]),
        cities=cities,
    )
