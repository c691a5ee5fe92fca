"""Tests of cellsafe.datasets.esc_like, the stand-in for the ESC substitute of 003 and 000."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_equal
from scipy import stats

from cellsafe.datasets import _esc, esc_like, esc_like_expected, esc_like_variables
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.fitting import ipf
from cellsafe.table import CountTable

# 003 Table 2 (and 000 Table 2): number of cells with count 0, 1, ..., 10 and >= 11.
TABLE2 = np.array([3134980, 119917, 51412, 25952, 19450, 13076, 10345, 7947, 7077, 5809, 5163, 67512])
K = 3_468_640
N = 8_190_870
NAMES = ["geography", "ethnicity", "sex", "age", "language"]
SHAPE = (326, 20, 4, 19, 7)


@pytest.fixture(scope="module")
def table() -> CountTable:
    return esc_like()


def cells_by_size(t: CountTable) -> np.ndarray:
    """Cells with count 0..10 and >= 11, as in 003 Table 2."""
    sizes = t.cell_sizes()
    out = np.zeros(12, dtype=np.int64)
    small = sizes[sizes.index <= 10]
    out[small.index.to_numpy().astype(int)] = small.to_numpy()
    out[11] = sizes[sizes.index >= 11].sum()
    return out


def g2(observed: np.ndarray, fitted: np.ndarray) -> float:
    """Deviance 2 sum f log(f / mu) over cells with f > 0 (the fits below keep every margin)."""
    f = observed.astype(float)
    pos = f > 0
    return float(2.0 * np.sum(f[pos] * np.log(f[pos] / fitted[pos])))


# ------------------------------------------------------------------------------------- shape
def test_variables_shape_and_cells(table):
    assert table.names == NAMES
    assert table.shape == SHAPE
    assert table.n_cells == K
    assert table.is_integer
    assert table.n_structural_zeros == 0
    assert table.variables == esc_like_variables()


def test_categories():
    geo, eth, sex, age, lang = esc_like_variables()
    assert geo.categories[0] == "G001" and geo.categories[-1] == "G326"
    assert eth.categories[0] == "WBRI" and {"REFU", "NOBT", "BAFR", "APKN"} <= set(eth.categories)
    assert sex.categories == ("F", "M", "Unknown", "Invalid")
    assert age.categories == tuple(str(a) for a in range(2, 21))
    assert lang.categories[:2] == ("ENG", "ENB") and len(lang.categories) == 7


def test_total_within_one_percent(table):
    assert abs(table.total / N - 1) < 0.01


def test_non_zero_cells_near_published(table):
    # 003 section 4.1: 333,660 non-zero cells
    assert abs(table.nnz / 333_660 - 1) < 0.10


@pytest.mark.parametrize("k", range(12), ids=[str(k) for k in range(11)] + [">=11"])
def test_cell_size_share_matches_table2(table, k):
    observed = cells_by_size(table)
    assert_equal(observed.sum(), K)
    assert abs(observed[k] / TABLE2[k] - 1) < 0.10, (k, observed[k], TABLE2[k])


def test_large_cells_hold_most_pupils(table):
    # 003 Table 2: the >= 11 cells hold 7,468,867 pupils (mean about 110.6)
    big = table.counts[table.counts >= 11]
    assert abs(big.sum() / 7_468_867 - 1) < 0.05
    assert 90 < big.mean() < 135


# ------------------------------------------------------------------------------------- rng
def test_same_rng_same_table(table):
    again = esc_like(0)
    assert again.equals(table)
    # the same stream reached another way (no cache) gives the same table
    assert esc_like(np.random.SeedSequence(0)).equals(table)


def test_different_rng_different_table(table):
    other = esc_like(1)
    assert not other.equals(table)
    assert other.shape == table.shape
    assert abs(other.total / N - 1) < 0.01


def test_generator_is_consumed():
    gen = np.random.default_rng(5)
    a = esc_like(gen)
    b = esc_like(gen)
    assert not a.equals(b)


@pytest.mark.parametrize("rng", [-1, "seed", 1.5, True])
def test_bad_rng(rng):
    with pytest.raises(InvalidArgumentError):
        esc_like(rng)


# ------------------------------------------------------------------------------------- model
def test_expected_counts():
    mu = esc_like_expected()
    assert mu.shape == SHAPE
    assert mu.nnz == K
    assert not mu.is_integer
    assert_allclose(mu.total, N, rtol=1e-12)


def test_observed_follows_expected(table):
    # The ethnicity margin of the draw tracks the model's, within 5 standard errors of the
    # cell-level noise: var f = mu + phi mu^2 for gamma-Poisson cells, at most 2 mu + phi mu^2
    # with pairs (the rescaling of the multipliers to n only lowers the variance).
    mu = esc_like_expected().dense().reshape(SHAPE)
    mean = mu.sum(axis=(0, 2, 3, 4))
    var = (2 * mu + _esc._PHI * mu**2).sum(axis=(0, 2, 3, 4))
    f = table.margin(["ethnicity"]).dense()
    z = (f - mean) / np.sqrt(var)
    assert np.all(np.abs(z) < 5), z
    assert_allclose(f, mean, rtol=0.1)


def test_geography_sizes_very_unequal(table):
    sizes = table.margin(["geography"]).dense().astype(float)
    assert sizes.min() > 0
    assert sizes.max() / np.median(sizes) > 5
    assert np.median(sizes) / sizes.min() > 20


def test_ethnicity_language_association(table):
    f = table.margin(["ethnicity", "language"]).dense().astype(float)
    expected = np.outer(f.sum(1), f.sum(0)) / f.sum()
    statistic = g2(f, expected)
    df = (f.shape[0] - 1) * (f.shape[1] - 1)
    assert stats.chi2.sf(statistic, df) < 1e-300
    assert statistic > 1e6
    # Cramer's V: a strong association
    assert np.sqrt(statistic / f.sum() / (min(f.shape) - 1)) > 0.25


def test_all_two_way_fits_far_better_than_independence(table):
    # 003 section 4.4 fits the all-two-way model to ethnicity, age and language
    margin = table.margin(["ethnicity", "age", "language"])
    f = margin.dense().astype(float)
    n = f.sum()
    independence = np.einsum("i,j,k->ijk", f.sum((1, 2)), f.sum((0, 2)), f.sum((0, 1))) / n**2
    g2_independence = g2(f, independence)
    fit = ipf(margin, "ethnicity*age + ethnicity*language + age*language")
    assert fit.converged
    g2_two_way = g2(f, fit.fitted.dense())
    df_independence = f.size - 1 - sum(s - 1 for s in f.shape)
    assert stats.chi2.sf(g2_independence, df_independence) < 1e-300
    assert g2_two_way < 0.05 * g2_independence
    # each two-way term matters: the age x language term alone is hugely significant
    al = table.margin(["age", "language"]).dense().astype(float)
    g2_al = g2(al, np.outer(al.sum(1), al.sum(0)) / al.sum())
    assert stats.chi2.sf(g2_al, (al.shape[0] - 1) * (al.shape[1] - 1)) < 1e-50


def test_model_expected_cell_sizes_match_table2():
    # Exact expected cell-size distribution of the model (independent of rng): a cell with mean
    # mu is negative binomial with variance mu + phi mu^2; a paired cell (probability w) is twice
    # a negative binomial with mean mu / 2.  The normalisation of the multipliers is ignored.
    mu = esc_like_expected().counts
    phi, w = _esc._PHI, _esc._PAIRS

    def nb_cells(m: np.ndarray, kmax: int) -> np.ndarray:
        size = 1.0 / phi
        q = m / (size + m)
        p = np.exp(size * np.log1p(-q))
        out = [p.sum()]
        for k in range(kmax):
            p = p * (k + size) / (k + 1) * q
            out.append(p.sum())
        return np.array(out)

    # the recurrence agrees with scipy's negative binomial on a sample of cells
    sample = mu[:: 10_007]
    assert_allclose(nb_cells(sample, 10), stats.nbinom.pmf(np.arange(11)[:, None], 1 / phi, 1 / (1 + phi * sample)).sum(1))
    cells = np.empty(12)
    cells[:11] = (1 - w) * nb_cells(mu, 10)
    cells[0:11:2] += w * nb_cells(mu / 2, 5)
    cells[11] = K - cells[:11].sum()
    assert np.all(np.abs(cells / TABLE2 - 1) < 0.05), np.round(cells / TABLE2 - 1, 4)
