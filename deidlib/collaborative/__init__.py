"""Collaborative training across sites: centralized (A), round robin (B), DSSGD (C),
local only (D) — Festag & Spreckelsen, JMIR Form Res 2020; Shokri & Shmatikov, CCS 2015.

``dssgd`` holds the selection math as pure tensor functions, ``server`` the parameter
server, ``sites`` the data-holding workers, ``strategies`` the four experiments behind one
interface, ``simulator`` the glue, ``dp_upload`` Shokri & Shmatikov's DP upload.

Alawad et al. 2020 (registry classifiers): ``registries`` builds registries of pathology
reports or medical abstracts, ``shared_private`` trains single-registry, centralized and
shared–private CNNs, ``registry_eval`` scores them and attacks the shared representation.
"""

from .dp_upload import DPUpload, UploadLedger, dp_select_upload
from .dssgd import (
    apply_download,
    apply_upload,
    flatten_parameters,
    fraction_count,
    load_parameters,
    make_generator,
    select_download,
    select_upload,
    threshold_and_clip,
)
from .local import TAGGER_LOSSES, SGDTrainer, tagger_trainer
from .registries import Registry, abstract_registries, synthetic_registries
from .registry_eval import AttackResult, registry_attack
from .server import ParameterServer, ServerCall
from .shared_private import (
    CNNConfig,
    RegistryTraining,
    SharedPrivateCNN,
    SharedPrivateRun,
    UploadRecord,
    train_centralized,
    train_shared_private,
    train_single_registry,
)
from .simulator import make_sites, simulate
from .sites import Site
from .strategies import (
    DSSGD,
    STRATEGIES,
    Centralized,
    CollaborativeHistory,
    DSSGDConfig,
    LocalOnly,
    RoundRobin,
    Strategy,
)

__all__ = [
    "apply_download",
    "apply_upload",
    "flatten_parameters",
    "fraction_count",
    "load_parameters",
    "make_generator",
    "select_download",
    "select_upload",
    "threshold_and_clip",
    "DPUpload",
    "UploadLedger",
    "dp_select_upload",
    "SGDTrainer",
    "tagger_trainer",
    "TAGGER_LOSSES",
    "ParameterServer",
    "ServerCall",
    "Site",
    "make_sites",
    "simulate",
    "Strategy",
    "Centralized",
    "RoundRobin",
    "DSSGD",
    "DSSGDConfig",
    "LocalOnly",
    "CollaborativeHistory",
    "STRATEGIES",
    "Registry",
    "synthetic_registries",
    "abstract_registries",
    "CNNConfig",
    "RegistryTraining",
    "SharedPrivateCNN",
    "SharedPrivateRun",
    "UploadRecord",
    "train_single_registry",
    "train_centralized",
    "train_shared_private",
    "AttackResult",
    "registry_attack",
]
