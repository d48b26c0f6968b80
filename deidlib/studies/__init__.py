"""One module per paper: the functions a notebook calls to run its experiments.

Modules are imported on demand (``from deidlib.studies import festag``); this package
imports nothing heavy itself.
"""
