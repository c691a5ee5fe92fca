"""SaturatedSynthesizer: exact invariants, agreement with the pmf, reproducibility, sparsity."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from scipy import stats

from cellsafe import CountTable, InvalidArgumentError, Variable
from cellsafe.distributions import NBI, PIG, Poisson
from cellsafe._random import as_seed_sequence, n_blocks
from cellsafe.mechanisms import table_blocks
from cellsafe.mechanisms._base import distinct_uniform as _distinct_uniform
from cellsafe.mechanisms._base import zero_rank_to_flat as _zero_rank_to_flat
from cellsafe.mechanisms.saturated import SaturatedSynthesizer, _PositiveZeroLaw

ADULT = Path(__file__).resolve().parents[1] / "reference" / "adult"


def _random_table(seed: int = 0, shape=(30, 20, 12), p_nonzero: float = 0.3, structural: int = 0) -> CountTable:
    rng = np.random.default_rng(seed)
    variables = [Variable(f"v{j}", range(s)) for j, s in enumerate(shape)]
    k = math.prod(shape)
    cells = np.flatnonzero(rng.random(k) < p_nonzero)
    counts = rng.geometric(0.3, size=cells.size)
    sz = None
    if structural:
        free = np.setdiff1d(np.arange(k), cells)
        sz = rng.choice(free, size=structural, replace=False)
    return CountTable(variables, cells, counts, sz)


@pytest.fixture(scope="module")
def esc():
    datasets = pytest.importorskip("cellsafe.datasets")
    if not hasattr(datasets, "esc_like"):
        pytest.skip("esc_like not available")
    return datasets.esc_like()


# ---------------------------------------------------------------------- reproducibility
@pytest.mark.slow
def test_same_rng_same_tables_and_block_order_does_not_matter():
    table = _random_table(shape=(60, 50, 400), p_nonzero=0.2, structural=50)  # 1.2M cells: two blocks
    assert n_blocks(table.n_cells) == 2
    synth = SaturatedSynthesizer(NBI(sigma=0.5), alpha=0.1)
    a = synth.sample(table, m=2, rng=7)
    b = synth.sample(table, m=2, rng=np.random.SeedSequence(7))
    root = as_seed_sequence(7)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.equals(y)
        # the per-block kernel, run on the blocks in reverse order, gives the same release
        parts = [synth.sample_block(blk, root, i) for blk in reversed(table_blocks(table, with_empty=True))]
        idx = np.concatenate([p[0] for p in reversed(parts)])
        cnt = np.concatenate([p[1] for p in reversed(parts)])
        assert x.equals(table.with_counts(idx, cnt))
    assert not a[0].equals(a[1])
    assert not a[0].equals(synth.sample(table, rng=8)[0])


@pytest.mark.parametrize("dist", [Poisson(), NBI(sigma=1.0)], ids=["poisson", "nbi"])
def test_without_released_zeros_the_table_is_what_the_block_kernel_gives(dist):
    # alpha 0 writes each block's positive draws straight into the release: the same cells as the per-block kernel,
    # cells drawn as 0 dropped, on a table of several blocks and structural zeros
    table = _random_table(shape=(40, 30, 1000), p_nonzero=0.05, structural=30)
    assert n_blocks(table.n_cells) == 2
    synth = SaturatedSynthesizer(dist)
    root = as_seed_sequence(3)
    for i, x in enumerate(synth.sample(table, m=2, rng=3)):
        parts = [synth.sample_block(blk, root, i) for blk in table_blocks(table)]
        idx, cnt = (np.concatenate([p[k] for p in parts]) for k in (0, 1))
        assert x.equals(table.with_counts(idx, cnt))
        assert x.nnz < table.nnz and x.counts.min() >= 1  # some cells were drawn as 0 and are not listed
        assert x.counts.flags.owndata and x.counts.size == x.nnz  # the spare room was given back


def test_generator_rng_is_consumed_reproducibly():
    table = _random_table()
    synth = SaturatedSynthesizer(Poisson())
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    first = synth.sample(table, rng=g1)[0]
    assert first.equals(synth.sample(table, rng=g2)[0])
    assert not synth.sample(table, rng=g1)[0].equals(first)


def test_sample_does_not_change_the_mechanism_or_the_table():
    table = _random_table()
    synth = SaturatedSynthesizer(PIG(sigma=2.0), alpha=0.05)
    before_params, before_counts = dict(vars(synth)), table.counts.copy()
    synth.sample(table, m=2, rng=1)
    assert vars(synth) == before_params
    assert_array_equal(table.counts, before_counts)


# ---------------------------------------------------------------------- exact invariants
@pytest.mark.parametrize(
    "synth",
    [
        SaturatedSynthesizer(Poisson()),
        SaturatedSynthesizer(NBI(sigma=1.0), alpha=0.5),
        SaturatedSynthesizer(PIG(sigma=1.0), zeros_to_ones=0.2),
    ],
    ids=repr,
)
def test_structural_zeros_never_change(synth):
    table = _random_table(structural=500)
    for syn in synth.sample(table, m=3, rng=11):
        assert np.intersect1d(syn.index, table.structural_zeros).size == 0
        assert_array_equal(syn.structural_zeros, table.structural_zeros)
        assert syn.variables == table.variables
        assert syn.is_integer and np.all(syn.counts > 0)


def test_alpha_zero_keeps_zeros_zero():
    table = _random_table()
    for syn in SaturatedSynthesizer(NBI(sigma=3.0)).sample(table, m=3, rng=2):
        assert np.isin(syn.index, table.index).all()


def test_zeros_to_ones_gives_ones_only():
    table = _random_table()
    syn = SaturatedSynthesizer(Poisson(), zeros_to_ones=0.1).sample(table, rng=5)[0]
    new = ~np.isin(syn.index, table.index)
    assert new.any()
    assert np.all(syn.counts[new] == 1)


# ---------------------------------------------------------------------- statistics
@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_mean_total_is_n_plus_alpha_times_random_zeros(alpha):
    table = _random_table(seed=4, structural=300)
    synth = SaturatedSynthesizer(Poisson(), alpha=alpha)
    m = 40
    totals = np.array([s.total for s in synth.sample(table, m=m, rng=9)])
    expected = table.total + alpha * table.n_random_zeros
    se = math.sqrt(expected / m)  # Poisson: Var(n_syn) = sum of the means
    assert abs(totals.mean() - expected) < 4 * se


def test_new_cells_count_and_values_follow_the_truncated_pmf():
    table = _random_table(seed=6, shape=(100, 100, 10), p_nonzero=0.05)
    dist, alpha = NBI(sigma=2.0), 0.4
    syn = SaturatedSynthesizer(dist, alpha=alpha).sample(table, rng=21)[0]
    new = ~np.isin(syn.index, table.index)
    z = table.n_random_zeros
    p = float(dist.sf(0, alpha))
    n_new = int(new.sum())
    assert abs(n_new - z * p) < 4 * math.sqrt(z * p * (1 - p))
    values = syn.counts[new]
    ks = np.arange(1, 8)
    expected = np.r_[dist.pmf(ks, alpha), dist.sf(ks[-1], alpha)] / p * n_new
    observed = np.r_[[np.sum(values == k) for k in ks], np.sum(values > ks[-1])]
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_new_cells_are_uniform_over_random_zeros():
    table = _random_table(seed=8, shape=(200, 100, 10), p_nonzero=0.2)
    syn = SaturatedSynthesizer(Poisson(), alpha=0.2).sample(table, rng=4)[0]
    new = syn.index[~np.isin(syn.index, table.index)]
    # rank of each new cell among the random zeros, in ten equal bins
    zeros = np.setdiff1d(np.arange(table.n_cells), table.index)
    ranks = np.searchsorted(zeros, new)
    assert_array_equal(zeros[ranks], new)
    counts = np.bincount(ranks * 10 // zeros.size, minlength=10)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_tau3_one_matches_the_pmf_on_esc_like(esc):
    ones = esc.index[esc.counts == 1]
    for dist, expected in [(NBI(sigma=1.0), 0.25), (Poisson(), math.exp(-1))]:
        syn = SaturatedSynthesizer(dist).sample(esc, rng=2024)[0]
        tau3 = np.mean(syn.lookup(ones) == 1)
        se = math.sqrt(expected * (1 - expected) / ones.size)
        assert abs(tau3 - expected) < 4 * se, (dist, tau3)


def test_fractional_table_gives_cell_means():
    variables = [Variable("a", range(4))]
    means = CountTable(variables, [0, 1, 2], [0.5, 2.5, 10.0])
    draws = np.stack([s.lookup(np.arange(4)) for s in SaturatedSynthesizer(Poisson()).sample(means, m=400, rng=3)])
    assert_array_equal(draws[:, 3], 0)
    se = np.sqrt(np.array([0.5, 2.5, 10.0]) / 400)
    assert np.all(np.abs(draws[:, :3].mean(axis=0) - [0.5, 2.5, 10.0]) < 4 * se)


def test_astronomical_table_with_pseudocount_stays_sparse():
    domain = json.loads((ADULT / "adult-domain.json").read_text())
    names = ["age", "workclass", "education-num", "marital-status", "occupation", "race", "sex", "hours-per-week",
             "native-country", "income>50K"]
    variables = [Variable(n, range(domain[n])) for n in names]
    table = CountTable.from_microdata(ADULT / "adult.csv.gz", variables)
    alpha = 1e-10
    syn = SaturatedSynthesizer(Poisson(), alpha=alpha).sample(table, rng=1)[0]
    new = int((~np.isin(syn.index, table.index)).sum())
    expected = table.n_random_zeros * -math.expm1(-alpha)
    assert abs(new - expected) < 5 * math.sqrt(expected)


# ---------------------------------------------------------------------- helpers
def test_distinct_uniform_both_paths():
    g = np.random.default_rng(0)
    for n, size in [(10, 9), (10**15, 1000), (1000, 10)]:
        out = _distinct_uniform(g, n, size)
        assert out.size == size and np.unique(out).size == size
        assert out.min() >= 0 and out.max() < n


def test_zero_rank_to_flat_matches_brute_force():
    rng = np.random.default_rng(1)
    occupied = np.sort(rng.choice(500, size=200, replace=False))
    zeros = np.setdiff1d(np.arange(500), occupied)
    ranks = np.arange(zeros.size)
    assert_array_equal(_zero_rank_to_flat(ranks, occupied), zeros)


@pytest.mark.parametrize("dist, mu", [(Poisson(), 0.05), (Poisson(), 3.0), (NBI(sigma=50.0), 0.2), (PIG(sigma=5.0), 2.0)])
def test_positive_draws_follow_truncated_pmf(dist, mu):
    x = _PositiveZeroLaw.of(dist, mu, 0.0).draw(dist, mu, 20000, np.random.default_rng(12))
    assert x.min() >= 1
    p = float(dist.sf(0, mu))
    ks = np.arange(1, 6)
    expected = np.r_[dist.pmf(ks, mu), dist.sf(ks[-1], mu)] / p * x.size
    observed = np.r_[[np.sum(x == k) for k in ks], np.sum(x > ks[-1])]
    keep = expected > 5
    observed = np.r_[observed[keep], observed[~keep].sum()]
    expected = np.r_[expected[keep], expected[~keep].sum()]
    if expected[-1] == 0:
        observed, expected = observed[:-1], expected[:-1]
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-4


# ---------------------------------------------------------------------- transition probabilities
def test_transition_pmf():
    k = np.arange(0, 200)
    s = SaturatedSynthesizer(NBI(sigma=0.7), alpha=0.2)
    assert_array_equal(s.transition_pmf(k, 5), NBI(sigma=0.7).pmf(k, 5.0))
    assert_array_equal(s.transition_pmf(k, 0), NBI(sigma=0.7).pmf(k, 0.2))
    assert abs(s.transition_pmf(k, 7).sum() - 1) < 1e-12
    z = SaturatedSynthesizer(Poisson(), zeros_to_ones=0.3)
    assert_array_equal(z.transition_pmf([0, 1, 2], 0), [0.7, 0.3, 0.0])
    assert_array_equal(z.transition_sf([0, 1], 0), [0.3, 0.0])
    assert_array_equal(SaturatedSynthesizer(Poisson()).transition_pmf([0, 1], 0), [1.0, 0.0])
    assert s.transition_mean([0, 4]).tolist() == pytest.approx([0.2, 4.0])
    assert s.transition_var([3]).tolist() == pytest.approx([3 + 0.7 * 9])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"distribution": "nbi"}, "count distribution"),
        ({"distribution": Poisson(), "alpha": -0.1}, "'alpha' parameter"),
        ({"distribution": Poisson(), "alpha": float("nan")}, "'alpha' parameter"),
        ({"distribution": Poisson(), "zeros_to_ones": 1.5}, "'zeros_to_ones' parameter"),
        ({"distribution": Poisson(), "alpha": 0.1, "zeros_to_ones": 0.1}, "alternative"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        SaturatedSynthesizer(**kwargs)


def test_bad_sample_arguments():
    s = SaturatedSynthesizer(Poisson())
    with pytest.raises(InvalidArgumentError, match="'m' parameter"):
        s.sample(_random_table(), m=0)
    with pytest.raises(InvalidArgumentError, match="CountTable"):
        s.sample(pd.DataFrame({"a": [1]}))


def test_bernoulli_ranks_are_the_successes_of_independent_trials():
    from cellsafe.mechanisms._base import bernoulli_ranks

    g = np.random.default_rng(21)
    for n, p in [(50, 0.3), (10**6, 1e-3), (10**15, 1e-13), (40, 1.0), (7, 0.9)]:
        r = bernoulli_ranks(g, n, p)
        assert r.dtype == np.int64 and (np.diff(r) > 0).all() and (r.size == 0 or (r[0] >= 0 and r[-1] < n))
    # every rank equally likely, counts binomial: 4000 runs on 50 trials
    hits = np.zeros(50)
    sizes = []
    for _ in range(4000):
        r = bernoulli_ranks(g, 50, 0.3)
        hits[r] += 1
        sizes.append(r.size)
    assert stats.chisquare(hits).pvalue > 1e-3
    assert abs(np.mean(sizes) - 15) < 5 * math.sqrt(50 * 0.3 * 0.7 / 4000)
    assert abs(np.var(sizes) - 10.5) < 5 * 10.5 * math.sqrt(2 / 4000)
