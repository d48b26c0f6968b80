"""Differential privacy for the de-identification taggers (ahmed thesis, chapter 5).

- :mod:`.accounting`: ε from (σ, q, steps, δ) with Opacus' accountants (prv/rdp/gdp),
  σ for a target ε (the thesis' Table 5.3 replication lives in ``deidlib.studies.ahmed_dp``).
- :mod:`.ensemble`: minimality / majority / k-of-n aggregation of binary PHI predictions
  (Definition 5.1.1) and the ensemble's privacy guarantee.
- :mod:`.dpsgd`: DP-SGD (Algorithm 1) for every tagger with exact per-sentence (or
  per-patient) gradients, Poisson sampling and a privacy ledger.
- :mod:`.pseudonymize`: friedrich et al. 2019 section 4 automatic pseudonymization (PHI
  tokens moved to one of their N embedding neighbours) and the section 8 subword statistic.
- :mod:`.adversarial`: friedrich et al. 2019 section 5 adversarially learned representations
  (DANN and Feutry et al.'s three-phase training, frozen-representation adversary accuracy).

Submodules are imported on use (``from deidlib.privacy import accounting``) so that
importing the package stays cheap.
"""
