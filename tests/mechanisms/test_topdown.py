"""TopDownNoise: consistent, non-negative integer DP counts at every level of a hierarchy."""

import math

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import cellsafe
from cellsafe.distributions.integer_noise import DiscreteLaplace
from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.mechanisms.topdown import TopDownNoise


def geography(n_regions=3, n_districts=4, n_areas=5):
    areas = [f"{r}{d}{a}" for r in range(n_regions) for d in range(n_districts) for a in range(n_areas)]
    return areas, cellsafe.Hierarchy.from_positions(areas, {"region": 1, "district": 2})


def table(areas, rng, mean=40.0, sexes=("F", "M")):
    """A table on the public domain of the areas and sexes (DP releases refuse categories read from records)."""
    counts = rng.poisson(mean, size=(len(areas), len(sexes)))
    variables = [cellsafe.Variable("area", areas), cellsafe.Variable("sex", list(sexes))]
    return cellsafe.Domain(variables).adopt(cellsafe.CountTable.from_dense(counts, variables))


@pytest.mark.parametrize("noise", ["geometric", "discrete-gaussian"])
def test_every_level_adds_up_in_non_negative_integers(noise):
    rng = np.random.default_rng(1)
    areas, h = geography()
    t = table(areas, rng, mean=2.0)  # small counts: the non-negativity step is busy
    mech = TopDownNoise("area", h, epsilon=0.5, noise=noise)
    for release in mech.sample(t, m=3, rng=5):
        pub = release.publication
        released = release.released
        assert (released >= 0).all() and (released == np.round(released)).all()
        # every published cell is the sum of the released inner cells it covers: additive at every level
        assert_array_equal(pub.X.T @ release.inner_released, released)
        assert release.publication.n_published == 2 * (1 + 3 + 12 + 60)
        assert_array_equal(pub.X.T @ release.inner_original, release.original)


def test_the_listing_is_the_whole_frame():
    # the cells listed never depend on the data: zeros in the confidential table are listed too
    rng = np.random.default_rng(2)
    areas, h = geography()
    t = table(areas, rng, mean=0.3)
    t_other = table(areas, np.random.default_rng(99), mean=0.3)
    mech = TopDownNoise("area", h, epsilon=1.0)
    [a] = mech.sample(t, rng=1)
    [b] = mech.sample(t_other, rng=1)
    assert a.to_frame().drop(columns="count").equals(b.to_frame().drop(columns="count"))


def test_same_rng_same_release_and_m_implicates_differ():
    rng = np.random.default_rng(3)
    areas, h = geography()
    t = table(areas, rng)
    mech = TopDownNoise("area", h, epsilon=1.0, noise="geometric")
    a, b = mech.sample(t, m=2, rng=7)
    [a2, b2] = mech.sample(t, m=2, rng=7)
    assert_array_equal(a.released, a2.released)
    assert_array_equal(b.released, b2.released)
    assert not np.array_equal(a.released, b.released)


def test_secure_randomness():
    rng = np.random.default_rng(4)
    areas, h = geography(2, 2, 2)
    t = table(areas, rng)
    [r] = TopDownNoise("area", h, epsilon=1.0, noise="geometric").sample(t, rng="secure")
    assert_array_equal(r.publication.X.T @ r.inner_released, r.released)


def test_a_huge_budget_releases_the_truth():
    rng = np.random.default_rng(5)
    areas, h = geography()
    t = table(areas, rng)
    [r] = TopDownNoise("area", h, epsilon=1e4, noise="geometric").sample(t, rng=1)
    assert_array_equal(r.released, r.original)


def test_errors_per_level_match_the_a_priori_rmse():
    # large counts (no clipping): the observed mean squared error per level is the least-squares
    # variance plus the controlled rounding's (at most 1/4 per cell); 200 implicates, tolerance 5 SE
    rng = np.random.default_rng(6)
    areas, h = geography(2, 3, 4)
    t = table(areas, rng, mean=500.0)
    mech = TopDownNoise("area", h, epsilon=1.0, noise="discrete-gaussian", split=[0.4, 0.2, 0.2, 0.2])
    expected = mech.expected_errors(t)
    releases = mech.sample(t, m=200, rng=11)
    errors = {name: [] for name in mech.level_names}
    for r in releases:
        le = mech.level_errors(r)
        for name, rmse, cells in zip(le["level"], le["rmse"], le["cells"]):
            errors[name].append(rmse**2)
    for name, exp_rmse, cells in zip(expected["level"], expected["expected_rmse"], expected["cells"]):
        mse = np.mean(errors[name])
        n = 200 * cells
        se = exp_rmse**2 * math.sqrt(2.0 / n) + 0.25 / math.sqrt(n)
        assert abs(mse - exp_rmse**2) < 5 * se + 0.25, (name, mse, exp_rmse**2)


