"""The command line starts at once: --help and argument errors import none of the libraries that compute.

Each command imports what it uses when it runs (numpy, pandas, scipy, DuckDB, Arrow, matplotlib), so
``cellsafe publish --help`` or a mistyped option answers in a tenth of a second.  The options, their
choices and the defaults in their help come from the catalog of declared parameters
(:mod:`cellsafe._catalog`), which imports none of them either.
"""

from __future__ import annotations

import json
import subprocess
import sys

from cellsafe.cli.main import COMMANDS

HEAVY = ("numpy", "pandas", "scipy", "duckdb", "pyarrow", "matplotlib", "sklearn", "pyspark")

_PROBE = r"""
import json, sys
from cellsafe.cli.main import main
asked = json.loads(sys.argv[1])
codes = []
for argv in asked:
    try:
        codes.append(main(argv))
    except SystemExit as exc:
        codes.append(exc.code)
print(json.dumps({"codes": codes, "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def _probe(argvs: list[list[str]]) -> dict:
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argvs)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_help_of_every_command_imports_nothing_heavy():
    names = [name[1:].replace("_", "-") for name in COMMANDS]
    result = _probe([["--help"], *([name, "--help"] for name in names)])
    assert result["codes"] == [0] * (len(names) + 1)
    assert not set(HEAVY) & set(result["loaded"]), set(HEAVY) & set(result["loaded"])


def test_argument_errors_import_nothing_heavy():
    result = _probe([
        ["publish", "x.csv"],                                   # required options missing
        ["assess", "x.csv", "--variables", "a", "--distribution", "zipf"],   # a choice that does not exist
        ["publish", "x.csv", "--variables", "a", "--formula", "a", "--method", "ckm", "--D", "five",
         "--output", "o.csv"],                                  # a number that is not one
        ["tune", "--no-such-option"],
        ["no-such-command"],
    ])
    assert result["codes"] == [2] * 5
    assert not set(HEAVY) & set(result["loaded"]), set(HEAVY) & set(result["loaded"])
