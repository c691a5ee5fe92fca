"""Specific utility of a regression: CI overlap and SSO (course 002, sections 3.10 to 3.13)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics._overlap import ci_overlap, combine_fully_synthetic
from cellsafe.metrics.microdata import fit_logistic, fit_ols, regression_utility

REF = Path(__file__).resolve().parents[2] / "reference" / "microdata"


@pytest.fixture(scope="module")
def glm_data():
    return pd.read_csv(REF / "glm_data.csv"), pd.read_csv(REF / "glm_reference.csv", skipinitialspace=True)


def test_ols_and_logistic_against_r(glm_data):
    d, ref = glm_data
    r = regression_utility(d, d, "y ~ x1 * g")
    want = ref[ref.model == "ols"].set_index("term")
    got = r.coefficients.loc[want.index]
    assert_allclose(got["estimate_original"], want["estimate"], rtol=1e-9)
    assert_allclose(got["se_original"], want["se"], rtol=1e-9)
    r = regression_utility(d, d, "z ~ x1 + g", family="binomial")
    want = ref[ref.model == "logistic"].set_index("term")
    got = r.coefficients.loc[want.index]
    assert_allclose(got["estimate_original"], want["estimate"], rtol=1e-7)
    # R's glm reports standard errors from the working weights of its last-but-one iterate
    assert_allclose(got["se_original"], want["se"], rtol=1e-4)


def test_identical_data_full_overlap_under_the_partial_rule(glm_data):
    d, _ = glm_data
    r = regression_utility(d, [d, d], "y ~ x1 + g", synthesis="partially")
    # equal intervals up to the t (original, 296 df) versus normal (combined, b = 0) quantile
    assert_allclose(r.coefficients["overlap"], 1.0, atol=5e-3)
    r = regression_utility(d, [d, d], "z ~ x1 + g", family="binomial", synthesis="partially")
    assert_allclose(r.coefficients["overlap"], 1.0)
    assert r.sso_share == 1.0 and r.m == 2 and r.rule == "partially"


def test_fully_synthetic_rule_widens_the_interval(glm_data):
    d, _ = glm_data
    r = regression_utility(d, d, "y ~ x1")
    c = r.coefficients
    # one implicate with n_syn = n: variance doubles (Raab et al. 2016)
    assert_allclose(c["se_synthetic"], np.sqrt(2) * c["se_original"])
    comb = combine_fully_synthetic(c["estimate_original"].to_numpy()[None], (c["se_original"].to_numpy() ** 2)[None], len(d), len(d))
    lo, up = comb.conf_int(0.95)
    assert_allclose(c["lower_synthetic"], lo)
    assert_allclose(c["overlap"], ci_overlap(c["lower_original"], c["upper_original"], lo, up, clamp=False))


def test_course_3_13_sso_example():
    """The course's means 2.79 (2.31, 3.28) and 2.08 (1.51, 2.66): SSO holds."""
    lo_o, up_o, lo_s, up_s = 2.308338, 3.276984, 1.512416, 2.656643
    ov = ci_overlap(lo_o, up_o, lo_s, up_s, clamp=False)
    assert ov > 0
    gen = np.random.default_rng(0)
    o = pd.DataFrame({"y": gen.normal(2.8, 2.4, 100)})
    s = pd.DataFrame({"y": gen.normal(2.1, 2.9, 100)})
    r = regression_utility(o, s, "y ~ 1")
    assert list(r.coefficients.index) == ["(Intercept)"]
    assert bool(r.coefficients["same_sign"].iloc[0]) and bool(r.coefficients["same_significance"].iloc[0])


def test_gap_gives_negative_overlap_and_no_sso():
    gen = np.random.default_rng(1)
    x = gen.normal(size=500)
    o = pd.DataFrame({"x": x, "y": 2 * x + gen.normal(size=500)})
    s = pd.DataFrame({"x": x, "y": -2 * x + gen.normal(size=500)})
    r = regression_utility(o, s, "y ~ x")
    assert r.coefficients.loc["x", "overlap"] < 0
    assert not r.coefficients.loc["x", "sso"]


def test_glm_helpers_directly():
    x = np.column_stack([np.ones(5), [0.0, 1, 2, 3, 4]])
    f = fit_ols(x, np.array([1.0, 3, 5, 7, 9.5]))
    assert f.df_resid == 3
    with pytest.raises(DataError):
        fit_ols(np.column_stack([np.ones(3), np.ones(3)]), np.ones(3))
    g = fit_logistic(x, np.array([0.0, 1, 0, 1, 1]))
    assert g.converged and g.n_iter < 20


@pytest.mark.parametrize(
    "formula, kwargs, error",
    [
        ("y x", {}, InvalidArgumentError),
        ("y ~ x", {"family": "poisson"}, InvalidArgumentError),
        ("y ~ x", {"synthesis": "partially"}, InvalidArgumentError),
        ("y ~ nope", {}, InvalidArgumentError),
        ("g ~ x", {"family": "binomial"}, DataError),
        ("y ~ x", {"level": 1.0}, InvalidArgumentError),
    ],
)
def test_bad_input(formula, kwargs, error):
    d = pd.DataFrame({"x": [0.0, 1, 2, 3], "y": [0.0, 1, 1, 3], "g": list("abca")})
    with pytest.raises(error):
        regression_utility(d, d, formula, **kwargs)


def test_unknown_synthetic_category():
    d = pd.DataFrame({"x": list("abab"), "y": [0.0, 1, 1, 3]})
    s = pd.DataFrame({"x": list("abcb"), "y": [0.0, 1, 1, 3]})
    with pytest.raises(DataError, match="category 'c'"):
        regression_utility(d, s, "y ~ x")
