"""The ``deidlib`` command (also ``python -m deidlib``).

Each subcommand lives in ``deidlib/commands/<name>.py`` and defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``. Command modules keep their heavy
imports (torch, gensim, ...) inside ``run`` so that ``deidlib --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

__all__ = ["main"]

#: subcommand -> module implementing it, in the order ``--help`` lists them.
_COMMANDS: dict[str, str] = {
    "reproduce": "deidlib.commands.reproduce",
    "synth": "deidlib.commands.synth",
    "evaluate": "deidlib.commands.evaluate",
    "train": "deidlib.commands.train",
    "predict": "deidlib.commands.predict",
    "ensemble": "deidlib.commands.ensemble",
    "surrogate": "deidlib.commands.surrogate",
    "deidentify": "deidlib.commands.deidentify",
}


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deidlib",
        description="Privacy-preserving de-identification of clinical text: reproduce five papers.",
    )
    parser.add_argument("--version", action="version", version=f"deidlib {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, modname in _COMMANDS.items():
        mod = importlib.import_module(modname)
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, or a usage error argparse already printed
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    from .commands._safety import UsageError

    try:
        return int(args._run(args) or 0)
    except UsageError as e:
        print(f"deidlib {args.command}: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
