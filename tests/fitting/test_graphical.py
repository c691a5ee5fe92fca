"""Graphical models on junction trees: the tree, exact marginals, estimation and sampling."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

from cellsafe import CountTable, Variable
from cellsafe.fitting import ipf
from cellsafe.fitting.graphical import GraphicalModel, Measurement, estimate_model, junction_tree, model_size


def _marg(x: np.ndarray, attrs) -> np.ndarray:
    return x.sum(axis=tuple(i for i in range(x.ndim) if i not in attrs))


def _random_table(sizes, seed=0, total=10_000.0):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(math.prod(sizes))).reshape(sizes) * total


def test_junction_tree_of_a_chain_and_a_cycle():
    jt = junction_tree([2, 3, 4, 5], [(0, 1), (1, 2), (2, 3)])
    assert sorted(jt.cliques) == [(0, 1), (1, 2), (2, 3)]
    assert jt.n_cells == 2 * 3 + 3 * 4 + 4 * 5
    # a 4-cycle is triangulated with one chord: two cliques of three attributes
    jt = junction_tree([2, 2, 2, 2], [(0, 1), (1, 2), (2, 3), (0, 3)])
    assert len(jt.cliques) == 2 and all(len(c) == 3 for c in jt.cliques)
    assert len(set(jt.cliques[0]) & set(jt.cliques[1])) == 2
    assert model_size([2, 2, 2, 2], [(0, 1), (1, 2), (2, 3), (0, 3)]) == 16
    # separate components are joined through an empty separator
    jt = junction_tree([2, 3, 4], [(0, 1)])
    assert () in jt.separators[1:] and {2} <= set(itertools.chain(*jt.cliques))


def test_running_intersection_on_random_models():
    rng = np.random.default_rng(3)
    for _ in range(30):
        d = 8
        cliques = [tuple(sorted(rng.choice(d, size=rng.integers(1, 4), replace=False))) for _ in range(6)]
        jt = junction_tree([3] * d, cliques)
        for c in cliques:  # every measured set lies in a clique
            assert jt.clique_of(c) >= 0
        for a in range(d):  # the cliques holding an attribute form a connected subtree
            holders = {i for i, c in enumerate(jt.cliques) if a in c}
            roots = [i for i in holders if jt.parent[i] not in holders]
            assert len(roots) == 1


def test_exact_measurements_of_a_tree_give_its_closed_form():
    """Maximum entropy with the marginals of a tree: p = p01 p12 p23 / (p1 p2), exactly."""
    sizes = [3, 4, 5, 2]
    x = _random_table(sizes)
    ms = [Measurement(c, _marg(x, c), 1.0) for c in [(0, 1), (1, 2), (2, 3)]]
    fit = estimate_model(sizes, ms)
    n = x.sum()
    m01, m12, m23, m1, m2 = (_marg(x, c) / n for c in [(0, 1), (1, 2), (2, 3), (1,), (2,)])
    q = m01[:, :, None, None] * m12[None, :, :, None] * m23[None, None, :, :] / m1[None, :, None, None] / m2[None, None, :, None]
    for c in [(0, 1), (1, 2), (0, 3), (0, 2), (0, 1, 3), (1, 3), (0, 1, 2, 3)]:
        assert_allclose(fit.model.marginal(c), n * _marg(q, c), rtol=1e-9, atol=1e-9)
    assert fit.loss < 1e-12


def test_exact_measurements_of_a_cycle_match_ipf():
    """All two-way margins of three variables (no closed form): the fit equals IPF on the full table."""
    sizes = [3, 4, 2]
    x = np.round(_random_table(sizes, seed=2))
    ms = [Measurement(c, _marg(x, c), 1.0) for c in [(0, 1), (1, 2), (0, 2)]]
    fit = estimate_model(sizes, ms, max_iter=3000, tol=1e-14)
    variables = [Variable(n, range(s)) for n, s in zip("abc", sizes)]
    idx = np.flatnonzero(x.ravel() > 0)
    table = CountTable(variables, idx, x.ravel()[idx].astype(np.int64))
    ref = ipf(table, "a*b + b*c + a*c", tol=1e-12).fitted.dense()
    assert_allclose(fit.model.marginal((0, 1, 2)), ref, rtol=1e-6, atol=1e-6)


def test_noisy_measurements_are_weighed_by_their_precision():
    """Two measurements of one marginal: the fit is their inverse-variance average (within the simplex)."""
    y1, y2 = np.array([500.0, 300.0, 200.0]), np.array([560.0, 240.0, 200.0])
    fit = estimate_model([3], [Measurement((0,), y1, 1.0), Measurement((0,), y2, 2.0)], max_iter=3000, tol=1e-14)
    avg = (y1 / 1.0 + y2 / 4.0) / (1 / 1.0 + 1 / 4.0)
    assert_allclose(fit.model.marginal((0,)), avg, rtol=1e-6)


def test_out_of_clique_marginals_against_the_dense_model():
    rng = np.random.default_rng(7)
    sizes = [2, 3, 2, 4, 3, 2]
    cliques = [(0, 1), (1, 2, 3), (3, 4), (4, 5), (0, 5)]
    jt = junction_tree(sizes, cliques)
    theta = [rng.normal(size=[sizes[a] for a in c]) for c in jt.cliques]
    model = GraphicalModel(sizes, jt, theta, 1.0)
    dense = np.zeros(sizes)
    for c, t in zip(jt.cliques, theta):
        dense = dense + t.reshape([sizes[a] if a in c else 1 for a in range(len(sizes))])
    p = np.exp(dense - dense.max())
    p /= p.sum()
    for c in itertools.combinations(range(len(sizes)), 3):
        assert_allclose(model.marginal(c), _marg(p, c), rtol=1e-10, atol=1e-14)
    assert_allclose(model.probabilities((3, 0)), _marg(p, (0, 3)).T, rtol=1e-10)


def _chain_model(seed: int = 1) -> GraphicalModel:
    sizes = [3, 4, 2]
    x = _random_table(sizes, seed=seed, total=1000.0)
    ms = [Measurement(c, _marg(x, c), 1.0) for c in [(0, 1), (1, 2)]]
    return estimate_model(sizes, ms).model


def test_rounded_records_are_within_one_of_every_expected_clique_count():
    model = _chain_model()
    codes = model.sample_records(rng=5)
    assert codes.shape == (1000, 3)
    # every cell of the root clique gets floor or ceil of its expected count
    root = model.cliques[0]
    got = np.zeros([model.sizes[a] for a in root])
    np.add.at(got, tuple(codes[:, a] for a in root), 1)
    exp = model.marginal(root)
    assert np.all((got == np.floor(exp)) | (got == np.ceil(exp)))


@pytest.mark.parametrize("method", ["round", "sample"])
def test_sampled_records_follow_the_model(method):
    """Frequencies of all three-way cells over many records against the model (chi-square, fixed seed)."""
    model = _chain_model(seed=4)
    codes = model.sample_records(200_000, rng=11, method=method)
    p = model.probabilities((0, 1, 2)).ravel()
    flat = np.ravel_multi_index(tuple(codes.T), model.sizes)
    observed = np.bincount(flat, minlength=p.size)
    expected = p * codes.shape[0]
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert stats.chi2.sf(chi2, p.size - 1) > 1e-4


def test_same_seed_same_records_and_secure_draws():
    model = _chain_model()
    assert_array_equal(model.sample_records(rng=3), model.sample_records(rng=3))
    assert model.sample_records(50, rng="secure", method="sample").shape == (50, 3)
    assert model.sample_records(50, rng="secure").shape == (50, 3)


def test_bad_measurements_are_refused():
    with pytest.raises(ValueError, match="sorted"):
        Measurement((1, 0), np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="positive"):
        Measurement((0,), np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="at least one"):
        estimate_model([2], [])
