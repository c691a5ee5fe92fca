"""A frequency table read as records is caught: R's Titanic with its counts in ``Freq``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from cellsafe.cli.main import main
from cellsafe.io import count_column_hint, likely_count_columns

TITANIC = Path(__file__).resolve().parents[1] / "reference" / "loglinear" / "titanic.csv"
VARIABLES = ["Class", "Sex", "Age", "Survived"]


@pytest.fixture
def r_titanic(tmp_path):
    """As R writes as.data.frame(Titanic) with its row names: rownames,Class,Sex,Age,Survived,Freq."""
    frame = pd.read_csv(TITANIC).rename(columns={"count": "Freq"})
    frame.insert(0, "rownames", range(1, len(frame) + 1))
    path = tmp_path / "titanic.csv"
    frame.to_csv(path, index=False)
    return path


def test_the_count_column_is_named(r_titanic):
    assert likely_count_columns(r_titanic, VARIABLES) == ["Freq"]
    assert "is Freq the count? pass --count Freq" in count_column_hint(r_titanic, VARIABLES)


def test_row_numbers_ids_and_text_are_not_counts(tmp_path):
    path = tmp_path / "people.csv"
    pd.DataFrame({"id": [3, 1, 2, 0], "zero": [0, 1, 0, 1], "a": ["x", "y", "z", "w"], "note": ["1", "2", "x", "4"],
                  "weight": ["1.5", "2", "3", "4"]}).to_csv(path, index=False)
    assert likely_count_columns(path, ["a"]) == []  # 0..n-1 ids, 0/1 flags, text, decimals


def test_describe_says_it_and_the_hint_works(r_titanic, capsys):
    assert main(["describe", str(r_titanic), "--variables", ",".join(VARIABLES), "--json"]) == 0
    captured = capsys.readouterr()
    assert "is Freq the count? pass --count Freq" in captured.err
    assert json.loads(captured.out)["total"] == 32  # each row read as one record, as asked: but said
    assert main(["describe", str(r_titanic), "--variables", ",".join(VARIABLES), "--count", "Freq", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["total"] == 2201 and "Freq the count" not in captured.err


def test_records_with_repeated_cells_get_no_notice(tmp_path, capsys):
    path = tmp_path / "r.csv"
    pd.DataFrame({"a": ["x", "x", "y"], "n": [5, 6, 7]}).to_csv(path, index=False)
    assert main(["describe", str(path), "--variables", "a", "--json"]) == 0
    assert "the count?" not in capsys.readouterr().err
