"""Lower layers never import higher ones, and no module reaches into another package's private modules.

The layers, lowest first (a module may import its own layer and any layer below it):

0. the package's shared internals and errors: ``exceptions`` and the top-level private modules
   ``_validation``, ``_random``, ``_frames``, ``_blas``, ``_params``, ``_catalog``, ``_registry``, ``_results``;
1. ``io`` (reading files with DuckDB, writing atomically);
2. ``table`` and ``formula``;
3. ``distributions``;
4. ``published`` (which cells a publication releases);
5. ``fitting`` (IPF, log-linear GLM, least squares, regression): below the mechanisms that use it;
6. ``mechanisms`` (every protection method) and ``datasets``;
7. tools above the mechanisms: ``dp`` (sanitizers, accountant, verification), ``synthesis``
   (microdata synthesizers: above fitting, table and io, below metrics) and ``engines`` (where
   the mechanisms' block kernels run: local or Spark);
8. ``metrics``; 9. ``apriori``; 10. ``tuning``; 11. ``report``; 12. ``cli``.

Private modules: a module or name whose dotted path has a component starting with ``_`` belongs
to the package holding that component, and only modules inside that package (or its
subpackages) may import it.  ``cellsafe._random`` belongs to ``cellsafe`` itself, so every
subpackage may use it; ``cellsafe.io._atomic`` belongs to ``cellsafe.io``, so ``cellsafe.cli``
must import ``atomic_path`` from ``cellsafe.io``.  Imports are read from the syntax tree, so
imports inside functions count as much as those at the top of a module, and so do
``importlib.import_module("cellsafe....")`` calls with a literal name.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "cellsafe"

# Lowest first.  A module may import its own layer and any layer before it.
LAYERS = [
    {"exceptions", "_validation", "_random", "_secure", "_frames", "_blas", "_params", "_catalog", "_registry", "_results",
     "_progress", "_work", "_privacy"},
    {"io"},
    {"table", "formula"},
    {"distributions"},
    {"published"},
    {"fitting"},
    {"mechanisms", "datasets"},
    {"dp", "synthesis", "engines"},
    {"metrics"},
    {"apriori"},
    {"tuning"},
    {"report"},
    {"cli"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _package_of(rel: Path) -> list[str]:
    """Dotted package (as parts, starting with 'cellsafe') of a module path relative to SRC."""
    return ["cellsafe", *rel.parts[:-1]]


def _imported(tree: ast.AST, package: list[str]) -> Iterator[tuple[int, list[str], list[str]]]:
    """(line, imported cellsafe path as parts, names taken from it) for every import in the tree."""
    for node in ast.walk(tree):  # walks function bodies too: lazy imports count
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                parts = base + (node.module.split(".") if node.module else [])
            else:
                parts = (node.module or "").split(".")
            if parts and parts[0] == "cellsafe":
                yield node.lineno, parts, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "cellsafe":
                    yield node.lineno, a.name.split("."), []
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and node.args[0].value.startswith("cellsafe")
        ):
            yield node.lineno, node.args[0].value.split("."), []


def _is_package(parts: list[str]) -> bool:
    return (SRC.parent.joinpath(*parts) / "__init__.py").exists()


def _layers_imported(source: str, rel: Path) -> set[str]:
    """Top-level subpackages and modules of cellsafe that a module imports."""
    found: set[str] = set()
    for _, parts, names in _imported(ast.parse(source), _package_of(rel)):
        if len(parts) > 1:
            found.add(parts[1])
        else:  # "from .. import x" at the package root
            found.update(n.split(".")[0] for n in names)
    return found


def private_imports(source: str, rel: Path) -> list[str]:
    """Imports of another package's private module or private name, as messages (empty when none).

    ``rel`` is the importing module's path relative to ``src/cellsafe`` (it need not exist, so
    the check can be run on a snippet).
    """
    package = _package_of(rel)
    out = []
    for line, parts, names in _imported(ast.parse(source), package):
        targets = [parts] if not names else [parts + [n] for n in names]
        for target in targets:
            # the first private component decides whose internals these are
            j = next((i for i, p in enumerate(target) if p.startswith("_") and not p.startswith("__")), None)
            if j is None:
                continue
            owner = target[:j]
            if names and j == len(target) - 1 and not _is_package(owner):
                owner = owner[:-1]  # a private name of a public module belongs to the module's package
            if package[: len(owner)] != owner:
                out.append(
                    f"{rel} line {line} imports {'.'.join(target)}, private to {'.'.join(owner)}; "
                    f"make it public in src/{'/'.join(owner)}/__init__.py and import it from there"
                )
    return out


MODULES = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] not in ("__init__.py", "__main__.py")]
ALL_MODULES = sorted(SRC.rglob("*.py"))


def _layer_of(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_module_imports_only_lower_layers(path):
    own = _layer_of(path)
    if own not in RANK:
        pytest.fail(f"{own} is not assigned to a layer in tests/test_layers.py")
    for dep in _layers_imported(path.read_text(), path.relative_to(SRC)):
        if dep in RANK:
            assert RANK[dep] <= RANK[own], f"{path.relative_to(SRC)} ({own}) imports higher layer {dep}"


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_private_import_across_packages(path):
    found = private_imports(path.read_text(), path.relative_to(SRC))
    assert not found, "\n".join(found)


# ---------------------------------------------------------------------- the check itself
@pytest.mark.parametrize(
    "rel, snippet",
    [
        ("cli/_x.py", "from ..io._atomic import atomic_path"),
        ("cli/_x.py", "def f():\n    from ..report._figures import plot_frontier\n    return plot_frontier"),
        ("apriori/_x.py", "from ..metrics._tables import tau"),
        ("report/_x.py", "from ..metrics.microdata._data import is_categorical"),
        ("metrics/specific.py", "from .microdata._data import is_categorical"),  # a sibling subpackage's
        ("metrics/microdata/_x.py", "from ...fitting.regression import _expit"),  # a private name
        ("mechanisms/_x.py", "from ..dp import _sanitizers"),  # a private module by name
        ("cli/_x.py", "import cellsafe.io._duckdb"),
        ("cli/_x.py", "from cellsafe.io._duckdb import aggregate_file"),
        ("cli/_x.py", "import importlib\nm = importlib.import_module('cellsafe.io._atomic')"),
    ],
)
def test_private_import_check_fires(rel, snippet):
    found = private_imports(textwrap.dedent(snippet), Path(rel))
    assert len(found) == 1 and "private to cellsafe." in found[0]


@pytest.mark.parametrize(
    "rel, snippet",
    [
        ("cli/_x.py", "from ..io import atomic_path"),
        ("mechanisms/dirichlet.py", "from ._domain import blocks"),  # its own package's internals
        ("metrics/microdata/_x.py", "from .._overlap import ci_overlap"),  # its parent's
        ("dp/_x.py", "from .._random import stream"),  # the package's shared internals
        ("table/_x.py", "def f():\n    from .._frames import as_pandas"),
        ("distributions/nbi.py", "from .poisson import _stirling_error"),  # same package
        ("cli/_x.py", "from .. import __version__"),
    ],
)
def test_private_import_check_allows(rel, snippet):
    assert private_imports(textwrap.dedent(snippet), Path(rel)) == []


def test_layer_check_sees_lazy_imports():
    snippet = "def f():\n    from ..metrics import tau\n    return tau"
    assert "metrics" in _layers_imported(snippet, Path("table/_x.py"))
