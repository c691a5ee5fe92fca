"""Every input the fast way, output unchanged: Parquet of any simple column type, CSV through one DuckDB scan,
pandas / polars / Arrow frames in the call.  The reference is the path these replaced: DuckDB's frame of
distinct cells encoded by ``encode_cells`` (records), and ``CountTable.from_frame`` (tables of frames)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from numpy.testing import assert_array_equal

from cellsafe import CountTable
from cellsafe.exceptions import DataError
from cellsafe.io import CodedCells, aggregate_file, aggregate_file_codes, aggregate_frame_codes, aggregate_parquet_codes, aggregate_with_keys
from cellsafe.table import encode_cells, keyed_table


@pytest.fixture(scope="module")
def records():
    rng = np.random.default_rng(5)
    n = 20_000
    return pd.DataFrame(
        {
            "text": rng.choice(["N", "S", "10", "9"], n),
            "small": rng.integers(-3, 4, n),  # coded by value
            "wide": rng.choice([0, 10**12, -(10**15), 7], n),  # a long range: hashed
            "u8": rng.integers(0, 5, n).astype(np.uint8),
            "flag": rng.random(n) < 0.3,
            "cat": pd.Categorical(rng.choice(["b", "a"], n), categories=["z", "b", "a"]),
            "ikey": rng.integers(0, 256, n),
            "ukey": rng.random(n),
            "n": rng.integers(0, 4, n),
        }
    )


def _reference(source, names, key=None, n_keys=None):
    """The old path: DuckDB's GROUP BY to a pandas frame, encoded by encode_cells."""
    agg = aggregate_with_keys(source, names, key, n_keys=n_keys)
    out_vars, flat = encode_cells(agg.cells, names)
    order = np.argsort(flat)
    return CountTable(out_vars, flat[order], agg.counts[order]), None if agg.key_sums is None else agg.key_sums[order]


def _same(a: CountTable, b: CountTable) -> None:
    assert a.variables == b.variables
    for v, w in zip(a.variables, b.variables):  # True == 1 in Python: the types too
        assert [type(c) for c in v.categories] == [type(c) for c in w.categories]
    assert_array_equal(a.index, b.index)
    assert_array_equal(a.counts, b.counts)


PARQUET_CASES = [
    (["text", "small"], "ikey", 256),
    (["wide", "u8", "flag"], "ukey", None),
    (["small", "text", "wide"], None, None),
]


@pytest.mark.parametrize("names, key, n_keys", PARQUET_CASES)
def test_parquet_of_numbers_and_booleans_goes_the_fast_way(records, tmp_path, names, key, n_keys):
    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pandas(records, preserve_index=False), path, row_group_size=3001)
    assert aggregate_parquet_codes(path, names, key, n_keys=n_keys) is not None
    fast = keyed_table(path, names, key, n_keys=n_keys)
    table, sums = _reference(path, names, key, n_keys)
    _same(fast.table, table)
    if key is not None:
        assert_array_equal(fast.key_sums, sums)
    _same(CountTable.from_microdata(path, names), table)


def test_parquet_counts_are_summed_and_zero_rows_keep_their_categories(records, tmp_path):
    path = tmp_path / "f.parquet"
    df = records[["text", "small", "n"]]
    df.to_parquet(path, index=False)
    assert aggregate_parquet_codes(path, ["text", "small"], count="n") is not None
    _same(CountTable.from_microdata(path, ["text", "small"], count="n"),
          CountTable.from_frame(df, ["text", "small"], count="n"))
    zero = pd.DataFrame({"a": ["x", "y"], "n": [3, 0]})
    zero.to_parquet(path, index=False)
    t = CountTable.from_microdata(path, ["a"], count="n")
    assert t.variables[0].categories == ("x", "y") and t.counts.tolist() == [3]


@pytest.mark.parametrize("kind", ["pandas", "pandas-object", "arrow", "polars"])
@pytest.mark.parametrize("names, key, n_keys", PARQUET_CASES + [(["cat", "text"], "ikey", 256)])
def test_frames_in_the_call_go_the_fast_way(records, kind, names, key, n_keys):
    df = records
    if kind == "pandas-object":
        df = records.assign(text=records["text"].astype(object))
    elif kind == "arrow":
        df = pa.Table.from_pandas(records, preserve_index=False)
    elif kind == "polars":
        pl = pytest.importorskip("polars")
        df = pl.from_pandas(records)
    assert aggregate_frame_codes(df, names, key, n_keys=n_keys) is not None
    fast = keyed_table(df, names, key, n_keys=n_keys)
    table, sums = _reference(df, names, key, n_keys)
    _same(fast.table, table)
    if key is not None:
        assert_array_equal(fast.key_sums, sums)
    as_frame = df.to_pandas() if kind in ("arrow", "polars") else df
    _same(CountTable.from_microdata(df, names), CountTable.from_frame(as_frame, names))


def test_declared_categories_keep_every_category_in_order(records):
    t = CountTable.from_microdata(records, ["cat"])
    assert t.variables[0].categories == ("z", "b", "a") and t.nnz == 2
    assert keyed_table(records, ["cat"]).table.variables[0].categories == ("z", "b", "a")


