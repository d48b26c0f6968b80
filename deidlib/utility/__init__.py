"""Utility of de-identified text (Ahmed thesis §4.3.2, Tables 4.5, 4.6, 4.9).

``transforms`` (removal, type masks, any replacement function), ``bleu`` (BLEU-1/2/3 against
the original, Table 4.5), ``topics`` (LDA topic-word overlap, Table 4.6), ``classify``
(downstream document classification, Table 4.9) and ``abstracts`` (loader for the labelled
medical abstracts). Pure functions; the study module and notebook 03 build on them.
"""
