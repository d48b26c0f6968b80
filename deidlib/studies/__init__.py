"""One module or package per paper: the functions a notebook calls to run its experiments.

A study package (``audits``, ``ahmed_dp``, ...) has ``params`` (its parameter dataclass and
profiles), ``run`` (``run_study(params)`` and its results dataclass), ``tables``, ``figures``
and ``claims``; its ``__init__`` re-exports the names a notebook calls. Modules are imported on
demand (``from deidlib.studies import audits``); this package imports nothing heavy itself.
"""
