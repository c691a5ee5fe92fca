"""The command line holds no statistics: a module under ``cli/`` parses, calls one library function and writes.

A module that imports numpy or scipy (anywhere in it, not only at the top) computes something the
library should; the few that still do are listed here with the reason, as docs/cli.md lists them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cellsafe.cli

CLI = Path(cellsafe.cli.__file__).parent

#: Modules allowed to import numpy or scipy, and why (each is also named in docs/cli.md).
EXCEPTIONS = {
    "_audit.py": "the required width of each cell from the rules; moves into the library's one audit function",
}


def _numeric_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [f"{n} (line {node.lineno})" for n in names if n.split(".")[0] in ("numpy", "scipy")]
    return found


def test_cli_modules_import_neither_numpy_nor_scipy():
    offenders = {p.name: _numeric_imports(p) for p in sorted(CLI.glob("*.py")) if p.name not in EXCEPTIONS}
    assert not {k: v for k, v in offenders.items() if v}, offenders


def test_the_exceptions_are_still_needed_and_documented():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    for name in EXCEPTIONS:
        assert _numeric_imports(CLI / name), f"{name} no longer imports numpy or scipy: drop it from EXCEPTIONS"
        assert f"cli/{name}" in doc, f"docs/cli.md does not name the exception cli/{name}"
