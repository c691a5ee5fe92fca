"""The largest contributions of each published cell equal a plain ranking of every contribution.

:func:`cellsafe.published.top_contributions` ranks only the entries that can reach a published
cell's first ``n``; here it is checked, on random small magnitude tables with holdings spread over
several inner cells, tied values and empty cells, against the definition written as loops over the
published cells: sum each contributor's values over the inner cells the cell adds up, sort by value
(largest first, ties by the smaller contributor number), keep the first ``n``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from cellsafe.exceptions import InvalidArgumentError
from cellsafe.published import magnitude_table, top_contributions
from cellsafe.published._magnitude import _candidates


def _plain_ranking(X, inner_row, contributor, values, n):
    """Top ``n`` contributions, contributor counts and largest contributor, one published cell at a time."""
    X = sp.csc_matrix(X)
    n_pub = X.shape[1]
    top = np.zeros((n_pub, n))
    count = np.zeros(n_pub, dtype=np.int64)
    largest = np.full(n_pub, -1, dtype=np.int64)
    for j in range(n_pub):
        rows = set(X.indices[X.indptr[j]:X.indptr[j + 1]].tolist())
        sums: dict[int, float] = {}
        for r, c, v in zip(inner_row.tolist(), contributor.tolist(), values.tolist()):
            if r in rows:
                sums[c] = sums.get(c, 0.0) + v
        ranked = sorted(sums.items(), key=lambda cv: (-cv[1], cv[0]))
        count[j] = len(ranked)
        for k, (c, v) in enumerate(ranked[:n]):
            top[j, k] = v
        if ranked:
            largest[j] = ranked[0][0]
    return top, count, largest


def _random_table(rng, duplicates=False):
    """A random inner x published pattern (with a grand total and empty columns) and contributions."""
    n_inner = int(rng.integers(1, 25))
    n_pub = int(rng.integers(1, 15))
    pattern = rng.random((n_inner, n_pub)) < rng.uniform(0.1, 0.6)
    pattern[:, 0] = True  # a grand total over every inner cell
    X = sp.csr_matrix(pattern.astype(np.float64))
    n_entries = int(rng.integers(0, 150))
    row = rng.integers(0, n_inner, n_entries)
    n_holdings = int(rng.integers(1, 6))
    # a few holdings spread over several inner cells, the rest contributors of one entry each
    is_holding = rng.random(n_entries) < rng.uniform(0.0, 0.5)
    contributor = np.where(is_holding, rng.integers(0, n_holdings, n_entries), n_holdings + np.arange(n_entries))
    if not duplicates:
        pairs = np.unique(np.c_[row, contributor], axis=0).reshape(-1, 2)  # one entry per (inner cell, contributor)
        row, contributor = pairs[:, 0], pairs[:, 1]
    # shuffle contributor numbers so that holdings are not always the smallest ones
    relabel = rng.permutation(int(contributor.max()) + 1 if contributor.size else 1)
    contributor = relabel[contributor]
    order = rng.permutation(row.size)
    row, contributor = row[order], contributor[order]
    # few distinct values (and zeros): ties within inner cells and between holdings and single contributors
    values = rng.integers(0, 5, row.size).astype(np.float64) * rng.choice([1.0, 2.5])
    return X, row, contributor, values


@pytest.mark.parametrize("seed", range(60))
def test_equals_a_plain_ranking_of_every_contribution(seed):
    rng = np.random.default_rng([2026, seed])
    X, row, contributor, values = _random_table(rng, duplicates=seed % 5 == 4)
    n = int(rng.integers(1, 5))
    top, count, largest = top_contributions(X, row, contributor, values, n=n, ids=True)
    want_top, want_count, want_largest = _plain_ranking(X, row, contributor, values, n)
    assert_array_equal(top, want_top)
    assert_array_equal(count, want_count)
    assert_array_equal(largest, want_largest)
    plain = top_contributions(X, row, contributor, values, n=n)
    assert len(plain) == 2
    assert_array_equal(plain[0], want_top)
    assert_array_equal(plain[1], want_count)


def test_the_order_of_the_entries_changes_no_bit():
    """Holdings' parts are added in a fixed order, so shuffled entries (as DuckDB returns its groups) give
    the same sums to the last bit."""
    # (0.1 + 0.2) + 0.3 and (0.3 + 0.2) + 0.1 differ in the last bit
    X = sp.csr_matrix(np.ones((3, 1)))
    a = top_contributions(X, np.array([0, 1, 2]), np.zeros(3, dtype=np.int64), np.array([0.1, 0.2, 0.3]))[0]
    b = top_contributions(X, np.array([2, 1, 0]), np.zeros(3, dtype=np.int64), np.array([0.3, 0.2, 0.1]))[0]
    assert a[0, 0] == b[0, 0]
    rng = np.random.default_rng(5)
    X, row, contributor, _ = _random_table(rng)
    values = np.round(rng.lognormal(3, 2, row.size), 1)
    want = top_contributions(X, row, contributor, values, n=3, ids=True)
    for _ in range(5):
        o = rng.permutation(row.size)
        got = top_contributions(X, row[o], contributor[o], values[o], n=3, ids=True)
        for a, b in zip(got, want):
            assert_array_equal(a, b)


def test_ties_at_the_cut_keep_the_smallest_contributor_numbers():
    """Three single contributors tie in one inner cell: with n = 1 the kept one is the smallest number,
    whatever the order of the entries, and a holding of equal total ranks by its number too."""
    X = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0]]))
    row = np.array([0, 0, 0, 0, 1])
    contributor = np.array([9, 4, 7, 2, 2])
    values = np.array([5.0, 5.0, 5.0, 3.0, 2.0])
    for order in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]):
        top, count, largest = top_contributions(X, row[order], contributor[order], values[order], n=1, ids=True)
        # cell 0 adds inner cells 0 and 1: holding 2 has 3 + 2 = 5, tied with 4, 7 and 9
        assert top[:, 0].tolist() == [5.0, 5.0] and count.tolist() == [4, 4] and largest.tolist() == [2, 4]


def test_the_pruning_leaves_out_single_contributors_below_the_first_n():
    """The fast path ranks fewer entries than one per contribution (else it would be the slow one)."""
    rng = np.random.default_rng(3)
    row = np.repeat(np.arange(50), 40)
    contributor = np.arange(row.size)
    contributor[:100] = rng.integers(0, 10, 100)  # holdings
    pairs = np.unique(np.c_[row, contributor], axis=0)
    row, contributor = pairs[:, 0], pairs[:, 1]
    values = rng.lognormal(2, 1, row.size)
    keep, dropped = _candidates(row, contributor, values, 2, 50)
    assert keep.size < row.size / 5
    assert keep.size + dropped.sum() == row.size
    X = sp.csr_matrix(np.c_[np.ones(50), np.arange(50) % 2, np.arange(50) < 3])
    got = top_contributions(X, row, contributor, values, n=2, ids=True)
    for a, b in zip(got, _plain_ranking(X, row, contributor, values, 2)):
        assert_array_equal(a, b)


def test_magnitude_table_largest_contributor_with_holdings():
    """From records: firm f1 (second in both sectors) is the total's largest contributor once its parts add up."""
    import pandas as pd

    df = pd.DataFrame({"sector": ["a", "a", "b", "b", "b"], "firm": ["f1", "f2", "f1", "f3", "f4"],
                       "turnover": [30.0, 40.0, 30.0, 35.0, 1.0]})
    m = magnitude_table(df, ["sector"], "turnover", "sector", contributor="firm", n_top=2)
    got = {tuple(m.top[i].tolist()): (int(m.n_contributors[i]), int(m.largest[i])) for i in range(m.top.shape[0])}
    assert sorted(got) == [(35.0, 30.0), (40.0, 30.0), (60.0, 40.0)]
    assert [got[t][0] for t in [(60.0, 40.0), (40.0, 30.0), (35.0, 30.0)]] == [4, 2, 3]
    # the total's largest (f1) is neither sector's largest (f2 and f3)
    assert len({v[1] for v in got.values()}) == 3 and min(v[1] for v in got.values()) >= 0


def test_bad_entries_are_refused():
    X = sp.csr_matrix(np.ones((2, 1)))
    with pytest.raises(InvalidArgumentError, match="contributor"):
        top_contributions(X, np.array([0]), np.array([-1]), np.array([1.0]))
    with pytest.raises(InvalidArgumentError, match="inner_row"):
        top_contributions(X, np.array([2]), np.array([0]), np.array([1.0]))
    with pytest.raises(InvalidArgumentError, match="one length"):
        top_contributions(X, np.array([0, 1]), np.array([0]), np.array([1.0]))
