"""write_coded_csv: byte for byte what DataFrame.to_csv(index=False) writes for the same frame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cellsafe.io import CodedColumn, neutralise_formulas, write_coded_csv

LABELS = ["plain", "a,b", 'say "hi"', "", " lead", "line\nbreak", "cr\rhere", "é ü", "=SUM(A1)", "-3", "Total"]


def _frame(rng, n, counts):
    codes = rng.integers(0, len(LABELS), n)
    other = rng.integers(0, 3, n)
    df = pd.DataFrame({"table": np.array(["a:b", "Total", "+x"], dtype=object)[other],
                       "v": np.array(LABELS, dtype=object)[codes]})
    df["count"] = pd.Series(counts).round().astype("Int64")
    cols = [CodedColumn(["a:b", "Total", "+x"], other), CodedColumn(LABELS, codes), counts]
    return df, cols


@pytest.mark.parametrize("rows_at_once", [1 << 14, 7])  # one block, or blocks of 7 rows (the last one shorter)
@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("escape", [False, True])
def test_same_bytes_as_pandas(tmp_path, monkeypatch, big, escape, rows_at_once):
    import cellsafe.io._csv as writer

    monkeypatch.setattr(writer, "_ROWS", rows_at_once)
    rng = np.random.default_rng(3)
    n = 2000
    counts = rng.integers(0, 5_000_000_000 if big else 500, n).astype(np.float64)
    counts[rng.random(n) < 0.2] = np.nan
    df, cols = _frame(rng, n, counts)
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    assert write_coded_csv(ours, ["table", "v", "count"], cols, escape_formulas=escape)
    (neutralise_formulas(df) if escape else df).to_csv(theirs, index=False)
    assert ours.read_bytes() == theirs.read_bytes()


def test_header_needing_quotes_and_no_rows(tmp_path):
    df = pd.DataFrame({"a,b": pd.Series([], dtype=object), "count": pd.Series([], dtype="Int64")})
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    assert write_coded_csv(ours, ["a,b", "count"], [CodedColumn(["x"], np.zeros(0, int)), np.zeros(0)])
    df.to_csv(theirs, index=False)
    assert ours.read_bytes() == theirs.read_bytes()


def test_declines_what_it_cannot_write_as_pandas(tmp_path):
    path = tmp_path / "t.csv"
    assert not write_coded_csv(path, ["v", "count"], [CodedColumn(["x"], [0]), np.array([1.5])])
    assert not write_coded_csv(path, ["v", "count"], [CodedColumn([3.5], [0]), np.array([1.0])])
    assert not write_coded_csv(path, ["v", "count"], [CodedColumn(["a\x00b"], [0]), np.array([1.0])])
    assert not path.exists()


@pytest.mark.parametrize("escape", [False, True])
def test_integer_and_boolean_labels_as_pandas_writes_them(tmp_path, escape):
    """Categories read from integer columns: pandas writes str(x) of the objects, numbers never escaped."""
    labels = ["Total", -3, 0, 12, np.int64(7), True, False, "=x"]
    codes = np.arange(len(labels)).repeat(3)
    counts = np.arange(codes.size, dtype=np.float64)
    df = pd.DataFrame({"v": np.array(labels + [None], dtype=object)[:-1][codes], "count": counts.astype(np.int64)})
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    assert write_coded_csv(ours, ["v", "count"], [CodedColumn(labels, codes), counts], escape_formulas=escape)
    (neutralise_formulas(df) if escape else df).to_csv(theirs, index=False)
    assert ours.read_bytes() == theirs.read_bytes()
