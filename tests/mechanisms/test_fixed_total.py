"""The two-pass block scheme of the fixed-total synthesizers: kernels, driver, block order."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy import stats

from cellsafe import CountTable, Variable
from cellsafe._random import as_seed_sequence, n_blocks
from cellsafe.mechanisms import (
    MultinomialDirichletSynthesizer as MD,
    PoissonGammaMultinomialSynthesizer as PM,
    PoissonGammaSynthesizer as PG,
)
from cellsafe.mechanisms._fixed_total import split_total


@lru_cache(maxsize=1)
def _two_block_table() -> CountTable:
    # 1.2M cells: two blocks of 2**20 flat indices; all but 300 cells in each block are
    # structural zeros, so the synthesizers' domains stay small and the tests fast
    v = [Variable("a", range(1200), public=True), Variable("b", range(1000), public=True)]
    possible = np.zeros(1_200_000, dtype=bool)
    possible[:300] = possible[-300:] = True
    structural = np.flatnonzero(~possible)
    return CountTable(v, [0, 5, 170, 1_199_800, 1_199_999], [3, 4, 2, 6, 1], structural_zeros=structural)


def _by_hand(mech, table, rng, implicate, order):
    """One implicate from the public kernels, blocks visited in ``order``, parts put back in block order."""
    root = as_seed_sequence(rng)
    blocks = list(mech.gamma_blocks(table))
    total = int(table.total)
    if isinstance(mech, PG):
        attempts = range(0, 8)
        while True:
            sums = {i: mech.block_weight_sums(blocks[i], root, implicate, attempts) for i in order}
            j = mech.accept_attempts(sum(sums.values()), attempts, total, root, implicate)
            if j is not None:
                break
            attempts = range(attempts.stop, attempts.stop + 8)
        block_sums = [sums[i][j - attempts.start] for i in range(len(blocks))]
    else:
        j = 0
        sums = {i: mech.block_weight_sums(blocks[i], root, implicate)[0] for i in order}
        block_sums = [sums[i] for i in range(len(blocks))]
    events = mech.split_total(total, block_sums, root, implicate)
    parts = {i: mech.release_block(blocks[i], int(events[i]), root, implicate, j) for i in order}
    idx = np.concatenate([parts[i][0] for i in range(len(blocks))])
    cnt = np.concatenate([parts[i][1] for i in range(len(blocks))])
    return idx, cnt


@pytest.mark.parametrize("mech", [MD(0.05), PG(0.5, 2.0), PM(0.5, 2.0)], ids=["dirichlet", "pg", "pg-multinomial"])
def test_block_order_and_one_block_at_a_time_give_the_same_release(mech):
    table = _two_block_table()
    assert n_blocks(table.n_cells) == 2
    released = mech.sample(table, m=2, rng=7)
    for k, z in enumerate(released):
        assert z.total == table.total
        for order in ([0, 1], [1, 0]):
            idx, cnt = _by_hand(mech, table, 7, k, order)
            assert_array_equal(idx, z.index)
            assert_array_equal(cnt, z.counts)
    assert released[0].equals(mech.sample(table, m=1, rng=7)[0])
    assert not released[0].equals(released[1])


@pytest.mark.parametrize("mech", [MD(0.05), PG(0.5, 2.0), PM(0.5, 2.0)], ids=["dirichlet", "pg", "pg-multinomial"])
def test_implicates_one_at_a_time_are_the_tables_of_sample(mech):
    import types

    table = _two_block_table()
    released = mech.sample(table, m=3, rng=11)
    drawn = mech.implicates(table, 3, rng=11)
    assert isinstance(drawn, types.GeneratorType)  # lazy: one implicate held at a time
    for expected, z in zip(released, drawn, strict=True):
        assert z.equals(expected)
    assert next(mech.implicates(table, 1, rng=11, first=2)).equals(released[2])


def test_pg_acceptance_does_not_depend_on_the_batch():
    table = _two_block_table()
    mech = PG(0.5, 2.0)
    root = as_seed_sequence(3)
    blocks = mech.gamma_blocks(table)
    sums = sum(mech.block_weight_sums(b, root, 0, range(12)) for b in blocks)
    whole = mech.accept_attempts(sums, range(12), int(table.total), root, 0)
    one_by_one = next(
        j for j in range(12) if mech.accept_attempts(sums[j : j + 1], [j], int(table.total), root, 0) is not None
    )
    assert whole == one_by_one


def test_split_total_is_multinomial():
    g = np.random.default_rng(4)
    w = np.array([0.5, 0.0, 2.0, 1.5, 1e-3])
    draws = np.array([split_total(20, w, g) for _ in range(4000)])
    assert (draws.sum(axis=1) == 20).all() and (draws[:, 1] == 0).all()
    p = w / w.sum()
    mean, sd = draws.mean(axis=0), np.sqrt(20 * p * (1 - p) / draws.shape[0])
    assert np.all(np.abs(mean - 20 * p) <= 5 * sd + 1e-12)
    # the first block's count is Bin(20, p_0)
    obs = np.bincount(draws[:, 0], minlength=21)
    exp = stats.binom.pmf(np.arange(21), 20, p[0]) * draws.shape[0]
    keep = exp > 5
    obs = np.r_[obs[keep], obs[~keep].sum()]
    exp = np.r_[exp[keep], exp[~keep].sum()]
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_md_two_blocks_follow_the_dirichlet_multinomial_means():
    # E[z_i] = z. (y_i + alpha) / (y. + K' alpha) over the K' non-structural cells, across both blocks
    table = _two_block_table()
    alpha = 0.01
    k_free = table.n_cells - table.n_structural_zeros
    z = MD(alpha).sample(table, m=2000, rng=11)
    got = np.array([t.lookup(table.index) for t in z]).astype(float)
    denominator = table.total + k_free * alpha
    expected = table.total * (table.counts + alpha) / denominator
    w = (table.counts + alpha) / denominator
    # Dirichlet-multinomial variance: n w (1 - w) (n + A) / (1 + A), A the sum of the parameters
    var = table.total * w * (1 - w) * (table.total + denominator) / (1 + denominator)
    assert np.all(np.abs(got.mean(axis=0) - expected) <= 5 * np.sqrt(var / got.shape[0]))
    released = np.concatenate([t.index for t in z])
    sz = table.structural_zeros
    assert not (sz[np.minimum(np.searchsorted(sz, released), sz.size - 1)] == released).any()
    # the 595 empty non-structural cells share z. alpha K'' / (y. + K' alpha) events on average
    empty = np.array([t.total - t.lookup(table.index).sum() for t in z], dtype=float)
    mean_empty = table.total * alpha * (k_free - table.nnz) / denominator
    assert abs(empty.mean() - mean_empty) <= 5 * empty.std() / math.sqrt(empty.size)
