"""The layer order of deidlib (DESIGN.md, "Layers"): a package never imports one above it.

Every module under ``deidlib/`` is parsed with :mod:`ast`; every ``import``/``from ...
import`` (at module top, inside functions, under ``TYPE_CHECKING``: all of them) gives an
edge *unit -> unit*, where a unit is a sub-package (``corpus``) or a top-level module
(``rng``). Imports done by name at run time (``importlib.import_module`` in ``cli`` and in
lazy ``__init__`` exports) are not seen, so they must stay inside their own package or go
downwards by design.

Run ``python tests/test_layers.py [ROOT]`` to print the "which package imports which"
picture of a checkout (ROOT defaults to this repository).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

#: bottom to top. A unit may import units of strictly lower layers (and itself); units in
#: the same layer are independent of each other.
LAYERS: list[tuple[str, ...]] = [
    ("__init__",),  # the package root: __version__ only
    ("rng", "numwords", "profiles", "results", "plotting"),  # foundations: seeds, number words, sizes, Result files
    ("corpus", "reporting"),  # data model, readers, tokenization, labels, splits; what notebooks write
    ("synthetic", "evaluation", "embeddings", "utility"),  # generator; i2b2 scorer; word vectors; utility of de-identified text
    ("datasets", "models", "surrogates"),  # load_corpus; taggers; surrogate generation
    ("training",),  # trainer, fit_tagger, predict
    ("privacy", "collaborative", "pipeline"),  # DP-SGD, PATE ensembles, accounting; DSSGD/FedAvg simulation; deidentify
    ("audits",),  # attacks on the privacy methods: canaries, membership, ε audits, DSSGD reconstruction, linkage
    ("studies",),  # one module per paper
    ("notebooks",),  # papermill runner
    ("commands",),  # one module per CLI sub-command
    ("cli",),
    ("__main__",),
]

ROOT = Path(__file__).resolve().parents[1]


def layer_of() -> dict[str, int]:
    return {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join(parts), is_pkg


def module_imports(root: Path = ROOT) -> dict[str, set[str]]:
    """Module name -> the ``deidlib`` modules (or packages) it imports, resolved to the most
    precise module that exists (``from deidlib.corpus import labels`` -> ``deidlib.corpus.labels``)."""
    files = sorted((root / "deidlib").rglob("*.py"))
    names = {_module_name(f, root)[0] for f in files}
    out: dict[str, set[str]] = {}
    for f in files:
        mod, is_pkg = _module_name(f, root)
        package = mod if is_pkg else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"), str(f))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base_name = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                for a in node.names:
                    sub = f"{base_name}.{a.name}"
                    targets.add(sub if sub in names else base_name)
        out[mod] = {t for t in targets if t == "deidlib" or t.startswith("deidlib.")}
    return out


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def unit_imports(root: Path = ROOT) -> dict[str, dict[str, set[str]]]:
    """Unit -> unit it imports -> the modules of the first unit that do it."""
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for mod, targets in module_imports(root).items():
        for t in targets:
            if unit_of(t) != unit_of(mod):
                out[unit_of(mod)][unit_of(t)].add(mod)
    return out


def upward_imports(root: Path = ROOT) -> list[str]:
    """Every import of a unit from a unit of the same or a higher layer, as readable lines."""
    rank = layer_of()
    bad = []
    for unit, deps in sorted(unit_imports(root).items()):
        for dep, mods in sorted(deps.items()):
            if unit not in rank or dep not in rank:
                bad.append(f"{unit} -> {dep}: unit not placed in LAYERS ({', '.join(sorted(mods))})")
            elif rank[dep] >= rank[unit]:
                bad.append(f"{unit} (layer {rank[unit]}) -> {dep} (layer {rank[dep]}): {', '.join(sorted(mods))}")
    return bad


def import_cycles(root: Path = ROOT) -> list[list[str]]:
    """Strongly connected components (size > 1) of the module import graph (Tarjan)."""
    graph = module_imports(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def _is_package_init_edge(cycle: list[str]) -> bool:
    """A package's ``__init__`` re-exporting a submodule that imports a sibling through the
    package (``from . import x``) is a cycle Python resolves; we only allow it for the pair."""
    return len(cycle) == 2 and any(m.startswith(o + ".") for m in cycle for o in cycle)


def picture(root: Path = ROOT) -> str:
    """``unit -> units it imports``, one line per unit, bottom layer first."""
    rank = layer_of()
    units = unit_imports(root)
    order = sorted(set(units) | {d for deps in units.values() for d in deps}, key=lambda u: (rank.get(u, 99), u))
    return "\n".join(f"{u:14s} -> {', '.join(sorted(units[u], key=lambda d: (rank.get(d, 99), d))) or '-'}"
                     for u in order)


def test_every_unit_is_placed_in_a_layer():
    units = {unit_of(m) for m in module_imports()}
    assert units <= set(layer_of()), f"place these in LAYERS: {sorted(units - set(layer_of()))}"


def test_no_package_imports_a_package_of_its_own_or_a_higher_layer():
    assert upward_imports() == []


def test_no_import_cycles_between_modules():
    assert [c for c in import_cycles() if not _is_package_init_edge(c)] == []


def test_the_check_sees_an_upward_import(tmp_path):
    """The checker itself: a corpus module importing the generator and a features <-> taggers
    cycle are both reported."""
    pkg = tmp_path / "deidlib"
    for sub in ("corpus", "synthetic", "models"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "synthetic" / "generator.py").write_text("from ..corpus import document\n")
    (pkg / "corpus" / "document.py").write_text("")
    (pkg / "corpus" / "datasets.py").write_text("def f():\n    from ..synthetic import generate\n")
    (pkg / "models" / "features.py").write_text("def g():\n    from .taggers import PRESETS\n")
    (pkg / "models" / "taggers.py").write_text("from .features import Featurizer\n")
    assert upward_imports(tmp_path) == ["corpus (layer 2) -> synthetic (layer 3): deidlib.corpus.datasets"]
    assert import_cycles(tmp_path) == [["deidlib.models.features", "deidlib.models.taggers"]]


if __name__ == "__main__":
    where = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT
    print(picture(where))
    for line in upward_imports(where):
        print("UPWARD:", line)
    for cycle in import_cycles(where):
        print("CYCLE:", " <-> ".join(cycle))
