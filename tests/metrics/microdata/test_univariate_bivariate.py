"""Univariate and bivariate comparisons (course 002, sections 3.3, 3.4 and 3.7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics.microdata import compare_bivariate, compare_univariate, cramers_v, matrix_difference


def test_course_3_7_correlation_difference():
    synth = [[1.00, 0.5, 0.75], [0.50, 1.0, 0.80], [0.75, 0.8, 1.00]]
    conf = [[1.00, 0.35, 0.1], [0.35, 1.00, 0.9], [0.10, 0.90, 1.0]]
    d = matrix_difference(conf, synth)
    assert_allclose(d.mae, 0.3)
    assert_allclose(d.rmse, 0.389444, atol=1e-6)
    assert_allclose(d.difference.to_numpy()[np.tril_indices(3, -1)], [0.15, 0.65, -0.1])


def test_course_3_4_mae_of_six_differences():
    # section 3.4: MAE = (|-0.15| + |0.01| + |0.1| + |-0.15| + |0.15| + |0.02|) / 6 = 0.0966667
    diffs = [-0.15, 0.01, 0.1, -0.15, 0.15, 0.02]
    o = np.eye(4)
    s = np.eye(4)
    s[np.tril_indices(4, -1)] = diffs
    s = np.tril(s) + np.tril(s, -1).T
    assert_allclose(matrix_difference(o, s).mae, 0.0966667, atol=1e-7)


def test_moments_percentiles_and_zeros():
    gen = np.random.default_rng(0)
    x = np.r_[np.zeros(50), gen.gamma(2.0, size=450)]
    y = gen.gamma(2.0, size=500)
    u = compare_univariate(pd.DataFrame({"x": x}), pd.DataFrame({"x": y}))
    st = u.statistics.set_index("statistic")
    assert_allclose(st.loc["mean", "original"], x.mean())
    assert_allclose(st.loc["sd", "synthetic"], y.std(ddof=1))
    assert_allclose(st.loc["skewness", "original"], stats.skew(x))
    assert_allclose(st.loc["kurtosis", "original"], stats.kurtosis(x))
    assert_allclose(st.loc["p50", "synthetic"], np.median(y))
    assert_allclose(st.loc["share_zero", "original"], 0.1)
    assert_allclose(st.loc["share_zero", "synthetic"], 0.0)


def test_frequencies_of_categories_only_in_one_data_set():
    o = pd.DataFrame({"s": ["Adelie"] * 152 + ["Chinstrap"] * 68 + ["Gentoo"] * 124})
    s = pd.DataFrame({"s": ["Adelie"] * 138 + ["Chinstrap"] * 68 + ["Gentoo"] * 116 + ["Emperor"] * 2})
    u = compare_univariate(o, s)
    f = u.frequencies.set_index("category")
    assert f.loc["Adelie", "n_original"] == 152 and f.loc["Gentoo", "n_synthetic"] == 116
    assert f.loc["Emperor", "n_original"] == 0 and f.loc["Emperor", "n_synthetic"] == 2
    assert_allclose(f["p_original"].sum(), 1.0)
    assert_allclose(u.total_variation["s"], 0.5 * np.abs(f["p_synthetic"] - f["p_original"]).sum())


def test_cramers_v_against_scipy():
    gen = np.random.default_rng(1)
    a = gen.integers(0, 3, 400)
    b = (a + gen.integers(0, 2, 400)) % 4
    tab = pd.crosstab(a, b).to_numpy()
    assert_allclose(cramers_v(a, b, 3, 4), stats.contingency.association(tab, method="cramer"))


def test_bivariate_on_adult(adult, independent):
    o = adult.sample(3000, random_state=1).reset_index(drop=True)[["age", "education-num", "hours-per-week", "sex", "race"]]
    same = compare_bivariate(o, o, categorical=["sex", "race"])
    assert same.correlation.mae == 0 and same.cramers_v.mae == 0
    ind = independent(o, np.random.default_rng(2))
    r = compare_bivariate(o, ind, categorical=["sex", "race"])
    assert r.correlation.mae > 0.02
    assert list(r.correlation.original.columns) == ["age", "education-num", "hours-per-week"]
    assert r.cramers_v.original.shape == (2, 2)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: matrix_difference(np.eye(2), np.eye(3)), InvalidArgumentError),
        (lambda: compare_univariate(pd.DataFrame({"a": [1]}), pd.DataFrame({"b": [1]})), DataError),
        (lambda: compare_univariate(pd.DataFrame({"a": [1]}), pd.DataFrame({"a": []})), DataError),
        (lambda: compare_bivariate(pd.DataFrame({"a": [1]}), [], columns=["a"]), InvalidArgumentError),
        (lambda: compare_univariate(pd.DataFrame({"a": [1]}), [pd.DataFrame({"a": [1]})] * 2), InvalidArgumentError),
    ],
)
def test_bad_input(call, error):
    with pytest.raises(error):
        call()