def test_frame_counts_as_from_frame(records):
    _same(CountTable.from_microdata(records, ["text", "flag"], count="n"),
          CountTable.from_frame(records, ["text", "flag"], count="n"))


@pytest.mark.parametrize(
    "edit",
    ["missing-text", "mixed-object", "float-category", "negative-count", "nullable-int-missing"],
)
def test_frames_the_fast_way_cannot_read_go_the_old_way(records, edit):
    df = records.head(500).copy()
    names, count = ["text", "small"], None
    if edit == "missing-text":
        df["text"] = df["text"].astype(object)
        df.loc[3, "text"] = None
    elif edit == "mixed-object":
        df["text"] = df["text"].astype(object)
        df.loc[3, "text"] = 5
    elif edit == "float-category":
        df["small"] = df["small"].astype(float)
    elif edit == "negative-count":
        df.loc[3, "n"] = -1
        count = "n"
    elif edit == "nullable-int-missing":
        df["small"] = df["small"].astype("Int64")
        df.loc[3, "small"] = None
    assert aggregate_frame_codes(df, names, count=count) is None
    try:
        expected = CountTable.from_frame(df, names, count=count)
    except DataError as exc:
        with pytest.raises(DataError, match=str(exc)[:30].replace("(", r"\(").replace("'", ".")):
            CountTable.from_microdata(df, names, count=count)
        return
    _same(CountTable.from_microdata(df, names, count=count), expected)


@pytest.mark.parametrize("count", [None, "n"])
def test_csv_through_one_scan_is_the_old_table(records, tmp_path, count):
    path = tmp_path / "r.csv"
    records.to_csv(path, index=False)
    names = ["text", "small", "flag"]
    coded = aggregate_file_codes(path, names, count)
    assert isinstance(coded, CodedCells)
    frame, name = aggregate_file(path, names, count)
    _same(CountTable.from_microdata(path, names, count=count), CountTable.from_frame(frame, names, count=name))
    if count is None:
        table, _ = _reference(path, names)
        _same(CountTable.from_microdata(path, names), table)


def test_parquet_dates_come_back_as_the_old_frame(tmp_path):
    """A type the coded cells do not hold: DuckDB's frame, as before."""
    path = tmp_path / "d.parquet"
    pd.DataFrame({"day": pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-01"])}).to_parquet(path)
    assert aggregate_parquet_codes(path, ["day"]) is None
    assert not isinstance(aggregate_file_codes(path, ["day"]), CodedCells)
    frame, name = aggregate_file(path, ["day"])
    _same(CountTable.from_microdata(path, ["day"]), CountTable.from_frame(frame, ["day"], count=name))


def test_small_signed_integers_spanning_their_type(tmp_path):
    """int8 values -100..100: codes computed without overflowing the column's own type."""
    df = pd.DataFrame({"v": np.array([-100, 100, 0, -100], dtype=np.int8), "w": np.array([1, 2, 1, 1], dtype=np.int16)})
    path = tmp_path / "i.parquet"
    df.to_parquet(path, index=False)
    table, _ = _reference(path, ["v", "w"])
    _same(keyed_table(path, ["v", "w"]).table, table)
    _same(CountTable.from_microdata(df, ["v", "w"]), CountTable.from_frame(df, ["v", "w"]))


def test_dictionary_repeating_a_value_counts_it_once():
    """Arrow allows a dictionary to hold a value twice: both codes are one category."""
    col = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 1], pa.int32()), pa.array(["x", "y", "x"]))
    t = pa.table({"v": col})
    kt = keyed_table(t, ["v"])
    assert kt.table.variables[0].categories == ("x", "y") and kt.table.counts.tolist() == [2, 2]


def test_identifiers_are_left_to_duckdb(tmp_path):
    """A column with more distinct values than categories have: the DuckDB path, the same table."""
    n = 300_000
    df = pd.DataFrame({"id": np.arange(n).astype(str), "g": np.arange(n) % 2})
    assert aggregate_frame_codes(df, ["id", "g"]) is None
    kt = keyed_table(df, ["g"])
    assert kt.table.counts.tolist() == [n // 2, n // 2]


def test_csv_counts_read_exactly_as_written(tmp_path):
    """Counts spelled '5.0', '+5', ' 5', '007' are whole numbers; totals beyond 2^53 stay exact."""
    path = tmp_path / "c.csv"
    path.write_text("a,n\nx,5.0\nx,+5\ny, 5 \ny,007\nz,0\nw,9007199254740993\nw,1\n")
    t = CountTable.from_microdata(path, ["a"], count="n")
    assert dict(zip(t.to_frame()["a"], t.to_frame()["count"])) == {"w": 2**53 + 2, "x": 10, "y": 12}
    assert t.variables[0].categories == ("w", "x", "y", "z")


@pytest.mark.parametrize("bad", ["5.5", "1e3", "", "-1", "0x10", "9223372036854775808"])
def test_csv_counts_that_are_not_whole_numbers_are_refused_as_before(tmp_path, bad):
    path = tmp_path / "c.csv"
    path.write_text(f"a,n\nx,1\ny,{bad}\n")
    with pytest.raises(DataError) as old:
        aggregate_file(path, ["a"], "n")
    with pytest.raises(DataError) as new:
        CountTable.from_microdata(path, ["a"], count="n")
    assert str(new.value) == str(old.value)
