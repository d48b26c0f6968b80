"""Friedrich et al. (ACL 2019): automatic pseudonymization of the training data (section 4;
notebook 05) and adversarially learned representations (section 5; notebook 06).

One package in the study protocol (:mod:`deidlib.studies.protocol`) for both experiments: one
parameter set (``params``; the audits' representation rows use it too) and one
:func:`run_study`, whose ``experiment`` argument (``"pseudonymization"`` or ``"adversarial"``)
says which experiment runs; it returns that experiment's dataclass (``PseudoResults`` or
``AdvResults``), both a :class:`FriedrichResults`. ``tables``, ``figures`` and ``claims`` (the
paper's numbers and the "paper vs ours" tables) serve both. The study's own parts: ``common``
(HIPAA binary data, public embeddings, the shared BiLSTM-CRF trainer), ``pseudonymization``
(the Figure 4 sweep, section 8) and ``adversarial`` (one Figure 5 run and its controls).
Choices and measurements: ``docs/studies/friedrich.md``.
"""

from .adversarial import adversarial_run, control_runs
from .claims import adv_paper_vs_ours, adv_shape_checks, pseudo_paper_vs_ours, pseudo_shape_checks
from .common import load_embeddings, prepare_data
from .figures import adv_scale_note, attack_curve_figure, figure4, figure5, pseudo_scale_note
from .params import FriedrichParams, params_for
from .run import FriedrichResults, run_study

__all__ = [
    "FriedrichParams",
    "FriedrichResults",
    "params_for",
    "run_study",
    "prepare_data",
    "load_embeddings",
    "adversarial_run",
    "control_runs",
    "pseudo_shape_checks",
    "adv_shape_checks",
    "pseudo_paper_vs_ours",
    "adv_paper_vs_ours",
    "pseudo_scale_note",
    "adv_scale_note",
    "figure4",
    "figure5",
    "attack_curve_figure",
]
