"""table_metrics from the cells of each (original, released) pair equals the same metrics computed cell by cell."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import trim_mean

from cellsafe import CountTable, Variable
from cellsafe.engines import cell_pairs, pair_counts
from cellsafe.metrics import table_metrics, table_metrics_from_pairs
from cellsafe.table import align_counts


def _tables(seed, m):
    rng = np.random.default_rng(seed)
    v = [Variable("a", range(40)), Variable("b", range(30))]
    def one():
        idx = np.unique(rng.integers(0, 1200, 500))
        return CountTable(v, idx, rng.integers(1, 20, idx.size))
    return one(), [one() for _ in range(m)]


def _reference(original, released, trim):
    """The per-cell formulas: one row per implicate."""
    n = original.n_cells - original.n_structural_zeros
    rows = []
    for s in released:
        idx, (f, g) = align_counts([original.index, s.index], [original.counts, s.counts])
        n_zz = n - idx.size
        nz = f > 0
        pct = 100.0 * (g[nz] - f[nz]) / f[nz]
        hd = math.sqrt(0.5 * float(np.sum((np.sqrt(f) - np.sqrt(g)) ** 2)))
        ok = np.abs(g[nz] - f[nz]) <= f[nz] * 0.05 + 1e-9 * np.maximum(f[nz], 1.0)
        rows.append({
            "squared_error": float(np.sum((g - f) ** 2.0)),
            "hellinger_distance": hd,
            "trimmed_mean_pct_diff": float(trim_mean(pct, trim)),
            "tau3(1)": float(np.count_nonzero((f == 1) & (g == 1)) / np.count_nonzero(f == 1)),
            "tau1(0)": float((np.count_nonzero(g == 0) + n_zz) / n),
            "within_all(5)": float((ok.sum() + n_zz) / n),
            "total": float(g.sum()),
        })
    _, aligned = align_counts([original.index] + [s.index for s in released], [original.counts] + [s.counts for s in released])
    se_mean = float(np.sum((np.mean(aligned[1:], axis=0) - aligned[0]) ** 2))
    return rows, se_mean


@pytest.mark.parametrize("seed, m, trim", [(1, 1, 0.1), (2, 3, 0.0), (3, 4, 0.25)])
def test_metrics_from_pairs_equal_the_per_cell_formulas(seed, m, trim):
    original, released = _tables(seed, m)
    got = table_metrics(original, released, k=[0, 1], p=[5], trim=trim)
    rows, se_mean = _reference(original, released, trim)
    for i, row in enumerate(rows, start=1):
        for name, value in row.items():
            assert got.per_implicate.loc[i, name] == pytest.approx(value, rel=1e-12), name
    assert got.squared_error_of_mean == pytest.approx(se_mean, rel=1e-12)


def test_pairs_are_sorted_distinct_and_weighted():
    f = np.array([3, 0, 3, 1, 3, 0])
    g = np.array([2, 5, 2, 1, 0, 5])
    a, b, c = pair_counts(f, g)
    assert a.tolist() == [0, 1, 3, 3] and b.tolist() == [5, 1, 0, 2] and c.tolist() == [2, 1, 1, 2]
    a2, b2, c2 = pair_counts(a, b, c)  # distinct pairs with their cells, as Spark returns them
    assert (a2.tolist(), b2.tolist(), c2.tolist()) == (a.tolist(), b.tolist(), c.tolist())
    big = pair_counts(np.array([2**40, 0]), np.array([2**40, 1]))  # a key beyond 2^62: the lexsort path
    assert big[0].tolist() == [0, 2**40] and big[2].tolist() == [1, 1]


def test_the_same_pairs_give_the_same_metrics():
    original, released = _tables(5, 2)
    pairs = cell_pairs(original, released)
    a = table_metrics_from_pairs(pairs).to_dict()
    b = table_metrics(original, released).to_dict()
    assert a == b
