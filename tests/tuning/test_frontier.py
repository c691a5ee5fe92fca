"""The risk-utility frontier."""

import numpy as np
import pytest

from cellsafe import apriori
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.tuning import default_grid, frontier
from cellsafe.tuning._frontier import _efficient

SIZES = {0: 5000, 1: 300, 2: 150, 3: 80, 5: 50, 10: 30, 40: 10, 200: 2}


def test_efficient_set_brute_force():
    rng = np.random.default_rng(3)
    risk = rng.random(60)
    util = rng.random(60)
    risk[5], util[5] = risk[4], util[4]  # duplicate
    eff = _efficient(risk, util)
    for i in range(60):
        dominated = np.any((risk <= risk[i]) & (util >= util[i]) & ((risk < risk[i]) | (util > util[i])))
        assert eff[i] == (not dominated), i


def test_frontier_values_and_columns():
    f = frontier(SIZES, families=["poisson", "nbi", "pig"], n=30)
    pts = f.points
    assert len(pts) == 30
    assert {"family", "sigma", "nu", "alpha", "risk", "utility", "efficient"} <= set(pts.columns)
    from cellsafe.distributions import NBI
    from cellsafe.mechanisms.saturated import SaturatedSynthesizer

    row = pts[pts.family == "nbi"].iloc[3]
    mech = SaturatedSynthesizer(NBI(row.sigma))
    assert row.risk == pytest.approx(apriori.tau(SIZES, mech, k=[1]).at[1, "tau4"], rel=1e-12)
    mse = apriori.expected_squared_error(SIZES, mech).per_implicate / sum(SIZES.values())
    assert row.utility == pytest.approx(1 / (1 + np.exp(mse)), rel=1e-12)
    eff = f.efficient
    assert eff["risk"].is_monotonic_increasing and eff["utility"].is_monotonic_increasing


def test_hellinger_utility_and_custom_grid():
    grid = [{"family": "nbi", "sigma": s} for s in (0.1, 1.0)] + [{"family": "gaf", "sigma": 1.0, "nu": -0.5}]
    f = frontier(SIZES, grid, utility="hellinger", risk="tau3(1)")
    assert f.risk == "tau3(1)" and f.utility == "hellinger"
    assert f.points.utility.between(0, 1).all()


def test_default_grid_size():
    assert len(default_grid()) == 100
    assert len(default_grid(["nbi"], n=7)) == 7
    fams = {p["family"] for p in default_grid()}
    assert fams == {"poisson", "nbi", "pig", "gaf"}


@pytest.mark.parametrize(
    "kwargs, text",
    [
        (dict(families=["weibull"]), "unknown family"),
        (dict(risk="loss"), "risk metric must be"),
        (dict(utility="auc"), "unknown utility"),
        (dict(risk="tau4(x)"), "unknown metric"),
    ],
)
def test_bad_frontier_arguments(kwargs, text):
    with pytest.raises(InvalidArgumentError, match=text):
        frontier(SIZES, **kwargs)


def test_grid_point_without_sigma():
    with pytest.raises(InvalidArgumentError, match="family 'nbi' needs a 'sigma'"):
        frontier(SIZES, [{"family": "nbi", "alpha": 0.01}])


def test_mse_frontier_ranks_large_errors_by_the_mse_itself():
    """1 - invlogit(MSE) is 0 for every MSE above ~745: the MSE per cell keeps such settings apart."""
    from cellsafe.mechanisms import make_mechanism

    sizes = {0: 1000, 1: 50, 2: 30, 500: 20, 5000: 10}
    grid = ["nbi:sigma=1", "nbi:sigma=4", "geometric:epsilon=1"]
    f = frontier(sizes, grid)
    pts = f.points.set_index("spec")
    for spec in grid:
        expected = apriori.expected_squared_error(sizes, make_mechanism(spec)).mse
        assert pts.at[spec, "mse_per_cell"] == pytest.approx(expected, rel=1e-12)
    assert pts.at["nbi:sigma=1", "utility"] == pts.at["nbi:sigma=4", "utility"] == 0.0
    # sigma 4 has lower tau4(1) but a larger error: both non-dominated, told apart by the MSE
    assert pts.at["nbi:sigma=4", "risk"] < pts.at["nbi:sigma=1", "risk"]
    assert pts.at["nbi:sigma=4", "mse_per_cell"] > pts.at["nbi:sigma=1", "mse_per_cell"]
