"""Many marginals in one DuckDB pass on public codes (io.aggregate_marginals)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from cellsafe.exceptions import DataError
from cellsafe.io import ColumnCoding, aggregate_marginals


def _records(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "sex": rng.choice(["F", "M"], n),
        "region": rng.choice(["N", "S", "E", "W"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "age": rng.integers(0, 100, n),
        "income": np.round(rng.gamma(2.0, 15_000.0, n), 2),
    })


CODINGS = [
    ColumnCoding("sex", categories=("F", "M")),
    ColumnCoding("region", categories=("N", "S", "E", "W", "X")),  # X: public, never seen
    ColumnCoding("age", edges=(0, 18, 40, 65, 100)),
    ColumnCoding("income", edges=(0, 10_000, 30_000, 1e7)),
]


def _expected(df: pd.DataFrame, attrs) -> np.ndarray:
    codes = np.column_stack([
        pd.Categorical(df["sex"], categories=["F", "M"]).codes,
        pd.Categorical(df["region"], categories=["N", "S", "E", "W", "X"]).codes,
        np.clip(np.searchsorted([0, 18, 40, 65, 100], df["age"], side="right") - 1, 0, 3),
        np.clip(np.searchsorted([0, 10_000, 30_000, 1e7], df["income"], side="right") - 1, 0, 2),
    ])
    sizes = [2, 5, 4, 3]
    flat = np.ravel_multi_index(tuple(codes[:, a] for a in attrs), [sizes[a] for a in attrs])
    return np.bincount(flat, minlength=int(np.prod([sizes[a] for a in attrs]))).reshape([sizes[a] for a in attrs])


def test_all_marginals_up_to_three_ways_from_a_frame_csv_and_parquet(tmp_path):
    df = _records()
    cliques = [c for k in (1, 2, 3) for c in itertools.combinations(range(4), k)] + [()]
    csv, pq = tmp_path / "r.csv", tmp_path / "r.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(pq)
    for source in (df, csv, pq):
        res = aggregate_marginals(source, CODINGS, cliques)
        assert res.n_outside == 0
        for c, got in zip(cliques[:-1], res.marginals):
            assert_array_equal(got, _expected(df, c))
        assert int(res.marginals[-1].sum()) == len(df)


def test_right_edge_is_in_the_last_bin_and_outside_values_are_refused_or_dropped():
    df = pd.DataFrame({"sex": ["F", "M", "F", "M", "F"], "region": ["N", "N", "Q", "S", "S"],
                       "age": [100, 0, 5, 101, None], "income": [1.0, 2.0, 3.0, 4.0, 5.0]})
    with pytest.raises(DataError, match="'region' has value 'Q' outside the public categories"):
        aggregate_marginals(df, CODINGS, [(0,)])
    res = aggregate_marginals(df, CODINGS, [(2,), (1,)], outside="drop")
    assert res.n_outside == 3  # 'Q', 101 and the missing age
    assert_array_equal(res.marginals[0], [1, 0, 0, 1])
    assert_array_equal(res.marginals[1], [2, 0, 0, 0, 0])
    with pytest.raises(DataError, match="'age' has value '101.0' outside the public bins from 0 to 100"):
        aggregate_marginals(df[df.region != "Q"], CODINGS, [(0,)])


def test_frequency_column_and_unknown_column(tmp_path):
    df = pd.DataFrame({"sex": ["F", "M"], "region": ["N", "S"], "age": [3, 50], "income": [10.0, 20.0], "n": [7, 5]})
    res = aggregate_marginals(df, CODINGS, [(0, 1)], count="n")
    assert res.marginals[0][0, 0] == 7 and res.marginals[0][1, 1] == 5
    with pytest.raises(DataError, match="unknown variable 'nope'"):
        aggregate_marginals(df, [ColumnCoding("nope", categories=("a",))], [(0,)])
