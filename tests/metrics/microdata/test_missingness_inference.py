"""The missing-values section of the evaluation, and inference from multinomial and ordinal models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe.metrics import combine_fully_synthetic, combine_partially_synthetic
from cellsafe.metrics.microdata import compare_missingness, evaluate_microdata, regression_utility

REF = Path(__file__).resolve().parents[2] / "reference" / "ordinal"


def test_missingness_shares_and_their_monte_carlo_error():
    o = pd.DataFrame({"g": ["a", "b"] * 50, "x": [1.0, np.nan, 2.0, 3.0] * 25})
    s1 = o.copy()
    s2 = o.copy()
    s2.loc[:9, "x"] = np.nan  # 7 more missing values (rows 1, 5 and 9 were missing): 32 in all
    r = compare_missingness(o, [s1, s2])
    assert r.columns.loc["x", "original"] == 0.25
    assert r.columns.loc["x", "synthetic"] == pytest.approx((0.25 + 0.32) / 2)
    assert r.columns.loc["x", "mc_se"] == pytest.approx(np.std([0.25, 0.32], ddof=1) / np.sqrt(2))
    by = r.by_category.set_index(["by", "category"])
    assert by.loc[("g", "b"), "original"] == 0.5 and by.loc[("g", "a"), "original"] == 0.0
    one = compare_missingness(o, s2)
    assert one.columns.loc["x", "mc_se"] == pytest.approx(np.sqrt(0.32 * 0.68 / 100))
    assert "x" in one.summary()


def test_evaluate_microdata_reports_missingness_and_rules():
    o = pd.DataFrame({"age": [10, 30, 12, 40] * 25, "marital": ["single", "married", "single", "single"] * 25})
    s = o.copy()
    s.loc[[0, 2], "marital"] = "married"
    ev = evaluate_microdata(o, [s], rules={"marital": "age < 16 -> 'single'"}, tables=(1,), rng=1)
    d = ev.to_dict()["utility"]
    assert d["rules"] == [{"rule": "marital: age < 16 -> 'single'", "broken_original": 0, "broken_synthetic": [2]}]
    assert "missingness" in d
    assert "Rules" in ev.summary()
    marked = evaluate_microdata(o, [s], missing_values={"age": ["10"]}, tables=(1,), rng=1)
    assert marked.missingness.columns.loc["age", "original"] == 0.25


def test_raghunathan_reiter_rubin_and_reiter_by_hand():
    q = np.array([[1.0, 10.0], [2.0, 10.0], [4.0, 10.0]])
    u = np.array([[0.5, 1.0], [0.5, 1.0], [0.5, 1.0]])
    b = np.var(q[:, 0], ddof=1)  # 7/3
    c = combine_fully_synthetic(q, u, 100, 100, rule="rrr")
    assert_allclose(c.variance[0], (1 + 1 / 3) * b - 0.5)
    assert_allclose(c.df[0], 2 * (1 - 0.5 / ((1 + 1 / 3) * b)) ** 2)
    # no spread between implicates: T_f < 0, replaced by (n_syn / n) v_bar with normal intervals
    assert_allclose(c.variance[1], 100 / 100 * 1.0)
    assert np.isinf(c.df[1])
    p = combine_partially_synthetic(q, u)
    assert_allclose(p.variance[0], 0.5 + b / 3)
    with pytest.raises(Exception, match="at least two implicates"):
        combine_fully_synthetic(q[:1], u[:1], 100, 100, rule="rrr")


@pytest.mark.parametrize("family, formula", [("ordinal", "educ ~ sex + age"), ("multinomial", "region ~ sex + age")])
@pytest.mark.parametrize("synthesis, combining", [("fully", "raab"), ("fully", "rrr"), ("partially", "raab")])
def test_multinomial_and_ordinal_inference_from_implicates(family, formula, synthesis, combining):
    d = pd.read_csv(REF / "ordinal_data.csv")
    d["educ"] = pd.Categorical(d["educ"], ["low", "mid", "high", "top"], ordered=True)
    # the original itself as every implicate: combined estimates are the original's
    r = regression_utility(d, [d, d, d], formula, family=family, synthesis=synthesis, combining=combining)
    table = r.coefficients
    assert_allclose(table["estimate_synthetic"], table["estimate_original"], rtol=1e-8, atol=1e-10)
    ref = pd.read_csv(REF / ("polr_coef.csv" if family == "ordinal" else "multinom_se.csv"))
    assert_allclose(table["estimate_original"], ref["estimate"], rtol=1e-5, atol=1e-7)
    if family == "ordinal":
        assert list(table.index) == ["sexM", "age", "low|mid", "mid|high", "high|top"]
    else:
        assert list(table.index)[:3] == ["south:(Intercept)", "south:sexM", "south:age"]
    se_o = table["se_original"].to_numpy()
    if synthesis == "fully" and combining == "raab":  # v_bar (n_syn / n + 1 / m)
        assert_allclose(table["se_synthetic"], se_o * np.sqrt(1 + 1 / 3), rtol=1e-8)
    elif synthesis == "partially":  # no spread: v_bar
        assert_allclose(table["se_synthetic"], se_o, rtol=1e-8)
    else:  # no spread: T_f < 0, replaced by (n_syn / n) v_bar
        assert_allclose(table["se_synthetic"], se_o, rtol=1e-8)
    assert table["same_sign"].all() and r.mean_overlap > 0.9
