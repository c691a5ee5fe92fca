"""Lower layers never import higher ones (design.md, 'Layers')."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "cellsafe"

# Lowest first.  A module may import its own layer and any layer before it.
LAYERS = [
    {"exceptions", "_validation", "_random", "_frames", "_blas", "_params", "_registry", "_results"},
    {"io"},
    {"table", "formula"},
    {"distributions"},
    {"published"},
    {"fitting"},
    {"mechanisms", "dp", "datasets"},
    {"synthesis"},
    {"metrics"},
    {"apriori"},
    {"tuning"},
    {"report"},
    {"engines"},
    {"cli"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _layer_of(path: Path) -> str:
    rel = path.relative_to(SRC).parts
    return rel[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    pkg_parts = path.relative_to(SRC).parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(pkg_parts[: len(pkg_parts) - node.level + 1])
                mod = (node.module or "").split(".")
                parts = [p for p in base + mod if p]
                if parts:
                    found.add(parts[0])
                elif node.names:  # "from .. import x" at the package root
                    found.update(a.name.split(".")[0] for a in node.names)
            elif node.module and node.module.startswith("cellsafe."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("cellsafe."):
                    found.add(a.name.split(".")[1])
    return found


MODULES = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] not in ("__init__.py", "__main__.py")]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_module_imports_only_lower_layers(path):
    own = _layer_of(path)
    if own not in RANK:
        pytest.fail(f"{own} is not assigned to a layer in tests/test_layers.py")
    for dep in _imports(path):
        if dep in RANK:
            assert RANK[dep] <= RANK[own], f"{path.relative_to(SRC)} ({own}) imports higher layer {dep}"
