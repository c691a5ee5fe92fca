"""aggregate_parquet_codes: the same cells, counts and key sums as DuckDB's GROUP BY, from a Parquet file's
dictionary codes and integer values; None (the DuckDB path) wherever the records are not read exactly as
DuckDB reads them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from numpy.testing import assert_array_equal

from cellsafe.io import FLOAT_KEY_BITS, aggregate_parquet_codes, aggregate_with_keys
from cellsafe.table import keyed_table


@pytest.fixture(scope="module")
def records():
    rng = np.random.default_rng(11)
    n = 30_000
    return pd.DataFrame(
        {
            "region": rng.choice(["N", "S", "E", "W", "10", "9"], n),
            "age": rng.choice([f"a{i}" for i in range(7)], n),
            "num": rng.integers(0, 5, n),
            "ikey": rng.integers(0, 256, n),
            # keys near 1 make float sums lose low bits: the exact sum must not
            "ukey": np.where(rng.random(n) < 0.5, rng.random(n), 1.0 - rng.random(n) * 1e-12),
        }
    )


@pytest.fixture(scope="module")
def parquet(records, tmp_path_factory):
    """Small row groups whose dictionaries differ in content and order."""
    path = tmp_path_factory.mktemp("coded") / "r.parquet"
    pq.write_table(pa.Table.from_pandas(records, preserve_index=False), path, row_group_size=997)
    return path


def _by_cell(names, cells, counts, sums):
    return {tuple(str(x) for x in row): (int(c), None if sums is None else int(s))
            for row, c, s in zip(cells, counts, sums if sums is not None else [None] * len(counts))}


def _duckdb(path, names, key, n_keys):
    res = aggregate_with_keys(path, names, key, n_keys=n_keys)
    return _by_cell(names, res.cells[names].itertuples(index=False), res.counts, res.key_sums), res.integer_keys


def _coded(path, names, key, n_keys):
    res = aggregate_parquet_codes(path, names, key, n_keys=n_keys)
    assert res is not None
    assert np.all(np.diff(res.index) > 0)
    sizes = [len(d) for d in res.dictionaries]
    codes = np.column_stack(np.unravel_index(res.index, sizes))
    cells = [[d[i] for d, i in zip(res.dictionaries, row)] for row in codes]
    return _by_cell(names, cells, res.counts, res.key_sums), res.integer_keys


@pytest.mark.parametrize("key, n_keys", [("ikey", 256), ("ukey", None), (None, None)])
def test_same_cells_counts_and_sums_as_duckdb(parquet, key, n_keys):
    names = ["region", "age"]
    assert _coded(parquet, names, key, n_keys) == _duckdb(parquet, names, key, n_keys)


def test_uniform_sums_exact(records, parquet):
    res = aggregate_parquet_codes(parquet, ["region"], "ukey")
    fixed = np.floor(records["ukey"].to_numpy() * 2.0**FLOAT_KEY_BITS).astype(np.uint64)
    for i, value in enumerate(res.dictionaries[0]):
        cell = res.index.tolist().index(i)
        exact = sum(int(x) for x in fixed[records["region"].to_numpy() == value]) % 2**FLOAT_KEY_BITS
        assert int(res.key_sums[cell]) == exact


def test_keyed_table_same_from_codes_and_duckdb(parquet, records, tmp_path):
    """The table (categories sorted as from_frame sorts them) and its key sums."""
    fast = keyed_table(parquet, ["region", "age"], "ikey", n_keys=256)
    csv = tmp_path / "r.csv"
    records.to_csv(csv, index=False)
    slow = keyed_table(csv, ["region", "age"], "ikey", n_keys=256)  # CSV: always DuckDB
    assert fast.table.variables == slow.table.variables
    assert fast.table.variables[0].categories == ("10", "9", "E", "N", "S", "W")
    assert_array_equal(fast.table.index, slow.table.index)
    assert_array_equal(fast.table.counts, slow.table.counts)
    assert_array_equal(fast.key_sums, slow.key_sums)


def test_unused_dictionary_values_are_not_categories(tmp_path):
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 2, 2], pa.int32()), pa.array(["x", "unused", "y"]))
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"v": arr, "k": pa.array([1, 2, 3])}), path)
    kt = keyed_table(path, ["v"], "k", n_keys=8)
    assert kt.table.variables[0].categories == ("x", "y")
    assert kt.table.counts.tolist() == [1, 2] and kt.key_sums.tolist() == [1, 5]


@pytest.mark.parametrize(
    "names, key, n_keys, edit",
    [
        (["region", "ukey"], "ikey", 256, None),  # a float category: DuckDB's and pandas' own rules
        (["region"], "ikey", 100, None),  # keys out of range: DuckDB's message
        (["region"], "ikey", None, None),  # integer keys without n_keys
        (["region"], "region", 256, None),  # a text key
        (["region"], "nokey", 256, None),  # an unknown column
        (["region"], "ikey", 256, "null"),  # a missing category
        (["region"], "ukey", None, "nan"),  # a NaN key
    ],
)
def test_falls_back_where_duckdb_must_read(records, tmp_path, names, key, n_keys, edit):
    df = records.copy()
    if edit == "null":
        df.loc[5, "region"] = None
    if edit == "nan":
        df.loc[5, "ukey"] = np.nan
    path = tmp_path / "r.parquet"
    df.to_parquet(path, index=False)
    assert aggregate_parquet_codes(path, names, key, n_keys=n_keys) is None


def test_not_a_parquet_file(records, tmp_path):
    csv = tmp_path / "r.csv"
    records.to_csv(csv, index=False)
    assert aggregate_parquet_codes(csv, ["region"], "ikey", n_keys=256) is None
    assert aggregate_parquet_codes(records, ["region"], "ikey", n_keys=256) is None


def test_numbers_as_text_sort_by_value(tmp_path):
    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"v": ["10", "2", "1", "2"]}), path)
    kt = keyed_table(path, ["v"])
    assert kt.table.variables[0].categories == ("1", "2", "10") and kt.table.counts.tolist() == [1, 2, 1]


def test_values_first_seen_in_later_row_groups(tmp_path):
    """Each row group adds categories of its own: the groups' cells merge over the final dictionaries."""
    rng = np.random.default_rng(2)
    n = 3000
    df = pd.DataFrame({
        "a": np.where(np.arange(n) < 1000, "x", rng.choice(["y", "z", "x"], n)),
        "b": np.where(np.arange(n) < 2000, rng.choice(["p", "q"], n), rng.choice(["r", "p"], n)),
        "k": rng.random(n),
    })
    path = tmp_path / "g.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=1000)
    assert _coded(path, ["a", "b"], "k", None) == _duckdb(path, ["a", "b"], "k", None)


