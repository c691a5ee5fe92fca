"""IPF against R's loglin, structural zeros, targets, and the errors and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from _loglinear_fixtures import CASES, REF, dense_from, esc_three_way, load_input
from hypothesis import given, settings, assume
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.exceptions import CellsafeWarning, ConvergenceWarning, DataError, InvalidArgumentError
from cellsafe.fitting import IPFResult, ipf
from cellsafe.table import CountTable, Variable


@pytest.mark.parametrize("case", list(CASES.itertuples()), ids=list(CASES["case"]))
def test_ipf_matches_r_loglin(case):
    table, variables = load_input(case.input)
    res = ipf(table, case.model, tol=1e-14, max_iter=10_000)
    assert res.converged
    ref = pd.read_csv(REF / f"ipf_{case.case}.csv")
    expected = dense_from(CountTable.from_frame(ref, variables, count="fitted", allow_fractional=True))
    assert_allclose(dense_from(res.fitted), expected, rtol=1e-8, atol=1e-8)
    # the fitted table reproduces every generating margin
    for m in res.margins:
        assert_allclose(dense_from(res.fitted.margin(list(m))), dense_from(table.margin(list(m))), rtol=1e-10)


def test_margins_as_lists_equal_formula():
    table, _ = load_input("ucb_admissions.csv")
    a = ipf(table, "Admit*Gender + Admit*Dept + Gender*Dept")
    b = ipf(table, [["Admit", "Gender"], ["Dept", "Admit"], ("Gender", "Dept")])
    assert_allclose(dense_from(a.fitted), dense_from(b.fitted), rtol=1e-9)
    assert a.margins == (("Admit", "Gender"), ("Admit", "Dept"), ("Gender", "Dept"))


def test_result_is_frozen_and_readable():
    table, _ = load_input("hair_eye_color.csv")
    res = ipf(table, "Hair*Eye + Sex")
    assert isinstance(res, IPFResult)
    assert res.fitted.is_integer is False
    assert res.fitted.names == table.names
    assert "converged=True" in repr(res) and "Sex + Hair:Eye" in repr(res)
    with pytest.raises(AttributeError):
        res.n_iter = 3  # type: ignore[misc]
    assert res.max_deviation <= 1e-8 * table.total


def test_structural_zeros_stay_zero_and_margins_fit():
    rng = np.random.default_rng(7)
    v = [Variable("a", list("pqr")), Variable("b", list("uvw")), Variable("c", list("xy"))]
    counts = rng.poisson(20, size=(3, 3, 2))
    counts[0, 1, :] = 0  # impossible combination a=p, b=v
    counts[2, 2, 1] = 0
    sz = np.ravel_multi_index(([0, 0, 2], [1, 1, 2], [0, 1, 1]), (3, 3, 2))
    t = CountTable.from_dense(counts, v, structural_zeros=sz)
    res = ipf(t, "(a + b + c)^2", tol=1e-12)
    assert res.converged
    assert_array_equal(res.fitted.structural_zeros, sz)
    assert_array_equal(res.fitted.lookup(sz), 0.0)
    for m in res.margins:
        assert_allclose(dense_from(res.fitted.margin(list(m))), dense_from(t.margin(list(m))), rtol=1e-9)


def test_zero_margin_cells_become_zero():
    table, _ = load_input("titanic.csv")
    res = ipf(table, "(Class + Sex + Age + Survived)^2", tol=1e-12, max_iter=5000)
    codes = res.fitted.codes()
    crew_child = (codes[:, 0] == 3) & (codes[:, 2] == 0)  # Class = Crew, Age = Child: margin 0
    assert not crew_child.any()


def test_non_integer_targets_and_start():
    table, variables = load_input("ucb_admissions.csv")
    ad = table.margin(["Admit", "Dept"])
    gd = table.margin(["Gender", "Dept"])
    scale = 0.37
    targets = {
        ("Dept", "Admit"): ad.with_counts(ad.index, ad.counts * scale),
        ("Gender", "Dept"): gd.with_counts(gd.index, gd.counts * scale),
    }
    res = ipf(table, "Admit*Dept + Gender*Dept", targets=targets, tol=1e-12)
    plain = ipf(table, "Admit*Dept + Gender*Dept", tol=1e-12)
    assert_allclose(dense_from(res.fitted), scale * dense_from(plain.fitted), rtol=1e-9)
    # IPF keeps the start's higher-order interactions: a start that already has the margins is returned
    started = ipf(table, "Admit*Dept + Gender*Dept", start=table, tol=1e-12)
    assert_allclose(dense_from(started.fitted), dense_from(table), rtol=1e-12)


def test_sparse_start_fits_only_its_cells_and_equals_dense():
    table, _ = load_input("random4.csv")
    model = "a*b*c + c*d"
    dense = ipf(table, model, tol=1e-13)
    # start on the cells where every margin is positive (here: all of them), but given sparsely
    sparse_start = table.with_counts(np.arange(table.n_cells), np.ones(table.n_cells))
    res = ipf(table, model, start=sparse_start, tol=1e-13, max_dense=10)
    assert_allclose(dense_from(res.fitted), dense_from(dense.fitted), rtol=1e-9)
    # a start holding a few cells fits only those
    few = table.with_counts(table.index[::3], np.ones(table.index[::3].shape[0]))
    res_few = ipf(table, "a + b", start=few, tol=1e-10, max_iter=5000)
    assert set(res_few.fitted.index) <= set(table.index[::3])


def test_large_table_without_start_warns_and_uses_nonzero_cells():
    table, _ = load_input("ucb_admissions.csv")
    with pytest.warns(CellsafeWarning, match="fitting only its"):
        res = ipf(table, "Admit*Gender*Dept", max_dense=5)
    assert_allclose(dense_from(res.fitted), dense_from(table))


def test_esc_like_all_two_way():
    t = esc_three_way()
    res = ipf(t, "(ethnicity + age + language)^2")
    assert res.converged
    assert_allclose(res.fitted.total, t.total, rtol=1e-10)
    for m in res.margins:
        assert (
            np.max(np.abs(dense_from(res.fitted.margin(list(m))) - dense_from(t.margin(list(m)))))
            <= 1e-8 * t.total * 10
        )


def test_non_convergence_warns():
    table, _ = load_input("titanic.csv")
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 cycles"):
        res = ipf(table, "(Class + Sex + Age + Survived)^2", max_iter=2, tol=1e-14)
    assert not res.converged and res.n_iter == 2
    assert res.max_deviation > 0


def _bad_target(table):
    m = table.margin(["Admit", "Dept"])
    return m.with_counts(m.index, m.counts * 2)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"margins": "Admit*Sex"}, InvalidArgumentError, "unknown variable 'Sex'"),
        ({"margins": [["Admit", "Colour"]]}, InvalidArgumentError, "unknown variable 'Colour'"),
        ({"margins": [["Admit", "Admit"]]}, InvalidArgumentError, "repeats a variable"),
        ({"margins": []}, InvalidArgumentError, "non-empty list"),
        ({"margins": "Admit*"}, InvalidArgumentError, "cannot parse formula"),
        ({"margins": "Admit", "tol": 0.0}, InvalidArgumentError, "'tol' parameter of ipf"),
        ({"margins": "Admit", "max_iter": 0}, InvalidArgumentError, "'max_iter' parameter of ipf"),
        ({"margins": "Admit", "targets": {("Gender",): None}}, InvalidArgumentError, "not one of the model's margins"),
        ({"margins": "Admit*Dept + Gender*Dept", "targets": "bad"}, InvalidArgumentError, "inconsistent|margin"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    table, _ = load_input("ucb_admissions.csv")
    if kwargs.get("targets") == "bad":
        kwargs = dict(kwargs, targets={("Admit", "Dept"): _bad_target(table)})
        error = DataError
    with pytest.raises(error, match=match):
        ipf(table, **kwargs)


def test_inconsistent_shared_margins_error():
    table, _ = load_input("ucb_admissions.csv")
    ad = table.margin(["Admit", "Dept"])
    counts = ad.counts.astype(float).copy()
    counts[0] += 10.0
    counts[1] -= 10.0  # same total, different Dept margin
    with pytest.raises(DataError, match="give different sums over"):
        ipf(table, "Admit*Dept + Gender*Dept", targets={("Admit", "Dept"): ad.with_counts(ad.index, counts)})


def test_target_on_wrong_categories_error():
    table, _ = load_input("ucb_admissions.csv")
    other = CountTable.from_frame(
        pd.DataFrame({"Admit": ["Admitted", "Rejected"], "n": [1, 2]}), ["Admit"], count="n"
    )  # categories sorted: same here, so rename one to force a mismatch
    bad = CountTable([Variable("Admit", ["Rejected", "Admitted"])], other.index, other.counts)
    with pytest.raises(InvalidArgumentError, match="categories"):
        ipf(table, "Admit + Dept", targets={("Admit",): bad})


def test_positive_target_on_structural_zeros_error():
    v = [Variable("a", ["x", "y"]), Variable("b", ["u", "v"])]
    t = CountTable.from_dense(np.array([[0, 5], [3, 4]]), v, structural_zeros=[0])
    target = CountTable.from_dense(np.array([3.0, 9.0]), [v[1]])  # b=u must get 3: only (y, u) can hold it
    res = ipf(t, "a + b", targets={("b",): target}, tol=1e-12, max_iter=5000)
    assert res.fitted.lookup([0])[0] == 0
    # all cells of margin cell b=u structural: a positive target is impossible
    t2 = CountTable.from_dense(np.array([[0, 5], [0, 4]]), v, structural_zeros=[0, 2])
    with pytest.raises(DataError, match="every cell it sums is a structural zero"):
        ipf(t2, "a + b", targets={("b",): CountTable.from_dense(np.array([1.0, 8.0]), [v[1]])})


def test_no_python_warning_on_plain_fit():
    table, _ = load_input("hair_eye_color.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ipf(table, "(Hair + Eye + Sex)^2")


@st.composite
def _tables(draw):
    shape = draw(st.lists(st.integers(2, 4), min_size=3, max_size=3))
    n = int(np.prod(shape))
    counts = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    variables = [Variable(name, [f"{name}{i}" for i in range(s)]) for name, s in zip("abc", shape)]
    return CountTable.from_dense(np.array(counts).reshape(shape), variables)


@settings(max_examples=40, deadline=None)
@given(_tables(), st.sampled_from(["(a + b + c)^2", "a*b + c", "a*b + b*c", "a + b + c"]))
def test_property_margins_reproduced_dense_equals_sparse(table, model):
    if table.total == 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        dense = ipf(table, model, tol=1e-12, max_iter=5000)
        every = table.with_counts(np.arange(table.n_cells), np.ones(table.n_cells))
        sparse = ipf(table, model, start=every, tol=1e-12, max_iter=5000, max_dense=1)
    # fits whose limit lies on the boundary (cells tending to 0) converge sublinearly: the two
    # starts are then only close, not equal, after any number of cycles
    assume(dense.converged and sparse.converged)
    assert np.all(dense.fitted.counts > 0)
    assert_allclose(dense_from(dense.fitted), dense_from(sparse.fitted), rtol=1e-9, atol=1e-9)
    if dense.converged:
        for m in dense.margins:
            dev = np.abs(dense_from(dense.fitted.margin(list(m))) - dense_from(table.margin(list(m))))
            assert dev.max() <= 1e-10 * max(1, table.total) * 10


def test_margin_too_large_error():
    from cellsafe.exceptions import TableTooLargeError

    variables = [Variable(f"v{i}", list(range(100))) for i in range(5)]
    t = CountTable(variables, [0, 12345], [1, 2])
    with pytest.raises(TableTooLargeError, match="margin"):
        ipf(t, [["v0", "v1", "v2", "v3"]], start=t)
