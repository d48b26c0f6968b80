"""Collaborative training across sites: centralized (A), round robin (B), DSSGD (C),
local only (D) — Festag & Spreckelsen, JMIR Form Res 2020; Shokri & Shmatikov, CCS 2015.

``dssgd`` holds the selection math as pure tensor functions, ``server`` the parameter
server, ``sites`` the data-holding workers, ``strategies`` the four experiments behind one
interface, ``simulator`` the glue, ``dp_upload`` Shokri & Shmatikov's DP upload.

Alawad et al. 2020 (registry classifiers): ``registries`` builds registries of pathology
reports or medical abstracts, ``shared_private`` trains single-registry, centralized and
shared–private CNNs, ``registry_eval`` scores them and attacks the shared representation.
"""

from .dp_upload import UploadLedger
from .dssgd import flatten_parameters, make_generator
from .local import TAGGER_LOSSES, SGDTrainer, tagger_trainer
from .registries import Registry, abstract_registries, synthetic_registries
from .registry_eval import registry_attack
from .server import ParameterServer
from .shared_private import (
    CNNConfig,
    RegistryTraining,
    train_centralized,
    train_shared_private,
    train_single_registry,
)
from .simulator import make_sites, simulate
from .strategies import DSSGD, Centralized, DSSGDConfig, LocalOnly, RoundRobin

__all__ = [
    "flatten_parameters", "make_generator", "UploadLedger", "SGDTrainer", "tagger_trainer", "TAGGER_LOSSES",
    "ParameterServer", "make_sites", "simulate", "Centralized", "RoundRobin", "DSSGD", "DSSGDConfig",
    "LocalOnly", "Registry", "synthetic_registries", "abstract_registries", "CNNConfig", "RegistryTraining",
    "train_single_registry", "train_centralized", "train_shared_private", "registry_attack",
]
