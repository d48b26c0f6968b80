"""Every privacy method of the frontier (notebook ``09_privacy_frontier``): its attack family
(one frontier panel each), the non-private reference its F1 cost is measured against, and what it
protects (unit and threat), as stated in the notebook's per-method statements."""

from __future__ import annotations

__all__ = ["METHODS"]

#: attack families, one frontier panel each (a family's success metric is one metric: no panel mixes two)
FAMILIES = ("membership", "canary exposure", "reconstruction", "word recovery", "linkage",
            "representation (real/fake pairs)", "representation (registry)")

#: every privacy method of the package (with its non-private references and controls) and the
#: family it is attacked in: the frontier must hold each on every seed (:func:`missing_methods`)
METHODS: tuple[tuple[str, str], ...] = (
    ("non-private (festag)", "membership"),
    ("DP-SGD from scratch (festag)", "membership"),
    ("non-private ({recipe} recipe)", "membership"),
    ("DP-SGD ({recipe} recipe)", "membership"),
    ("DSSGD", "reconstruction"),
    ("DSSGD + DP upload", "reconstruction"),
    ("pseudonymization", "word recovery"),
    ("surrogates", "linkage"),
    ("adversarial representation (friedrich §5)", "representation (real/fake pairs)"),
    ("non-private (friedrich §5)", "representation (real/fake pairs)"),
    ("raw public vectors (friedrich §5 control)", "representation (real/fake pairs)"),
    ("shared layers (alawad)", "representation (registry)"),
    ("shared layers, no adversary (alawad)", "representation (registry)"),
    ("non-private (alawad)", "representation (registry)"),
)

#: the non-private row each method's F1 cost is measured against, where the name does not say it
REFERENCES = {"raw public vectors (friedrich §5 control)": "non-private (friedrich §5)"}

#: what each method protects: (unit, threat); keyed by the method's name in the frontier
PROTECTS: dict[str, tuple[str, str]] = {
    "non-private (festag)": ("nothing", "—"),
    "DP-SGD from scratch (festag)": (
        "one training sentence ((ε, δ)-DP of the weights; a k-copy canary only k·ε; the tagger's word list is "
        "built from training words and not protected)",
        "anyone holding the released weights (white box)"),
    "non-private ({recipe} recipe)": ("nothing (the same lots and optimiser, no noise, no clipping)", "—"),
    "DP-SGD ({recipe} recipe)": (
        "one training sentence of the head's DP training ((ε, δ)-DP; a k-copy canary only k·ε); the frozen encoder "
        "and its WordPiece vocabulary are public and saw no private text",
        "anyone holding the released weights (white box)"),
    "DSSGD": ("nothing formal: θ_u is the share of the update uploaded", "the server reading a site's uploads"),
    "DSSGD + DP upload": ("each uploaded entry (ε per upload, Shokri & Shmatikov's per-entry noise)",
                          "the server reading a site's uploads"),
    "pseudonymization": ("a PHI word of the released training text: moved to one of its N nearest GloVe neighbours "
                         "(itself included), no formal guarantee", "a reader of the released sentences"),
    "surrogates": ("the original value behind one surrogate (ε·d: metric DP of the value)",
                   "a reader of the released notes"),
    "adversarial representation (friedrich §5)": (
        "nothing formal: the representation of a sentence is trained so that an adversary cannot tell it from the "
        "same sentence with one PHI word replaced by one of its N − 1 nearest GloVe neighbours",
        "anyone holding sentences' representations (the frozen-representation adversary)"),
    "non-private (friedrich §5)": ("nothing (control P1: a noise-free BiLSTM trained on de-identification only)",
                                   "—"),
    "raw public vectors (friedrich §5 control)": ("nothing (control raw: R = the public GloVe vectors)", "—"),
    "shared layers (alawad)": (
        "nothing formal: the shared layers (the only parameters that leave a registry) are trained against a "
        "registry discriminator so that their features should not name a report's registry",
        "anyone holding the shared layers (every other registry)"),
    "shared layers, no adversary (alawad)": ("nothing (the same shared layers trained with λ = 0: the control)",
                                             "anyone holding the shared layers (every other registry)"),
    "non-private (alawad)": ("nothing (one CNN on the pooled reports; its whole encoder is attacked)", "—"),
}