def test_running_sums_over_row_groups_of_the_same_cells(tmp_path):
    """Row groups with the same categories add into one set of running sums; a category first seen in the last
    group closes them and starts another: counts, count column and key sums as DuckDB's."""
    rng = np.random.default_rng(5)
    n = 4000
    df = pd.DataFrame({
        "a": np.where(np.arange(n) < 3000, rng.integers(0, 7, n), rng.integers(0, 9, n)),
        "b": rng.choice(["p", "q", "r"], n),
        "ikey": rng.integers(0, 256, n),
    })
    path = tmp_path / "s.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=500)
    assert pq.ParquetFile(path).num_row_groups == 8
    assert _coded(path, ["a", "b"], "ikey", 256) == _duckdb(path, ["a", "b"], "ikey", 256)
    stable = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(df.iloc[:3000], preserve_index=False), stable, row_group_size=500)
    assert _coded(stable, ["a", "b"], "ikey", 256) == _duckdb(stable, ["a", "b"], "ikey", 256)


@pytest.mark.parametrize("block, n_keys", [(37, 256), (2000, 2**33)])  # keys packed beside the records, or apart
@pytest.mark.parametrize("key", ["ikey", "ukey", None])
def test_blocks_within_a_row_group(records, tmp_path, monkeypatch, key, block, n_keys):
    """Row groups crossed in blocks of rows that do not divide them: the same cells, counts and key sums as
    DuckDB's, with integer keys packed beside the records into one weight, or (keys too large) summed apart."""
    import cellsafe.io._coded as coded

    monkeypatch.setattr(coded, "_MIN_BLOCK", block)
    monkeypatch.setattr(coded, "_MAX_BLOCK", block)
    assert (coded._packing_shift(block, n_keys) is None) == (n_keys > 256)
    df = records.assign(big=lambda d: d["ikey"] * 30_000_000, num=lambda d: d["num"] + 1000)
    key = "big" if key == "ikey" and n_keys > 256 else key
    path = tmp_path / "b.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=4999)
    names = ["region", "num", "age"]
    nk = n_keys if key in ("ikey", "big") else None
    assert _coded(path, names, key, nk) == _duckdb(path, names, key, nk)


def test_blocks_across_unaligned_chunks(records, tmp_path, monkeypatch):
    """An Arrow table whose columns are chunked at different rows, crossed in blocks that cut the chunks: the same
    cells as the Parquet file of the same records."""
    import cellsafe.io._coded as coded
    from cellsafe.io._coded_frames import aggregate_frame_codes

    monkeypatch.setattr(coded, "_MIN_BLOCK", 53)
    monkeypatch.setattr(coded, "_MAX_BLOCK", 53)
    table = pa.Table.from_pandas(records[["region", "num", "ikey"]], preserve_index=False)
    cuts = {"region": [100, 7000], "num": [1234], "ikey": [9, 20_000]}
    chunked = pa.table({c: pa.chunked_array([table.column(c).combine_chunks().slice(a, b - a)
                                             for a, b in zip([0, *cuts[c]], [*cuts[c], table.num_rows])])
                        for c in table.column_names})
    assert [chunked.column(c).num_chunks for c in ("region", "num", "ikey")] == [3, 2, 3]
    res = aggregate_frame_codes(chunked, ["region", "num"], "ikey", n_keys=256)
    sizes = [len(d) for d in res.dictionaries]
    cells = [[d[i] for d, i in zip(res.dictionaries, row)] for row in np.column_stack(np.unravel_index(res.index, sizes))]
    path = tmp_path / "c.parquet"
    pq.write_table(table, path)
    assert (_by_cell(None, cells, res.counts, res.key_sums), True) == _duckdb(path, ["region", "num"], "ikey", 256)


@pytest.mark.parametrize("dtype", ["i1", "i2", "i8", "u1", "u8"])
def test_integer_keys_out_of_range_are_refused(dtype):
    """Keys outside 0..n_keys - 1 leave the shortcut (DuckDB's path says which), whatever their integer type."""
    from cellsafe.io._coded import _integer_keys

    info = np.iinfo(dtype)
    for n_keys in (2, 100, 256, 2**40):
        inside = np.array([0, min(n_keys - 1, info.max)], dtype=dtype)
        assert _integer_keys([inside], n_keys) is inside
        for bad in (info.min, -1, n_keys, info.max):
            if info.min <= bad <= info.max and not 0 <= bad < n_keys:
                assert _integer_keys([np.array([0, bad], dtype=dtype)], n_keys) is None, (bad, n_keys)
