"""Privacy audits: every privacy method of the package attacked the same way.

* :mod:`.canary` — canary exposure (Carlini et al. 2019, "The Secret Sharer");
* :mod:`.membership` — membership inference per sentence and per patient: loss threshold
  (Yeom et al. 2018) and offline LiRA (Carlini et al. 2022), scored by :mod:`.metrics`
  (AUC and TPR at low FPR);
* :mod:`.epsilon` — empirical ε lower bounds (Jagielski et al. 2020, Clopper–Pearson) and the
  white-box audit of one DP-SGD step against the accountant;
* :mod:`.one_run` — the one-run audit of ``train_dp`` (Steinke, Nasr & Jagielski 2023): many
  gradient canaries in one training, an ε lower bound from the number of correct guesses;
* :mod:`.reconstruction` — the words of a DSSGD site's batch from its uploaded update;
* :mod:`.linkage` — note linkage and equal-value disclosure on surrogate text.

Layer: above :mod:`deidlib.privacy` and :mod:`deidlib.collaborative` (it attacks their
outputs), below :mod:`deidlib.studies`.
"""

from .canary import canary_exposure, canary_words, insert_canaries, make_canaries
from .epsilon import audit_dp_step, raise_if_violated
from .linkage import equal_value_disclosure, note_linkage
from .membership import group_scores, lira_offline_scores, loss_scores
from .metrics import attack_scores
from .one_run import audit_train_dp_one_run
from .reconstruction import batch_rows, embedding_slice, reconstruction_prf, recovered_rows
from .recovery import neighbour_recovery
from .scoring import sentence_losses

__all__ = [
    "neighbour_recovery", "canary_exposure", "canary_words", "insert_canaries", "make_canaries",
    "audit_dp_step", "raise_if_violated", "audit_train_dp_one_run", "equal_value_disclosure", "note_linkage",
    "group_scores", "lira_offline_scores", "loss_scores", "attack_scores", "batch_rows", "embedding_slice",
    "reconstruction_prf", "recovered_rows", "sentence_losses",
]
