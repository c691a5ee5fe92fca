"""pMSE, pMSE ratio, SPECKS and AUC (course 002 section 3.5.1; Snoke et al. 2018)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics.microdata import ks_distance, propensity_metrics, roc_auc

NUMERIC = ["age", "education-num", "hours-per-week", "sex", "race", "relationship"]


def test_correct_synthesizer_gives_ratio_near_one(adult):
    """Synthetic records drawn from the original's distribution (resampled original records):
    the mean ratio over 12 seeds is 1 within 4 SE; one replicate's ratio has SD sqrt(2 / (k - 1))."""
    pool = adult[NUMERIC]
    gen = np.random.default_rng(11)
    ratios, std = [], []
    for i in range(12):
        o = pool.iloc[gen.integers(0, len(pool), 1500)].reset_index(drop=True)
        s = o.iloc[gen.integers(0, len(o), 1500)].reset_index(drop=True)
        r = propensity_metrics(o, s, rng=i)
        ratios.append(r.pmse_ratio)
        std.append(r.standardized_pmse)
        assert r.n_params == 1 + 6 + 15  # intercept, main effects, pairwise products
    se_theory = np.sqrt(2 / (22 - 1)) / np.sqrt(len(ratios))
    assert abs(np.mean(ratios) - 1) < 4 * se_theory
    # the standardized pMSE is approximately N(0, 1)
    assert abs(np.mean(std)) < 4 / np.sqrt(len(std))
    assert 0.3 < np.std(std, ddof=1) < 2.0


def test_two_samples_of_one_population_give_ratio_one_over_one_minus_c(adult):
    """Independent samples of one population: both samples vary, so the ratio is 1/(1-c) = 2."""
    pool = adult[NUMERIC]
    gen = np.random.default_rng(12)
    ratios = []
    for i in range(12):
        o = pool.iloc[gen.integers(0, len(pool), 1500)].reset_index(drop=True)
        s = pool.iloc[gen.integers(0, len(pool), 1500)].reset_index(drop=True)
        ratios.append(propensity_metrics(o, s, rng=i).pmse_ratio)
    assert abs(np.mean(ratios) - 2) < 4 * 2 * np.sqrt(2 / 21) / np.sqrt(len(ratios))


def test_correct_synthesizer_categorical_columns(adult):
    pool = adult[["sex", "race", "relationship", "income>50K"]]
    gen = np.random.default_rng(5)
    cat = list(pool.columns)
    ratios = []
    for i in range(8):
        o = pool.iloc[gen.integers(0, len(pool), 2000)].reset_index(drop=True)
        s = o.iloc[gen.integers(0, len(o), 2000)].reset_index(drop=True)
        r = propensity_metrics(o, s, categorical=cat, rng=i)
        ratios.append(r.pmse_ratio)
    k = r.n_params
    assert k > 30
    assert abs(np.mean(ratios) - 1) < 4 * np.sqrt(2 / (k - 1)) / np.sqrt(len(ratios)) + 0.05


def test_independent_columns_are_detected(adult, independent):
    o = adult.sample(3000, random_state=4).reset_index(drop=True)
    s = independent(o, np.random.default_rng(6))
    r = propensity_metrics(o, s, rng=1)
    assert r.pmse_ratio > 20
    assert r.auc > 0.7
    assert r.specks > 0.2
    same = propensity_metrics(o, adult.sample(3000, random_state=5).reset_index(drop=True), rng=1)
    assert same.pmse_ratio < 3 and abs(same.auc - 0.5) < 0.05


def test_tree_ratio_against_permutations(adult, independent):
    o = adult.sample(2000, random_state=7).reset_index(drop=True)[NUMERIC]
    s = independent(o, np.random.default_rng(8))
    r = propensity_metrics(o, s, method="cart", n_permutations=5, rng=2)
    assert r.method == "cart" and r.pmse_ratio > 1.5
    assert r.auc > 0.6


def test_definitions_on_returned_scores(adult):
    o = adult.sample(800, random_state=9).reset_index(drop=True)[NUMERIC]
    s = adult.sample(600, random_state=10).reset_index(drop=True)[NUMERIC]
    r = propensity_metrics(o, s, rng=3)
    c = 600 / 1400
    assert_allclose(r.c, c)
    assert_allclose(r.pmse, np.mean((r.scores - c) ** 2))
    assert_allclose(r.pmse_null, (r.n_params - 1) * (1 - c) ** 2 * c / 1400)
    assert_allclose(r.pmse_ratio, r.pmse / r.pmse_null)
    from scipy.stats import ks_2samp

    assert_allclose(r.specks, ks_2samp(r.scores[r.is_synthetic], r.scores[~r.is_synthetic]).statistic)
    # the logistic fit's propensities average to c (score equation of the intercept)
    assert_allclose(r.scores.mean(), c, atol=1e-6)


def test_ks_and_auc_helpers():
    from sklearn.metrics import roc_auc_score

    gen = np.random.default_rng(0)
    a, b = gen.normal(size=300), gen.normal(0.3, size=200).round(1)
    from scipy.stats import ks_2samp

    assert_allclose(ks_distance(a, b), ks_2samp(a, b).statistic)
    scores = np.r_[a, b].round(1)
    labels = np.r_[np.zeros(300), np.ones(200)]
    assert_allclose(roc_auc(scores, labels), roc_auc_score(labels, scores))


def test_main_effects_only_and_parameter_cap(adult):
    o = adult.sample(500, random_state=1)[NUMERIC]
    r = propensity_metrics(o, o, max_order=1, rng=0)
    assert r.n_params == 7
    assert_allclose(r.pmse, 0.0, atol=1e-12)
    capped = propensity_metrics(o, o, max_params=10, rng=0)
    assert capped.n_params <= 10


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"method": "forest"}, InvalidArgumentError),
        ({"max_order": 3}, InvalidArgumentError),
        ({"test_size": 1.0}, InvalidArgumentError),
        ({"max_params": 3, "categorical": ["a"]}, InvalidArgumentError),
        ({"columns": ["zz"]}, DataError),
        ({"n_permutations": 0}, InvalidArgumentError),
    ],
)
def test_bad_input(kwargs, error):
    o = pd.DataFrame({"a": list("xyzwv") * 4, "b": np.arange(20.0)})
    with pytest.raises(error):
        propensity_metrics(o, o, **kwargs)
