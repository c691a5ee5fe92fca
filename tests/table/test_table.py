"""CountTable: construction, invariants, sparse views and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal, assert_equal

from cellsafe import CountTable, DataError, InvalidArgumentError, TableTooLargeError, Variable
from cellsafe.table import align_counts, ravel, sorted_union, sorted_unique, unravel

ADULT = Path(__file__).resolve().parents[1] / "reference" / "adult"


@pytest.fixture
def people() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sex": ["F", "M", "F", "F", "M", "M", "F"],
            "age": ["old", "young", "old", "young", "young", "young", "mid"],
            "region": ["N", "S", "N", "N", "S", "N", "S"],
        }
    )


def test_from_frame_counts_rows(people):
    t = CountTable.from_frame(people, ["sex", "age", "region"])
    assert t.shape == (2, 3, 2)
    assert t.n_cells == 12
    assert t.total == 7
    assert t.variables[1] == Variable("age", ["mid", "old", "young"])  # sorted from the data
    f = t.to_frame()
    assert_equal(int(f["count"].sum()), 7)
    row = f[(f.sex == "F") & (f.age == "old") & (f.region == "N")]
    assert_equal(row["count"].tolist(), [2])
    assert list(f.columns) == ["sex", "age", "region", "count"]


def test_index_sorted_unique_and_row_major(people):
    t = CountTable.from_frame(people, ["sex", "age", "region"])
    assert np.all(np.diff(t.index) > 0)
    codes = t.codes()
    assert_array_equal(ravel(codes, t.shape), t.index)
    assert_array_equal(np.ravel_multi_index(codes.T, t.shape), t.index)


def test_from_frame_with_count_column_sums_duplicates():
    df = pd.DataFrame({"a": ["x", "y", "x"], "b": [1, 2, 1], "n": [3, 0, 4]})
    t = CountTable.from_frame(df, ["a", "b"], count="n")
    assert t.total == 7
    assert t.nnz == 1  # the zero row is a random zero, not stored
    assert t.cell_sizes().to_dict() == {0: 3, 7: 1}


def test_numeric_strings_sort_by_value():
    df = pd.DataFrame({"age": ["10", "2", "3", "10"], "band": ["b", "a", "c", "b"]})
    t = CountTable.from_frame(df, ["age", "band"])
    assert t.variables[0].categories == ("2", "3", "10")
    assert t.variables[1].categories == ("a", "b", "c")


def test_explicit_categories_keep_order_and_empty_levels():
    df = pd.DataFrame({"sex": ["M", "F"]})
    t = CountTable.from_frame(df, {"sex": ["M", "F", "Unknown"]})
    assert t.variables[0].categories == ("M", "F", "Unknown")
    assert_array_equal(t.dense(), [1, 1, 0])
    t2 = CountTable.from_frame(df, [Variable("sex", ["F", "M"])])
    assert_array_equal(t2.dense(), [1, 1])


def test_dense_margin_and_cell_sizes_agree_with_numpy(people):
    t = CountTable.from_frame(people, ["sex", "age", "region"])
    d = t.dense()
    assert_array_equal(t.margin(["age"]).dense(), d.sum(axis=(0, 2)))
    assert_array_equal(t.margin(["region", "sex"]).dense(), d.sum(axis=1).T)
    vals, freq = np.unique(d, return_counts=True)
    assert t.cell_sizes().to_dict() == dict(zip(vals.tolist(), freq.tolist()))
    assert int(t.cell_sizes().sum()) == t.n_cells


def test_to_microdata_round_trip(people):
    t = CountTable.from_frame(people, ["sex", "age", "region"])
    micro = t.to_microdata(rng=1)
    assert len(micro) == 7
    assert CountTable.from_frame(micro, list(t.variables)).equals(t)


def test_to_frame_with_zeros(people):
    t = CountTable.from_frame(people, ["sex", "age"])
    f = t.to_frame(zeros=True)
    assert len(f) == t.n_cells
    assert_array_equal(f["count"].to_numpy(), t.dense().ravel())


def test_structural_zeros_are_kept_and_checked(people):
    sz = pd.DataFrame({"sex": ["M"], "age": ["old"]})
    t = CountTable.from_frame(people, ["sex", "age"], structural_zeros=sz)
    assert t.n_structural_zeros == 1
    assert t.n_random_zeros == t.n_cells - t.nnz - 1
    assert t.cell_sizes().sum() == t.n_cells - 1
    bad = pd.DataFrame({"sex": ["F"], "age": ["old"]})
    with pytest.raises(DataError, match=r"structural zero but has count 2"):
        CountTable.from_frame(people, ["sex", "age"], structural_zeros=bad)
    # a margin cell is structural only when all its inner cells are
    assert t.margin(["age"]).n_structural_zeros == 0


def test_lookup_absent_cells_are_zero(people):
    t = CountTable.from_frame(people, ["sex", "age", "region"])
    assert_array_equal(t.lookup(np.arange(t.n_cells)), t.dense().ravel())


def test_astronomical_table_stays_sparse():
    domain = json.loads((ADULT / "adult-domain.json").read_text())
    variables = [Variable(name, range(size)) for name, size in domain.items()]
    k = math.prod(domain.values())
    assert k > 6e17
    t = CountTable.from_microdata(ADULT / "adult.csv.gz", variables)
    assert t.n_cells == k
    assert t.total == 48842
    sizes = t.cell_sizes()
    assert sizes.loc[0] == k - t.nnz
    assert int((sizes.index * sizes).sum()) == 48842
    with pytest.raises(TableTooLargeError, match="sparse form"):
        t.dense()
    m = t.margin(["sex", "race"])
    assert m.total == 48842 and m.shape == (domain["sex"], domain["race"])


def test_index_overflow_is_reported():
    variables = [Variable(f"v{i}", range(1000)) for i in range(7)]  # 1e21 cells
    with pytest.raises(TableTooLargeError, match="64-bit flat index"):
        CountTable(variables, [0], [1])


def test_from_microdata_file_matches_frame(tmp_path, people):
    csv = tmp_path / "people.csv"
    people.to_csv(csv, index=False)
    parquet = tmp_path / "people.parquet"
    people.to_parquet(parquet)
    expected = CountTable.from_frame(people, ["sex", "age"])
    assert CountTable.from_microdata(csv, ["sex", "age"]).equals(expected)
    assert CountTable.from_microdata(parquet, ["sex", "age"]).equals(expected)
    before = csv.read_bytes()
    CountTable.from_microdata(str(csv), ["sex", "age"])
    assert csv.read_bytes() == before  # inputs are never modified


def test_polars_and_pyarrow_frames(people):
    pa = pytest.importorskip("pyarrow")
    t = CountTable.from_frame(pa.Table.from_pandas(people), ["sex", "age"])
    assert t.equals(CountTable.from_frame(people, ["sex", "age"]))


@pytest.mark.parametrize(
    "frame, kwargs, error, match",
    [
        (pd.DataFrame({"a": [1]}), {"variables": ["b"]}, DataError, "unknown variable 'b'"),
        (pd.DataFrame({"a": []}), {"variables": ["a"]}, DataError, "no rows"),
        (pd.DataFrame({"a": ["x"], "n": [-3]}), {"variables": ["a"], "count": "n"}, DataError, "negative value -3 at row 0"),
        (pd.DataFrame({"a": ["x"], "n": [1.5]}), {"variables": ["a"], "count": "n"}, DataError, "non-integer value 1.5"),
        (pd.DataFrame({"a": ["x"], "n": [None]}, dtype=object), {"variables": ["a"], "count": "n"}, DataError, "missing value"),
        (pd.DataFrame({"a": ["x"], "n": ["lots"]}), {"variables": ["a"], "count": "n"}, DataError, "non-numeric"),
        (pd.DataFrame({"a": ["x", None]}), {"variables": ["a"]}, DataError, "missing value"),
        (pd.DataFrame({"a": ["x", "z"]}), {"variables": {"a": ["x", "y"]}}, DataError, "'z' at row 1"),
        (pd.DataFrame({"a": ["x"]}), {"variables": "a"}, InvalidArgumentError, "single string"),
        (pd.DataFrame({"a": ["x"]}), {"variables": ["a", "a"]}, InvalidArgumentError, "distinct"),
    ],
)
def test_bad_frames(frame, kwargs, error, match):
    with pytest.raises(error, match=match):
        CountTable.from_frame(frame, **kwargs)


@pytest.mark.parametrize(
    "content, kwargs, match",
    [
        ("a,b\nx,1\n", {"variables": ["c"]}, "unknown variable 'c'"),
        ("a,b\n", {"variables": ["a"]}, "no rows"),
        ("a,n\nx,2\ny,-1\n", {"variables": ["a"], "count": "n"}, "data row 2"),
        ("a,n\nx,2\ny,\n", {"variables": ["a"], "count": "n"}, "missing"),
        ("a,b\nx,1\n,2\n", {"variables": ["a"]}, "missing value"),
    ],
)
def test_bad_files(tmp_path, content, kwargs, match):
    path = tmp_path / "in.csv"
    path.write_text(content)
    with pytest.raises(DataError, match=match):
        CountTable.from_microdata(path, **kwargs)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        CountTable.from_microdata(tmp_path / "nope.csv", ["a"])
    odd = tmp_path / "data.xlsx"
    odd.write_text("x")
    with pytest.raises(DataError, match="cannot tell the format"):
        CountTable.from_microdata(odd, ["a"])


def test_table_is_immutable(people):
    t = CountTable.from_frame(people, ["sex"])
    with pytest.raises(ValueError):
        t.counts[0] = 99


def test_unravel_inverts_ravel():
    rng = np.random.default_rng(0)
    shape = (3, 5, 7, 2)
    codes = np.column_stack([rng.integers(0, s, 50) for s in shape])
    assert_array_equal(unravel(ravel(codes, shape), shape), codes)


# ---------------------------------------------------------------------- sort-based set operations and the fast paths
def test_sorted_unique_and_union_match_numpy():
    rng = np.random.default_rng(5)
    for n, hi in [(0, 10), (1, 10), (1000, 50), (5000, 2**62)]:
        x = rng.integers(0, hi, size=n)
        u, c = sorted_unique(x, return_counts=True)
        nu, nc = np.unique(x, return_counts=True)
        assert_equal(u, nu)
        assert_equal(c, nc)
        y = np.unique(rng.integers(0, hi, size=n // 2 + 1))
        assert_equal(sorted_union(np.unique(x), y), np.union1d(x, y))


@pytest.mark.parametrize("big", [False, True])
def test_margin_and_cell_sizes_on_both_paths(big):
    # dense accumulator (bincount) where the margin is small, sort otherwise; same numbers
    rng = np.random.default_rng(9)
    shape = (40, 30, 5000) if big else (6, 5, 4)
    variables = [Variable(f"v{j}", range(s)) for j, s in enumerate(shape)]
    k = math.prod(shape)
    # three (v0, v1) margin cells whose inner cells are all structural zeros, so they are too
    sz = (np.array([0, 7, 13])[:, None] * shape[2] + np.arange(shape[2])).ravel()
    cells = np.setdiff1d(np.unique(rng.integers(0, k, size=300)), sz)
    counts = rng.integers(1, 10**7 if big else 5, size=cells.size)
    t = CountTable(variables, cells, counts, sz)
    for names in (["v0", "v1"], ["v2"], ["v2", "v0"]):
        m = t.margin(names)
        codes = t.codes()[:, [t.names.index(n) for n in names]]
        keys = ravel(codes, [t.variables[t.names.index(n)].size for n in names])
        want_idx, inv = np.unique(keys, return_inverse=True)
        assert_equal(m.index, want_idx)
        assert_equal(m.counts, np.bincount(inv, weights=t.counts).astype(np.int64))
        assert m.counts.dtype == np.int64
        assert m.equals(CountTable(m.variables, m.index, m.counts, m.structural_zeros))
    assert_equal(t.margin(["v0", "v1"]).structural_zeros, [0, 7, 13])
    vals, freq = np.unique(t.counts, return_counts=True)
    sizes = t.cell_sizes()
    assert sizes.drop(0).to_dict() == dict(zip(vals.tolist(), freq.tolist()))
    assert int(sizes.sum()) == t.n_cells - t.n_structural_zeros


def test_from_sorted_cells_is_the_validated_table():
    t = CountTable([Variable("a", range(4)), Variable("b", range(3))], [0, 5, 7], [2, 1, 4], structural_zeros=[11])
    idx, cnt = np.array([1, 5, 10], dtype=np.int64), np.array([3, 1, 9], dtype=np.int64)
    fast = CountTable.from_sorted_cells(t, idx, cnt)
    assert fast.equals(t.with_counts(idx, cnt))
    assert_equal(fast.structural_zeros, [11])
    assert fast.variables is t.variables
    assert not fast.index.flags.writeable and not fast.counts.flags.writeable  # taken over, frozen
    empty = CountTable.from_sorted_cells(t, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert empty.nnz == 0 and empty.n_structural_zeros == 1


@pytest.mark.parametrize(
    "index, counts",
    [
        (np.array([1, 2], dtype=np.int32), np.array([1, 1])),  # not int64 flat indices
        (np.array([1, 2]), np.array([1])),  # misaligned
        (np.array([1, 12]), np.array([1, 1])),  # outside the table
        (np.array([1, 2]), np.array([1, 1], dtype=np.int32)),  # counts neither int64 nor float64
    ],
)
def test_from_sorted_cells_checks_what_is_cheap(index, counts):
    t = CountTable([Variable("a", range(4)), Variable("b", range(3))], [0], [1])
    with pytest.raises(AssertionError):
        CountTable.from_sorted_cells(t, index, counts)


def test_align_counts_matches_lookup():
    rng = np.random.default_rng(3)
    idx = [np.unique(rng.integers(0, 10**12, size=n)) for n in (0, 1, 500, 2000)]
    idx.append(idx[2][::3].copy())  # overlapping cells
    cnt = [rng.integers(1, 9, size=i.size) for i in idx]
    union, aligned = align_counts(idx, cnt)
    assert_equal(union, np.unique(np.concatenate(idx)))
    variables = [Variable("a", range(10**6)), Variable("b", range(10**6))]
    for i, c, a in zip(idx, cnt, aligned):
        assert_equal(a, CountTable(variables, i, c).lookup(union))
