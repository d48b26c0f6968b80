"""Friedrich et al. (ACL 2019): automatic pseudonymization (notebook 05,
:mod:`.pseudonymization`) and adversarially learned representations (notebook 06,
:mod:`.adversarial`); shared data, embeddings and model in :mod:`.common`; parameters in
:mod:`.params`; the paper's numbers and the "paper vs ours" tables in :mod:`.claims`."""

from .claims import PAPER_SHAPES, adv_paper_vs_ours, pseudo_paper_vs_ours
from .params import CONTROLS, EMBEDDINGS, PROCEDURES, PROFILE_PARAMS, FriedrichParams, params_for

__all__ = ["EMBEDDINGS", "PAPER_SHAPES", "PROCEDURES", "CONTROLS", "PROFILE_PARAMS", "FriedrichParams", "params_for",
           "pseudo_paper_vs_ours", "adv_paper_vs_ours"]
