"""Plain CSV files read without DuckDB: the same columns and cells as DuckDB reads, and DuckDB for anything else."""

from __future__ import annotations

import numpy as np
import pytest

from cellsafe.exceptions import DataError
from numpy.testing import assert_array_equal

from cellsafe import CountTable
from cellsafe.io import aggregate_file, file_columns
from cellsafe.io._duckdb import _connect, source_sql
from cellsafe.io._plain_csv import aggregate_plain_csv, plain_csv_header

# characters a plain file may hold in its fields: spaces, backslashes, formulas, unicode, number-like text
ALPHABET = list("abcXYZ019 -=+@\\/.:_éü€") + ["NULL", "NA", "nan", "\\N", "1e3", "0x1"]


def _duckdb_rows(path):
    con = _connect()
    try:
        return con.execute(f"SELECT * FROM {source_sql(path, text=True)}").fetchall()
    finally:
        con.close()


def _write_random(path, rng, n_rows, count=True):
    words = ["".join(rng.choice(ALPHABET, rng.integers(1, 4))) for _ in range(12)]
    words = [w for w in words if w.strip(" ") or w] or ["a"]
    lines = ["region,sex,n" if count else "region,sex,other"]
    for _ in range(n_rows):
        a, b = rng.choice(words, 2)
        last = str(rng.integers(0, 50)) if count else rng.choice(words)
        lines.append(f"{a},{b},{last}")
    path.write_text("\n".join(lines) + ("\n" if rng.random() < 0.5 else ""), encoding="utf-8")


@pytest.mark.parametrize("seed", range(12))
def test_random_plain_files_read_as_duckdb_reads_them(tmp_path, seed):
    rng = np.random.default_rng(seed)
    path = tmp_path / "p.csv"
    _write_random(path, rng, int(rng.integers(1, 300)))
    assert plain_csv_header(path) == [c for c in _duckdb_columns(path)]
    coded = aggregate_plain_csv(path, ["region", "sex"], "n")
    assert coded is not None
    frame, name = aggregate_file(path, ["region", "sex"], "n")
    expected = CountTable.from_frame(frame, ["region", "sex"], count=name)
    got = CountTable.from_microdata(path, ["region", "sex"], count="n")
    assert got.variables == expected.variables
    assert_array_equal(got.index, expected.index)
    assert_array_equal(got.counts, expected.counts)
    rows = _duckdb_rows(path)  # the fields themselves, including the ones that are not counted
    assert sorted({r[0] for r in rows}) == sorted(str(c) for c in {r[0] for r in rows})


def _duckdb_columns(path):
    con = _connect()
    try:
        return [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source_sql(path, text=True)}").fetchall()]
    finally:
        con.close()


@pytest.mark.parametrize(
    "text",
    [
        'a,b\n"x,y",1\n',  # quotes: DuckDB's dialect
        "a;b\nx;1\n",  # another delimiter
        "a,b\r\nx,1\r\n",  # carriage returns
        "a,b\n#x,1\n",  # a comment character
        "a,b\nx,1\n\ny,2\n",  # an empty line
        "a,b\nx,\n",  # an empty field: missing to DuckDB
        "a,a\nx,1\n",  # duplicate names
        "a,A\nx,1\n",  # names equal but for case (DuckDB's names ignore case)
        "\ufeffa,b\nx,1\n",  # a byte-order mark
        "a,b\nx,1,2\n",  # a ragged row
        "a,b\n",  # no data
        "a,b\nO'Brien,1\n",  # a single quote
    ],
)
def test_anything_not_plain_goes_to_duckdb(tmp_path, text):
    path = tmp_path / "q.csv"
    path.write_text(text, encoding="utf-8")
    assert aggregate_plain_csv(path, ["a", "b"] if text.startswith("a,b") else ["a"], None) is None


def test_header_of_a_file_that_is_not_plain_comes_from_duckdb(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('a,"b c"\nx,1\n')
    assert plain_csv_header(path) is None
    assert file_columns(path) == ["a", "b c"]
    path.write_text('a;"b c"\nx;1\n')  # CSV is comma-separated: a semicolon file is refused, never sniffed
    assert plain_csv_header(path) is None
    with pytest.raises(DataError, match="separated by semicolons"):
        file_columns(path)


@pytest.mark.parametrize("bad", ["5.5", "1e3", "-1", "-0", "0x10", "\u00a05", "9223372036854775808", "NA"])
def test_counts_not_plain_whole_numbers_go_to_duckdb_and_its_message(tmp_path, bad):
    path = tmp_path / "c.csv"
    path.write_text(f"a,n\nx,1\ny,{bad}\n", encoding="utf-8")
    assert aggregate_plain_csv(path, ["a"], "n") is None
    with pytest.raises(Exception) as old:
        aggregate_file(path, ["a"], "n")
    with pytest.raises(Exception) as new:
        CountTable.from_microdata(path, ["a"], count="n")
    assert str(new.value) == str(old.value)


def test_counts_spelled_with_spaces_signs_and_decimals(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("a,n\nx, 5\nx,+5\ny,007\ny,3.00\nz,0\n")
    coded = aggregate_plain_csv(path, ["a"], "n")
    assert coded is not None
    t = CountTable.from_microdata(path, ["a"], count="n")
    assert t.variables[0].categories == ("x", "y", "z") and t.counts.tolist() == [10, 10]
