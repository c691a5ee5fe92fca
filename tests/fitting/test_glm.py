"""The Poisson log-linear GLM against R's glm(family = poisson), names, infinite and aliased estimates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _loglinear_fixtures import CASES, ESC_MODEL, REF, dense_from, esc_three_way, load_input
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.exceptions import CellsafeWarning, ConvergenceWarning, InvalidArgumentError
from cellsafe.fitting import LogLinearFit, fit_loglinear, ipf
from cellsafe.fitting.glm import loglinear_design
from cellsafe.table import CountTable, Variable


def _fit(table, model, **kw):
    with pytest.warns(CellsafeWarning) if model == "(Class + Sex + Age + Survived)^2" else _nowarn():
        return fit_loglinear(table, model, **kw)


class _nowarn:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("case", list(CASES.itertuples()), ids=list(CASES["case"]))
def test_glm_matches_r(case):
    table, _ = load_input(case.input)
    fit = _fit(table, case.model)
    ref = pd.read_csv(REF / f"glm_{case.case}.csv").set_index("term")
    assert list(fit.params.index) == list(ref.index)  # R's names and order
    ok = ~(fit.infinite | fit.aliased)
    assert_allclose(fit.params[ok], ref["estimate"][ok], rtol=1e-6, atol=1e-6)
    assert_allclose(fit.bse[ok], ref["se"][ok], rtol=1e-6, atol=1e-6)
    assert fit.deviance == pytest.approx(float(case.deviance), rel=1e-8, abs=1e-8)
    assert fit.df_residual == case.df_residual
    assert fit.n_params == case.n_coef
    assert fit.converged
    # the GLM and IPF fit the same model
    ipf_fit = ipf(table, case.model, tol=1e-13, max_iter=10_000).fitted
    assert_allclose(dense_from(fit.fitted), dense_from(ipf_fit), rtol=1e-7, atol=1e-7)


def test_titanic_zero_margin_gives_infinite_not_huge():
    table, _ = load_input("titanic.csv")
    with pytest.warns(CellsafeWarning, match="2 of the 19 parameters .* are infinite"):
        fit = fit_loglinear(table, "(Class + Sex + Age + Survived)^2")
    inf = fit.infinite[fit.infinite].index.tolist()
    assert inf == ["ClassCrew", "ClassCrew:AgeAdult"]
    ref = pd.read_csv(REF / "glm_titanic_2way.csv").set_index("term")
    # R iterates towards -inf / +inf: estimates near -29 and +31 with standard errors of about 1e6
    assert ref.loc["ClassCrew", "estimate"] < -20 and ref.loc["ClassCrew", "se"] > 1e4
    assert fit.params[inf].isna().all() and fit.bse[inf].isna().all()
    assert not fit.aliased.any()
    coefs = fit.to_frame()
    assert coefs.loc["ClassCrew", "infinite"]
    assert "ClassCrew" in fit.summary()


def test_zero_sufficient_statistic_gives_minus_inf():
    v = [Variable("a", ["x", "y", "z"]), Variable("b", ["u", "v"])]
    t = CountTable.from_dense(np.array([[10, 20], [30, 0], [5, 6]]), v)
    with pytest.warns(CellsafeWarning, match="infinite"):
        fit = fit_loglinear(t, "a*b")
    assert fit.params["ay:bv"] == -np.inf
    assert np.isnan(fit.bse["ay:bv"])
    assert fit.fitted.lookup([3])[0] == 0.0  # cell (y, v)
    assert fit.deviance == pytest.approx(0.0, abs=1e-9)


def test_structural_zero_makes_a_parameter_aliased():
    v = [Variable("a", ["x", "y"]), Variable("b", ["u", "v"])]
    t = CountTable.from_dense(np.array([[10, 20], [30, 0]]), v, structural_zeros=[3])
    fit = fit_loglinear(t, "a*b")
    assert fit.aliased.tolist() == [False, False, False, True]
    assert np.isnan(fit.params["ay:bv"])
    assert fit.df_residual == 0
    assert_allclose(fit.fitted.lookup([0, 1, 2]), [10, 20, 30])


def test_r_names_for_interactions_first_variable_fastest():
    v = [Variable("eth", ["A", "B", "C"]), Variable("age", ["1", "2", "3"])]
    t = CountTable.from_dense(np.arange(1, 10).reshape(3, 3), v)
    X, names = loglinear_design(t, "eth*age")
    assert names == [
        "(Intercept)",
        "ethB",
        "ethC",
        "age2",
        "age3",
        "ethB:age2",
        "ethC:age2",
        "ethB:age3",
        "ethC:age3",
    ]
    assert X.shape == (9, 9)
    # cell (C, 3) has flat index 8: intercept, ethC, age3, ethC:age3
    assert_array_equal(X.toarray()[8], [1, 0, 1, 0, 1, 0, 0, 0, 1])


def test_esc_all_two_way_has_608_parameters():
    t = esc_three_way()
    with pytest.warns(CellsafeWarning) if t.margin(["ethnicity", "language"]).nnz < 140 else _nowarn():
        fit = fit_loglinear(t, ESC_MODEL)
    assert isinstance(fit, LogLinearFit)
    assert fit.n_params == 608
    assert fit.n_cells == 2660
    assert fit.converged
    ok = ~(fit.infinite | fit.aliased)
    assert np.all(np.isfinite(fit.params[ok])) and np.all(fit.bse[ok] > 0)
    assert fit.fitted.total == pytest.approx(t.total, rel=1e-9)
    ci = fit.conf_int()
    assert np.all(ci["lower"][ok] < fit.params[ok]) and np.all(fit.params[ok] < ci["upper"][ok])
    assert "n_params=608" in repr(fit)
    assert fit._repr_html_().count("<tr") >= 609


def test_conf_int_level():
    table, _ = load_input("ucb_admissions.csv")
    fit = fit_loglinear(table, "Admit*Dept + Gender*Dept", level=0.9)
    ci = fit.conf_int()
    assert_allclose(ci["upper"] - fit.params, 1.6448536269514722 * fit.bse)
    assert_allclose(fit.conf_int(0.95)["upper"] - fit.params, 1.959963984540054 * fit.bse)


def test_non_convergence_warns():
    table, _ = load_input("hair_eye_color.csv")
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        fit = fit_loglinear(table, "(Hair + Eye + Sex)^2", max_iter=1)
    assert not fit.converged


@pytest.mark.parametrize(
    "model, kwargs, match",
    [
        ("Admit*Colour", {}, "unknown variable 'Colour'"),
        ("Admit +", {}, "cannot parse formula"),
        ("Admit", {"level": 1.5}, "'level' parameter of fit_loglinear"),
        ("Admit", {"tol": -1.0}, "'tol' parameter of fit_loglinear"),
        ("Admit", {"max_iter": 0}, "'max_iter' parameter of fit_loglinear"),
        ("Admit*Dept - 1", {}, "drops the intercept"),
        ("Admit:Dept", {}, "not hierarchical"),
        ("1", {}, "names no variable"),
    ],
)
def test_bad_input(model, kwargs, match):
    table, _ = load_input("ucb_admissions.csv")
    with pytest.raises(InvalidArgumentError, match=match):
        fit_loglinear(table, model, **kwargs)


def test_model_on_a_margin_of_a_larger_table():
    table, _ = load_input("titanic.csv")
    fit = fit_loglinear(table, "Class*Survived")
    assert fit.fitted.names == ["Class", "Survived"]
    assert fit.n_cells == 8 and fit.df_residual == 0
    assert_allclose(dense_from(fit.fitted), dense_from(table.margin(["Class", "Survived"])), rtol=1e-9)


def test_too_many_parameters_error():
    from cellsafe.exceptions import TableTooLargeError

    variables = [Variable(f"v{i}", list(range(150))) for i in range(3)]
    t = CountTable(variables, [0, 5], [1, 2])
    with pytest.raises(TableTooLargeError, match="parameters"):
        fit_loglinear(t, "(v0 + v1 + v2)^2")
