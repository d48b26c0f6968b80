"""Recall-oriented operating point (notebook ``10_operating_point``).

A de-identifier is judged by the PHI it lets through. The taggers' own decision (Viterbi for
the CRF) is an F1-oriented point: on the PhysioNet nursing notes (document split, 486 test
notes) a trained GRU-CRF's own decision gives up recall for precision, while a rules-based
de-identifier (Philter, UCSF) buys recall with precision. This study trains one tagger, traces its
binary-token precision–recall curve over thresholds on the PHI marginal 1 − P(O)
(:mod:`deidlib.models.decoding`), chooses the threshold on the **dev** split for a target
recall (``deidlib train --target-recall``: the grid brackets it, the dev tokens' PHI
probabilities refine it, :func:`deidlib.training.choose_threshold`) and reports the **test** split at that threshold
and at the model's own decision. The target (:data:`TARGET`) is recall ≥ 0.92 at precision ≥ 0.85
on the nursing notes.

The package follows the study protocol (:mod:`deidlib.studies.protocol`): :func:`params_for`,
:func:`run_study` (:class:`OperatingPointResults`), :func:`summary_rows`, :func:`plot_curve` and
the claims of :func:`paper_vs_ours`. Choices: one tagger kind and one seed per run (the curve of
one released model is what a user gets); thresholds on a fixed log-like grid (:data:`THRESHOLDS`);
the model is the GRU-CRF of ``deidlib train`` (ahmed ch. 4 sizes) with the profile's epochs and
early stopping on dev F1.

On the nursing notes (``corpus="physionet"``) the figure also draws the package's **default
model** (:mod:`deidlib.pipeline.default_model`: trained on synthetic notes only, its threshold
fixed on synthetic dev), its test curve over the same thresholds and its own operating point,
and the **peers'** points (``run._peer_points``: Philter and Presidio, computed at run time on the
same test notes when ``deidlib[peers]`` is installed, :mod:`deidlib.evaluation.peers`; absent
otherwise). On synthetic notes neither is drawn.
"""

from .claims import paper_vs_ours
from .figures import plot_curve
from .params import params_for
from .run import OperatingPointResults, run_study
from .tables import summary_rows

__all__ = ["params_for", "run_study", "OperatingPointResults", "plot_curve", "summary_rows", "paper_vs_ours"]