def test_geometric_scales_and_the_loss_by_enumeration():
    # each level's counts change by 1 in one cell (add-remove) or in two cells (replace-one); the
    # worst log-ratio of the measurements' probabilities between neighbours is the sum over levels
    # of rate x L1 change: it must equal epsilon under the stated relation
    areas, h = geography(2, 2, 2)
    for relation, l1 in [("replace-one", 2), ("add-remove", 1)]:
        mech = TopDownNoise("area", h, epsilon=0.8, noise="geometric", relation=relation, split=[1, 2, 3, 4])
        shares = np.array([1, 2, 3, 4]) / 10
        worst = 0.0
        for share, d in zip(shares, mech._noise()):
            assert isinstance(d, DiscreteLaplace)
            # the ratio of pmfs at a shifted count: exactly exp(rate) per unit of L1 change
            x = np.arange(-30, 31)
            ratio = np.max(d.logpmf(x) - d.logpmf(x + 1))
            worst += l1 * ratio
            assert ratio <= share * 0.8 / l1 + 1e-12
        assert worst == pytest.approx(0.8, rel=1e-9)


def test_level_nesting_and_partition_are_checked():
    areas = ["a1", "a2", "b1"]
    overlapping = cellsafe.Hierarchy.from_groups({"A": ["a1", "a2"], "B": ["a2", "b1"]}, areas, level="region")
    with pytest.raises(DataError, match="two aggregates"):
        TopDownNoise("area", overlapping, epsilon=1.0)
    partial = cellsafe.Hierarchy.from_groups({"A": ["a1", "a2"]}, areas, level="region")
    with pytest.raises(DataError, match="no aggregate"):
        TopDownNoise("area", partial, epsilon=1.0)
    across = cellsafe.Hierarchy.combine(
        cellsafe.Hierarchy.from_groups({"A": ["a1", "a2"], "B": ["b1"]}, areas, level="region"),
        cellsafe.Hierarchy.from_groups({"X": ["a1"], "Y": ["a2", "b1"]}, areas, level="district"),
    )
    with pytest.raises(DataError, match="levels must nest"):
        TopDownNoise("area", across, epsilon=1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": 1, "noise": "laplace"}, "noise"),
        ({"epsilon": 1, "noise": "geometric", "delta": 1e-6}, "pure"),
        ({"epsilon": 1, "delta": 0}, "delta > 0"),
        ({"epsilon": 1, "split": [1, 1]}, "each of the 4 levels"),
        ({"epsilon": 1, "split": [1, 1, 1, 0]}, "last level"),
        ({"epsilon": 1, "split": [1, -1, 1, 1]}, "non-negative"),
        ({"epsilon": 1, "relation": "neighbours"}, "relation"),
    ],
)
def test_bad_parameters(kwargs, match):
    _, h = geography(2, 2, 2)
    with pytest.raises(InvalidArgumentError, match=match):
        TopDownNoise("area", h, **kwargs)


def test_categories_read_from_records_are_refused():
    # a table counted from records has its categories from the records: a DP release refuses it
    rng = np.random.default_rng(8)
    areas, h = geography(2, 2, 2)
    counts = rng.poisson(5, size=(len(areas), 2))
    variables = [cellsafe.Variable("area", areas), cellsafe.Variable("sex", ["F", "M"])]
    raw = cellsafe.CountTable.from_dense(counts, variables)
    mech = TopDownNoise("area", h, epsilon=1.0)
    with pytest.raises(DataError, match="not given as public"):
        mech.sample(raw)
    [r] = mech.sample(raw, domain=cellsafe.Domain(variables), rng=1)
    assert r.publication.n_published == 2 * (1 + 2 + 4 + 8)


@pytest.mark.parametrize("noise", ["geometric", "discrete-gaussian"])
@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
def test_the_privacy_loss_is_the_budget(noise, relation):
    from cellsafe.dp import cdp_epsilon

    _, h = geography(2, 2, 2)
    mech = TopDownNoise("area", h, epsilon=0.7, noise=noise, relation=relation, split=[1, 1, 2, 4])
    loss = mech.privacy_loss(relation, delta=1e-9)
    other = "add-remove" if relation == "replace-one" else "replace-one"
    if noise == "geometric":
        assert loss.epsilon == pytest.approx(0.7, rel=1e-9) and loss.epsilon <= 0.7
        ratio = 2.0 if relation == "add-remove" else 0.5
        assert mech.privacy_loss(other).epsilon == pytest.approx(0.7 * ratio, rel=1e-9)
    else:
        # the levels' rho add up to the budget's rho, whose conversion at delta 1e-9 is epsilon 0.7
        assert loss.rho == pytest.approx(mech.rho, rel=1e-9) and loss.rho <= mech.rho
        assert loss.epsilon <= 0.7 + 1e-12
        assert cdp_epsilon(loss.rho, 1e-9) == pytest.approx(0.7, rel=1e-6)


def test_the_table_must_match_the_hierarchy():
    rng = np.random.default_rng(7)
    areas, h = geography(2, 2, 2)
    t = table(areas[:-1], rng)
    with pytest.raises(DataError, match="differ"):
        TopDownNoise("area", h, epsilon=1.0).sample(t)
    with pytest.raises(DataError, match="no variable"):
        TopDownNoise("place", h, epsilon=1.0).sample(table(areas, rng))
