"""Publication (published cells and X) and the post-processing around it (restoration, expected inner)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import cellsafe.fitting.nnls as nnls
from cellsafe.exceptions import DataError, InvalidArgumentError, TableTooLargeError
from cellsafe.fitting import expected_inner, restore_additivity
from cellsafe.published import Publication
from cellsafe.table import CountTable, Variable

VS = [Variable("a", ["x", "y"]), Variable("b", ["u", "v", "w"]), Variable("c", ["p", "q"])]


def test_formula_crossings_and_x():
    pub = Publication.from_formula(VS, "a*b + c")
    assert pub.crossings == ((), ("a",), ("b",), ("c",), ("a", "b"))
    assert pub.n_inner == 12 and pub.n_published == 1 + 2 + 3 + 2 + 6
    X = pub.X.toarray()
    assert set(np.unique(X)) == {0.0, 1.0}
    assert_array_equal(X.sum(axis=1), 5)  # every inner cell is in one cell of each crossing
    assert_array_equal(X.sum(axis=0)[:4], [12, 6, 6, 4])
    cells = pub.cells()
    assert list(cells.iloc[0]) == ["Total", "Total", "Total"]
    assert list(cells.iloc[-1]) == ["y", "w", "Total"]
    assert pub.generating_crossings() == (("c",), ("a", "b"))
    no_total = Publication.from_formula(VS, "a:b - 1")
    assert no_total.crossings == (("a", "b"),) and no_total.n_published == 6
    explicit = Publication.from_crossings(VS, [(), ("a", "b"), "c"])
    assert explicit.n_published == 1 + 6 + 2


def test_aggregate_align_and_frame():
    rng = np.random.default_rng(0)
    t = CountTable.from_dense(rng.integers(0, 5, (2, 3, 2)), VS)
    pub = Publication.from_formula(t, "a*b + a*c")
    z = pub.aggregate(t)
    assert z.dtype == np.int64 and z[0] == t.total
    frame = pub.frame(z).sample(frac=1, random_state=1)  # any row order
    assert_array_equal(pub.align(frame), z)
    partial = frame.iloc[1:]
    assert np.isnan(pub.align(partial)).sum() == 1
    bad = frame.copy()
    bad.iloc[0, 0] = "zz"
    with pytest.raises(DataError, match="is not a cell of the publication"):
        pub.align(bad)
    with pytest.raises(DataError, match="lacks column"):
        pub.align(frame.drop(columns="b"))
    assert pub.additivity_error(z) == 0
    z2 = z.astype(float)
    z2[1] += 1
    assert pub.additivity_error(z2) == 1


def test_structural_zeros_and_large_tables():
    t = CountTable.from_dense(np.ones((2, 3, 2), dtype=int), VS)
    t = CountTable(VS, t.index[1:], t.counts[1:], structural_zeros=[0])
    pub = Publication.from_formula(t, "a*b")
    assert pub.n_inner == 11 and 0 not in pub.inner_index
    big = [Variable(f"v{i}", list(range(100))) for i in range(4)]
    small = CountTable(big, [5, 10**7], [1, 2])
    p = Publication.from_formula(small, "v0*v1")
    assert p.n_inner == 2
    with pytest.raises(TableTooLargeError, match="max_inner"):
        Publication.from_formula(big, "v0")


@pytest.mark.parametrize(
    "spec,match",
    [("a*zz", "unknown variable 'zz'"), ([("a", "a")], "repeats a variable"), (3, "list of crossings")],
)
def test_bad_specs(spec, match):
    with pytest.raises(InvalidArgumentError, match=match):
        Publication.from_formula(VS, spec)


def test_total_label_clash():
    with pytest.raises(InvalidArgumentError, match="total_label"):
        Publication.from_formula([Variable("a", ["Total", "x"])], "a")


def test_restore_additive_input_is_unchanged_and_missing_cells_filled():
    rng = np.random.default_rng(2)
    t = CountTable.from_dense(rng.integers(1, 9, (2, 3, 2)), VS)
    pub = Publication.from_formula(t, "a*b + a*c")
    z = pub.aggregate(t).astype(float)
    res = restore_additivity(pub.X, z)
    assert res.n_iter == 1 and res.converged
    assert_allclose(res.fitted, z, atol=1e-9)
    z_missing = z.copy()
    z_missing[[2, 7]] = np.nan
    res2 = restore_additivity(pub.X, z_missing)
    assert_allclose(res2.fitted, z, atol=1e-9)  # implied by the other cells


def test_sparse_solver_matches_dense(monkeypatch):
    rng = np.random.default_rng(4)
    vs = [Variable("a", list(range(6))), Variable("b", list(range(5))), Variable("c", list(range(4)))]
    t = CountTable.from_dense(rng.poisson(2.0, (6, 5, 4)), vs)
    pub = Publication.from_formula(t, "a*b + a*c + b*c")
    z = pub.aggregate(t) + rng.integers(-3, 4, pub.n_published)
    dense = restore_additivity(pub.X, z)
    monkeypatch.setattr(nnls, "_DENSE_LIMIT", 0)
    sparse = restore_additivity(pub.X, z, tol=1e-12)
    assert dense.n_iter == sparse.n_iter
    assert_allclose(sparse.fitted, dense.fitted, atol=1e-6)
    for r in (dense, sparse):
        assert np.all(r.inner >= 0) and np.all(r.fitted >= -1e-9)
        assert_allclose(pub.X.T @ r.inner, r.fitted, atol=1e-6)


def test_expected_inner_matches_ipf_of_the_original():
    rng = np.random.default_rng(5)
    t = CountTable.from_dense(rng.integers(0, 9, (2, 3, 2)), VS)
    pub = Publication.from_formula(t, "a*b + b*c", zeros=True)  # expected frequencies cover the empty cells too
    res = expected_inner(pub, pub.aggregate(t))
    dense = t.dense().astype(float)
    ab, bc, b = dense.sum(2), dense.sum(0), dense.sum((0, 2))
    closed = ab[:, :, None] * bc[None, :, :] / np.where(b > 0, b, 1)[None, :, None]
    assert_allclose(res.fitted.dense(), closed, atol=1e-8)
    assert res.converged and res.max_margin_error < 1e-6
    with pytest.raises(DataError, match="missing"):
        expected_inner(pub, np.full(pub.n_published, np.nan))


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"z": [1.0, 2.0]}, DataError, "one value per published cell"),
        ({"z": [1.0, np.inf, 2.0]}, DataError, "finite"),
        ({"z": [1.0, 2.0, 3.0], "tol": 0}, InvalidArgumentError, "'tol' parameter"),
        ({"z": [1.0, 2.0, 3.0], "max_iter": 0}, InvalidArgumentError, "'max_iter' parameter"),
    ],
)
def test_restore_bad_input(kwargs, exc, match):
    X = np.array([[1, 1, 0], [1, 0, 1]])
    with pytest.raises(exc, match=match):
        restore_additivity(X, **kwargs)


@pytest.mark.parametrize("zeros", [True, False])
def test_inner_positions_and_aggregate_of_a_sparse_table(zeros):
    """A table of some non-zero cells in a publication of every cell (its own rows, no search) or of its non-zero
    cells (rows found by search): the rows, and the published counts X^T y of the dense counts; a cell outside
    the inner cells has no row and is refused."""
    dense = np.zeros((2, 3, 2), dtype=np.int64)
    dense[0, 1, 0], dense[1, 2, 1], dense[1, 0, 0] = 4, 7, 1
    t = CountTable.from_dense(dense, VS)
    pub = Publication.from_formula(t, "a*b + c", zeros=zeros)
    rows = pub.inner_positions(np.asarray(t.index))
    assert_array_equal(pub.inner_index[rows], t.index)
    assert_array_equal(pub.aggregate(t), pub.X.T @ dense.reshape(-1)[pub.inner_index])
    if not zeros:
        assert pub.inner_positions(np.asarray([0])) is None
        with pytest.raises(DataError, match="outside the publication's inner cells"):
            pub.aggregate(CountTable.from_dense(np.ones((2, 3, 2), dtype=np.int64), VS))
    assert pub.inner_positions(np.asarray([12 if zeros else 5])) is None
