"""aggregate_with_keys: counts and exact key sums per distinct cell in one DuckDB pass, bad keys refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.io import FLOAT_KEY_BITS, aggregate_with_keys


@pytest.fixture(scope="module")
def records():
    rng = np.random.default_rng(5)
    n = 20_000
    return pd.DataFrame(
        {
            "region": rng.choice(["N", "S", "E", "W"], n),
            "age": rng.integers(0, 7, n),
            "ikey": rng.integers(0, 256, n),
            # keys near 1 make float sums lose low bits: the exact sum must not
            "ukey": np.where(rng.random(n) < 0.5, rng.random(n), 1.0 - rng.random(n) * 1e-12),
        }
    )


def _reference(df, names, fixed, modulus):
    """Pure-numpy reference: per distinct cell, count and Python-integer key sum modulo ``modulus``."""
    cells = {}
    keys = df[names].astype(str).agg("|".join, axis=1).to_numpy()
    order = np.argsort(keys, kind="stable")
    ks, fx = keys[order], fixed[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    ends = np.r_[starts[1:], ks.shape[0]]
    for a, b in zip(starts, ends):
        cells[ks[a]] = (b - a, sum(int(x) for x in fx[a:b]) % modulus)
    return cells


def _as_dict(res, names):
    keys = res.cells[names].astype(str).agg("|".join, axis=1).to_numpy()
    return {k: (int(c), int(s)) for k, c, s in zip(keys, res.counts, res.key_sums)}


def test_integer_keys_match_numpy_reference(records, tmp_path):
    ref = _reference(records, ["region", "age"], records["ikey"].to_numpy(), 256)
    res = aggregate_with_keys(records, ["region", "age"], "ikey", n_keys=256)
    assert res.integer_keys is True and res.key_sums.dtype == np.uint64
    assert _as_dict(res, ["region", "age"]) == ref
    # the same from a Parquet file and from a CSV file
    for path in (tmp_path / "r.parquet", tmp_path / "r.csv"):
        (records.to_parquet if path.suffix == ".parquet" else records.to_csv)(path, index=False)
        assert _as_dict(aggregate_with_keys(path, ["region", "age"], "ikey", n_keys=256), ["region", "age"]) == ref


def test_uniform_keys_are_summed_exactly(records, tmp_path):
    u = records["ukey"].to_numpy()
    fixed = np.floor(u * 2.0**FLOAT_KEY_BITS).astype(np.uint64)
    ref = _reference(records, ["region"], fixed, 2**FLOAT_KEY_BITS)
    path = tmp_path / "u.parquet"
    records.to_parquet(path, index=False)
    res = aggregate_with_keys(path, ["region"], "ukey")
    assert res.integer_keys is False
    assert _as_dict(res, ["region"]) == ref
    # a float sum would not be exact here: the fractional parts differ in the last bits
    naive = records.groupby("region")["ukey"].sum().to_numpy()
    exact = np.array([ref[r][1] for r in sorted(ref)], dtype=np.float64) / 2.0**FLOAT_KEY_BITS
    assert np.any(np.modf(naive)[0] != exact)


def test_counts_only_without_key(records):
    res = aggregate_with_keys(records, ["age"], None)
    assert res.key_sums is None and res.integer_keys is None
    got = dict(zip(res.cells["age"].tolist(), res.counts.tolist()))
    assert got == records["age"].value_counts().to_dict()


@pytest.mark.parametrize(
    ("values", "n_keys", "match"),
    [
        ([3, None, 5], 256, r"record key column 'k' of '.*bad\.parquet' has missing value\(s\), the first in data row 2"),
        ([0.1, np.nan, 0.3], None, r"record key column 'k' of '.*bad\.parquet' has NaN value\(s\), the first in data row 2"),
        ([3, 256, 5], 256, r"must hold integers in 0\.\.255 .* Got 256 in data row 2"),
        ([3, -1, 5], 256, r"must hold integers in 0\.\.255 .* Got -1 in data row 2"),
        ([0.1, 0.2, 1.0], None, r"uniform numbers in \[0, 1\) .* Got 1\.0 in data row 3"),
        ([0.1, -0.2, 0.5], None, r"uniform numbers in \[0, 1\) .* Got -0\.2 in data row 2"),
    ],
)
def test_bad_keys_refused_with_file_and_column(values, n_keys, match, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    # pyarrow keeps a NaN a NaN (pandas would write it as a missing value)
    keys = pa.array(values, type=pa.int64() if n_keys else pa.float64(), from_pandas=False)
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"a": ["x", "y", "x"], "k": keys}), path)
    with pytest.raises(DataError, match=match):
        aggregate_with_keys(path, ["a"], "k", n_keys=n_keys)


def test_bad_input(tmp_path, records):
    with pytest.raises(DataError, match="record key column 'nokey' is not in the data"):
        aggregate_with_keys(records, ["region"], "nokey", n_keys=256)
    with pytest.raises(DataError, match="unknown variable 'nope'"):
        aggregate_with_keys(records, ["nope"], "ikey", n_keys=256)
    with pytest.raises(InvalidArgumentError, match="ONS-layout ptable"):
        aggregate_with_keys(records, ["region"], "ikey")
    with pytest.raises(DataError, match="must hold numbers"):
        aggregate_with_keys(records, ["age"], "region", n_keys=256)
    with pytest.raises(InvalidArgumentError, match="'n_keys' parameter"):
        aggregate_with_keys(records, ["age"], "ikey", n_keys=0)
    df = pd.DataFrame({"a": ["x", None, "y"], "k": [1, 2, 3]})
    with pytest.raises(DataError, match=r"variable 'a' has 1 missing value\(s\) in the data, the first in data row 2"):
        aggregate_with_keys(df, ["a"], "k", n_keys=256)
