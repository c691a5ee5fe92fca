"""The README's examples run: every ```python block in order (one namespace, as a reader pastes them) and every
```sh command, in a folder holding small files of the names they use.

Printed output is the ``# `` comment lines right after a ``print(...)``; each number must equal the printed one to
the digits printed: TOLERANCE is half a unit of the last digit shown (``0.2497`` matches 0.24966 but not 0.2499).
A number ending in ``...`` matches on the digits shown.  Words must match exactly.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import re
import shlex
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main
from cellsafe.exceptions import CellsafeWarning

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_NUMBER = re.compile(r"-?\d[\d,]*\.?\d*(?:e[-+]?\d+)?(?:\.\.\.)?", re.IGNORECASE)


def TOLERANCE(printed: str) -> float:
    """Half a unit of the last digit printed: the one tolerance of every number in the README."""
    mantissa = printed.lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(printed.lower().split("e")[1]) if "e" in printed.lower() else 0
    return 0.5 * 10.0 ** (exponent - decimals)


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def _same(printed: str, actual: str) -> bool:
    """The printed output and the actual one: the same words, numbers within TOLERANCE."""
    want, got = printed.split(), actual.split()
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        if w == g:
            continue
        if not (_NUMBER.fullmatch(w) and _NUMBER.match(g)):
            return False
        if w.endswith("..."):
            if not g.startswith(w[:-3]):
                return False
            continue
        try:
            if abs(float(w.replace(",", "")) - float(g.replace(",", ""))) > TOLERANCE(w.replace(",", "")):
                return False
        except ValueError:
            return False
    return True


def _statements(code: str) -> list[tuple[str, str]]:
    """(statement, expected output) pairs: a top-level statement and the '# ' lines printed right after it."""
    out: list[tuple[str, str]] = []
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        start = i
        i += 1
        # a statement continues over indented lines, open brackets and trailing backslashes
        while i < len(lines) and (lines[i].startswith((" ", ")", "]", "}")) or _open("\n".join(lines[start:i]))):
            i += 1
        statement = "\n".join(lines[start:i])
        expected = []
        while i < len(lines) and lines[i].startswith("# ") and statement.lstrip().startswith("print("):
            expected.append(lines[i][2:])
            i += 1
        while i < len(lines) and lines[i].startswith("#"):
            i += 1  # comments that are not printed output
        out.append((statement, "\n".join(expected)))
    return out


def _open(code: str) -> bool:
    text = re.sub(r"#.*", "", code)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "", text)
    return text.count("(") > text.count(")") or text.count("[") > text.count("]") or text.count("{") > text.count("}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The files the README's examples name, small: pupils, people with a geography, firms, adult."""
    d = tmp_path_factory.mktemp("readme")
    gen = np.random.default_rng(20)
    n = 3000
    pd.DataFrame({
        "area": gen.choice([f"E{i:02d}" for i in range(30)], n), "ethnicity": gen.choice(list("ABCDEFG"), n),
        "sex": gen.choice(["F", "M"], n), "age": gen.choice([str(a) for a in range(4, 19)], n),
        "language": gen.choice(["en", "cy", "pl", "ur"], n, p=[0.85, 0.05, 0.05, 0.05]),
    }).to_parquet(d / "pupils.parquet", index=False)
    leaves = {"R1": {"D11": ["G111", "G112"], "D12": ["G121"]}, "R2": {"D21": ["G211", "G212", "G213"]}}
    (d / "geo.hrc").write_text("".join(f"{r}\n" + "".join(f"@{dd}\n" + "".join(f"@@{g}\n" for g in gs)
                                                           for dd, gs in ds.items()) for r, ds in leaves.items()))
    geo = [g for ds in leaves.values() for gs in ds.values() for g in gs]
    pd.DataFrame({"geo": gen.choice(geo, 800), "sex": gen.choice(["F", "M"], 800),
                  "age": gen.choice(["0-15", "16-64", "65+"], 800)}).to_csv(d / "people.csv", index=False)
    (d / "domain.json").write_text(json.dumps({"sex": ["F", "M"], "age": ["0-15", "16-64", "65+"]}))
    m = 600
    pd.DataFrame({"nace": gen.choice(["A", "B", "C"], m), "region": gen.choice(["N", "S"], m),
                  "turnover": gen.gamma(1.5, 2000.0, m).round(2), "firm_id": gen.integers(0, 200, m).astype(str),
                  "rkey": gen.random(m)}).to_parquet(d / "firms.parquet", index=False)
    pd.read_csv(ROOT / "tests" / "reference" / "adult" / "adult.csv.gz").head(1500).to_csv(d / "adult.csv", index=False)
    return d


@pytest.mark.slow
def test_the_python_examples_print_what_the_readme_says(folder, monkeypatch, tmp_path):
    monkeypatch.chdir(shutil.copytree(folder, tmp_path / "python"))
    namespace: dict = {}
    for block in _blocks("python"):
        block = block.replace('"tests/reference/', f'"{ROOT}/tests/reference/')
        for statement, expected in _statements(block):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed), warnings.catch_warnings():
                warnings.simplefilter("ignore", CellsafeWarning)
                exec(compile(statement, "README.md", "exec"), namespace)  # noqa: S102  (the README's own code)
            if expected:
                assert _same(expected, printed.getvalue()), (
                    f"README.md: {statement.strip()}\nprints\n{printed.getvalue()}\nnot, within TOLERANCE,\n{expected}"
                )


@pytest.mark.slow
def test_the_shell_examples_run(folder, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(shutil.copytree(folder, tmp_path / "shell"))
    for block in _blocks("sh"):
        for command in block.replace("\\\n", " ").splitlines():
            words = shlex.split(command, comments=True)
            words = [w for word in words for w in (sorted(glob.glob(word)) if "*" in word else [word]) or [word]]  # as a shell
            if not words or words[0] != "cellsafe":
                continue  # make demo / make test: the set-up itself
            try:
                code = main(words[1:])
            except SystemExit as exc:  # cellsafe --help
                code = exc.code
            assert code == 0, f"README.md: {command}\n{capsys.readouterr().err}"


def test_the_tolerance_is_the_digits_printed():
    assert _same("0.2497 0.5266", "0.24966 0.52664")
    assert not _same("0.2499 0.528", "0.2497 0.5266")  # the README's stale values
    assert _same("6.98...", "6.98532") and _same("5.34e-04", "5.3412e-04") and not _same("2.13", "2.14")
