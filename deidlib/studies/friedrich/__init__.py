"""Friedrich et al. (ACL 2019): automatic pseudonymization (notebook 05,
:mod:`.pseudonymization`) and adversarially learned representations (notebook 06,
:mod:`.adversarial`); shared data, embeddings and model in :mod:`.common`; parameters and
the paper's reference shapes in :mod:`.params`."""

from .params import EMBEDDINGS, PAPER_SHAPES, PROCEDURES, PROFILE_PARAMS, FriedrichParams, params_for

__all__ = ["EMBEDDINGS", "PAPER_SHAPES", "PROCEDURES", "PROFILE_PARAMS", "FriedrichParams", "params_for"]
