"""Consistent estimates over a tree: least squares against a dense generalized least-squares solve,
and the non-negative integer step's invariants (exact additivity, floors or ceilings of the projection)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.fitting.tree import tree_integers, tree_least_squares


def random_tree(rng, fanouts):
    """Parent maps of a random tree: fanouts[l] = (min, max) children per node of level l."""
    sizes, parents = [1], []
    for lo, hi in fanouts:
        k = rng.integers(lo, hi + 1, size=sizes[-1])
        parents.append(np.repeat(np.arange(sizes[-1]), k))
        sizes.append(int(k.sum()))
    return sizes, parents


def leaf_map(sizes, parents):
    """A: every node (all levels, top first) as a 0/1 row over the leaves."""
    n_leaf = sizes[-1]
    rows = [np.eye(n_leaf)]
    for p, n_up in zip(reversed(parents), reversed(sizes[:-1])):
        up = np.zeros((n_up, rows[0].shape[0]))
        up[p, np.arange(p.size)] = 1
        rows.insert(0, up @ rows[0])
    return np.vstack(rows)


def dense_gls(y, s, A):
    keep = np.isfinite(s)
    W = 1 / s[keep]
    M = A[keep].T @ (W[:, None] * A[keep])
    cov = np.linalg.inv(M)
    beta = cov @ (A[keep].T @ (W * y[keep]))
    return A @ beta, np.diag(A @ cov @ A.T)


@pytest.mark.parametrize("seed", range(6))
def test_least_squares_equals_dense_gls(seed):
    rng = np.random.default_rng(seed)
    sizes, parents = random_tree(rng, [(1, 4), (1, 5), (2, 4)])
    truth_leaves = rng.poisson(5, size=sizes[-1]).astype(float)
    A = leaf_map(sizes, parents)
    truth = A @ truth_leaves
    level_var = rng.uniform(0.5, 4, size=len(sizes))
    if seed % 2:
        level_var[1] = np.inf  # a level not measured
    s = np.concatenate([np.full(n, v) for n, v in zip(sizes, level_var)])
    y = truth + rng.normal(0, np.sqrt(np.where(np.isfinite(s), s, 1)))
    bounds = np.cumsum([0] + sizes)
    est = tree_least_squares([y[a:b] for a, b in zip(bounds, bounds[1:])], list(level_var), parents)
    ref, ref_var = dense_gls(y, s, A)
    assert_allclose(np.concatenate(est.values), ref, rtol=1e-10, atol=1e-9)
    assert_allclose(np.concatenate(est.variances), ref_var, rtol=1e-10, atol=1e-12)
    for level, p in enumerate(parents):  # consistent: each parent is the sum of its children
        assert_allclose(np.bincount(p, weights=est.values[level + 1], minlength=sizes[level]), est.values[level], atol=1e-9)


def test_per_node_variances_and_exact_levels():
    rng = np.random.default_rng(7)
    sizes, parents = random_tree(rng, [(2, 3), (2, 3)])
    A = leaf_map(sizes, parents)
    s = rng.uniform(0.3, 3, size=A.shape[0])
    y = A @ rng.poisson(4, size=sizes[-1]) + rng.normal(0, np.sqrt(s))
    bounds = np.cumsum([0] + sizes)
    split = lambda a: [a[i:j] for i, j in zip(bounds, bounds[1:])]  # noqa: E731
    est = tree_least_squares(split(y), split(s), parents)
    ref, ref_var = dense_gls(y, s, A)
    assert_allclose(np.concatenate(est.values), ref, rtol=1e-10)
    assert_allclose(np.concatenate(est.variances), ref_var, rtol=1e-10)
    # a total known exactly (variance 0) is kept, and the leaves share the difference
    est0 = tree_least_squares([[10.0], [4.0, 5.0]], [0.0, 1.0], [[0, 0]])
    assert_allclose(est0.values[0], [10.0])
    assert_allclose(est0.values[1], [4.5, 5.5])
    assert_allclose(est0.variances[1], [0.5, 0.5])


def test_the_docstring_numbers_by_hand():
    # total 10 and parts 4, 5 with unit variances: the discrepancy 1 is shared 1/3 to each measurement
    est = tree_least_squares([[10.0], [4.0, 5.0]], [1.0, 1.0], [[0, 0]])
    assert_allclose(est.values[1], [4 + 1 / 3, 5 + 1 / 3])
    assert_allclose(est.variances[0], [2 / 3])
    assert_allclose(est.variances[1], [2 / 3, 2 / 3])


def project_reference(x, w, total):
    """Projection onto {x >= 0, sum = total} by bisection on theta (independent of the sort)."""
    lo, hi = (x.min() - total) / w.max() - 1 - abs(x).max(), x.max() / w.min() + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if np.maximum(x - mid * w, 0).sum() > total:
            lo = mid
        else:
            hi = mid
    return np.maximum(x - hi * w, 0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000))
def test_integers_add_up_and_round_the_projection(seed):
    rng = np.random.default_rng(seed)
    sizes, parents = random_tree(rng, [(1, 4), (1, 6), (1, 3)])
    values = [rng.normal(3, 4, size=n) for n in sizes]
    weights = [rng.uniform(0.5, 2, size=n) for n in sizes]
    out = tree_integers(values, parents, weights)
    for level, a in enumerate(out):
        assert a.dtype == np.int64 and (a >= 0).all()
    for level, p in enumerate(parents):
        assert_array_equal(np.bincount(p, weights=out[level + 1], minlength=sizes[level]).astype(np.int64), out[level])
        for parent in range(sizes[level]):
            kids = np.flatnonzero(p == parent)
            proj = project_reference(values[level + 1][kids], weights[level + 1][kids], out[level][parent])
            assert (np.abs(out[level + 1][kids] - proj) < 1 + 1e-9).all()
            assert (out[level + 1][kids] >= np.floor(proj - 1e-9)).all()
            assert (out[level + 1][kids] <= np.ceil(proj + 1e-9)).all()


def test_integers_keep_consistent_integer_values():
    values = [np.array([12.0]), np.array([5.0, 7.0]), np.array([2.0, 3.0, 7.0])]
    out = tree_integers(values, [[0, 0], [0, 0, 1]])
    assert [a.tolist() for a in out] == [[12], [5, 7], [2, 3, 7]]


def test_zero_parent_gives_zero_children():
    out = tree_integers([[-3.0], [1.0, 2.0]], [[0, 0]])
    assert [a.tolist() for a in out] == [[0], [0, 0]]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: tree_least_squares([[1.0], [1.0]], [1.0, 1.0], [[0, 0]]), "one integer position"),
        (lambda: tree_least_squares([[1.0, 2.0], [1.0]], [1.0, 1.0], [[0]]), "has no child"),
        (lambda: tree_least_squares([[1.0], [1.0]], [1.0, np.inf], [[0]]), "last level must be measured"),
        (lambda: tree_least_squares([[1.0], [np.nan]], [1.0, 1.0], [[0]]), "NaN"),
        (lambda: tree_least_squares([[1.0], [1.0]], [1.0, -1.0], [[0]]), "non-negative"),
        (lambda: tree_least_squares([[1.0], [1.0]], [1.0], [[0]]), "one value"),
        (lambda: tree_integers([[1.0], [np.inf]], [[0]]), "finite"),
        (lambda: tree_integers([[1.0], [1.0]], [[1]]), "outside level"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises((DataError, InvalidArgumentError), match=match):
        call()
