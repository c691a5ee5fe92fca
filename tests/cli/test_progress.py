"""Progress bars: drawn on a terminal by default, never with --quiet or when standard error is not a terminal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cellsafe.cli.main import main

RECORDS = "sex,age\n" + "F,1\nM,2\nF,2\nM,1\nF,1\nM,3\n" * 5
TABLE = "sex,age,count\nF,1,3\nM,2,1\nF,2,2\nM,1,4\nF,3,1\n"


def _commands(d: Path) -> dict[str, list[str]]:
    (d / "records.csv").write_text(RECORDS)
    (d / "table.csv").write_text(TABLE)
    (d / "synthetic_1.csv").write_text(TABLE)
    (d / "synthetic_2.csv").write_text(TABLE.replace("3\n", "2\n"))
    table = ["--variables", "sex,age", "--count", "count"]
    return {
        "tune": ["tune", str(d / "table.csv"), *table, "--distribution", "poisson", "--solve", "alpha",
                 "--target", "tau4(1)=0.5"],
        "frontier": ["frontier", str(d / "table.csv"), *table, "--grid", "8", "--output", str(d / "f.csv")],
        "publish scr": ["publish", str(d / "records.csv"), "--variables", "sex,age", "--formula", "sex*age",
                        "--method", "scr", "--seed", "1", "--output", str(d / "p.csv")],
        "evaluate": ["evaluate", str(d / "table.csv"), str(d / "synthetic_1.csv"), str(d / "synthetic_2.csv"), *table],
        "expand": ["expand", str(d / "table.csv"), *table, "--seed", "1", "--output", str(d / "r.csv")],
        "synthesize": ["synthesize", str(d / "table.csv"), *table, "--distribution", "poisson", "--seed", "1", "-m", "2",
                       "--output", str(d / "s")],
    }


def _run(tmp_path: Path, name: str, extra: list[str]) -> int:
    return main(_commands(tmp_path)[name] + extra)


@pytest.mark.parametrize("name", ["tune", "frontier", "publish scr", "evaluate", "expand", "synthesize"])
@pytest.mark.parametrize("terminal", [False, True])
def test_quiet_draws_no_bar(tmp_path, monkeypatch, capsys, name, terminal):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal, raising=False)
    assert _run(tmp_path, name, ["--quiet"]) == 0
    assert "\r" not in capsys.readouterr().err  # tqdm redraws its line with carriage returns


@pytest.mark.parametrize("name", ["tune", "frontier", "publish scr", "evaluate", "expand"])
def test_no_bar_when_stderr_is_not_a_terminal(tmp_path, monkeypatch, capsys, name):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert _run(tmp_path, name, []) == 0
    assert "\r" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, desc", [("tune", "scanning alpha"), ("frontier", "frontier"), ("evaluate", "evaluate"), ("expand", "expand")]
)
def test_bar_on_a_terminal(tmp_path, monkeypatch, capsys, name, desc):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert _run(tmp_path, name, []) == 0
    err = capsys.readouterr().err
    assert "\r" in err and desc in err and "%" in err


def test_library_draws_no_bar_unless_asked(capsys):
    from cellsafe.tuning import frontier, tune
    from cellsafe.distributions import Poisson
    from cellsafe.mechanisms.saturated import SaturatedSynthesizer

    sizes = {0: 900, 1: 60, 2: 40}
    tune(sizes, SaturatedSynthesizer(Poisson()), "alpha", "tau4(1)=0.4")
    frontier(sizes, families=["poisson"], n=5)
    assert capsys.readouterr().err == ""
    frontier(sizes, families=["poisson"], n=5, progress=True)
    assert "frontier" in capsys.readouterr().err
