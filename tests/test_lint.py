"""ruff and mypy are clean, as part of the tests (``make test``, hence CI): their settings are in pyproject.toml.

ruff: pyflakes, pycodestyle and bugbear over the package, the tests and the benchmarks.  mypy: every function of
the package typed (``disallow_untyped_defs``), the bodies checked against numpy's, pandas' and scipy's stubs.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed: pip install -e '.[test]' (make test installs it)")
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_is_clean():
    out = _run("ruff", "check", "src", "tests", "benchmarks")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_mypy_is_clean():
    out = _run("mypy")
    assert out.returncode == 0, out.stdout + out.stderr
