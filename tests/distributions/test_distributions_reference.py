"""Count distributions against R (fixtures made by tests/reference/distributions/make_fixtures.R)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe.distributions import make_distribution

REF = Path(__file__).resolve().parents[1] / "reference" / "distributions"


def _dist(row_family: str, sigma: float, nu: float):
    return make_distribution(
        row_family, sigma=None if np.isnan(sigma) else float(sigma), nu=None if np.isnan(nu) else float(nu)
    )


def _groups(frame: pd.DataFrame):
    for (family, mu, sigma, nu), sub in frame.groupby(["family", "mu", "sigma", "nu"], dropna=False):
        yield _dist(family, sigma, nu), float(mu), sub


@pytest.fixture(scope="module")
def grid() -> pd.DataFrame:
    return pd.read_csv(REF / "pmf_grid.csv")


@pytest.mark.parametrize("family", ["poisson", "nbi", "pig", "gaf"])
def test_pmf_matches_r_on_grid(grid: pd.DataFrame, family: str) -> None:
    """k = 0..60, mu in [0.01, 40], sigma in [0.05, 10], nu in {-0.5, -0.25, 0, 1}: 1e-9 relative."""
    sub = grid[grid.family == family]
    assert len(sub) > 100
    n_checked = 0
    for dist, mu, rows in _groups(sub):
        ref = rows.pmf.to_numpy()
        k = rows.k.to_numpy()
        keep = ref > 1e-12
        assert_allclose(dist.pmf(k[keep], mu), ref[keep], rtol=1e-9, err_msg=f"{dist!r} mu={mu}")
        assert_allclose(dist.logpmf(k[keep], mu), np.log(ref[keep]), rtol=0, atol=1e-9)
        n_checked += int(keep.sum())
    assert n_checked == int((sub.pmf > 1e-12).sum())


def test_grid_values_absent_from_fixture_are_tiny(grid: pd.DataFrame) -> None:
    # The fixture keeps values above 1e-13 only: every other k in 0..60 must be tiny here too.
    for dist, mu, rows in _groups(grid):
        missing = np.setdiff1d(np.arange(61), rows.k.to_numpy())
        if missing.size:
            assert np.all(dist.pmf(missing, mu) < 2e-13), f"{dist!r} mu={mu}"


def test_upper_tails_match_r() -> None:
    tails = pd.read_csv(REF / "tails.csv")
    assert set(tails.family) == {"poisson", "nbi", "pig", "gaf"}
    for dist, mu, rows in _groups(tails):
        k = rows.k.to_numpy()
        ref = rows.sf.to_numpy()
        # R's own tails are accurate to about 1e-12 (PIG: a plain sum of actuar's pmf).
        assert_allclose(dist.sf(k, mu), ref, rtol=1e-8, err_msg=f"{dist!r} mu={mu}")
        assert_allclose(dist.cdf(k, mu) + dist.sf(k, mu), 1.0, rtol=1e-14)


def test_extreme_parameters_match_r() -> None:
    """mu 1e-3 and 1e6, sigma 1e-4 and 100: where R's value is above 1e-300."""
    extreme = pd.read_csv(REF / "extreme.csv")
    for dist, mu, rows in _groups(extreme):
        k = rows.k.to_numpy()
        ref = rows.pmf.to_numpy()
        assert_allclose(dist.pmf(k, mu), ref, rtol=1e-9, err_msg=f"{dist!r} mu={mu}")
