"""Alawad et al. 2020 (highlight "Adversarial Training for Privacy-Preserving Deep Learning Model
Distribution"): a multi-window CNN classifies pathology reports by subsite, trained per registry
(single-registry), on the pooled reports (centralized) and as a shared–private model whose shared
layers are trained adversarially against a registry discriminator and are the only parameters
that leave a registry.

Notebook ``07_alawad_registries`` resolves :func:`params_for`, calls :func:`run_study`, plots
:func:`figure_f1`, :func:`figure_per_class` and :func:`figure_attack`, writes the tables of
:mod:`.tables` and the claims of :func:`paper_vs_ours`. Models, training and evaluation live in
the library (:mod:`deidlib.models.cnn`, :mod:`deidlib.collaborative.registries`,
:mod:`deidlib.collaborative.shared_private`, :mod:`deidlib.collaborative.registry_eval`).

The package follows the study protocol (:mod:`deidlib.studies.protocol`). Choices, in short
(``docs/studies/alawad.md`` has each one in full):

* approaches ``single``, ``centralized`` (the non-private reference), ``shared_private`` and
  ``shared_private_no_adv`` (the control without the adversary), each with the same passes over
  its data;
* micro/macro F1 over all registries' test reports; paired bootstrap and McNemar per seed and
  pooled; equivalence with centralized as TOST within ``equivalence_margin``;
* per-class F1 of the most and least represented classes with ``>= min_support`` reports;
* privacy evidence: the trained discriminator and a fresh attacker on frozen shared features,
  next to chance, the majority rate and the class-label floor; every hand-off logged;
* corpora ``synthetic`` (one registry per generator site) and ``abstracts`` (real public text in
  label-skewed pseudo-registries).
"""

from .claims import paper_vs_ours
from .figures import figure_attack, figure_f1, figure_per_class
from .params import params_for
from .run import AlawadResults, run_study
from .tables import (
    attack_table,
    class_size_table,
    discriminator_check,
    equivalence_table,
    f1_table,
    per_class_table,
    registries_table,
    scale_note,
    significance_table,
    uploads_table,
)

__all__ = [
    "AlawadResults", "params_for", "run_study", "f1_table", "significance_table", "equivalence_table",
    "discriminator_check", "per_class_table", "attack_table", "class_size_table", "uploads_table",
    "registries_table", "figure_f1", "figure_per_class", "figure_attack", "scale_note", "paper_vs_ours",
]
