"""Table utility: Voas-Williamson, Freeman-Tukey, Jensen-Shannon and pMSE over cross-tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics.microdata import propensity_metrics, table_utilities, table_utility


def _frames(o_counts, s_counts, cats="abcd"):
    o = pd.DataFrame({"v": np.repeat(list(cats[: len(o_counts)]), o_counts)})
    s = pd.DataFrame({"v": np.repeat(list(cats[: len(s_counts)]), s_counts)})
    return o, s


def test_hand_computed_one_way_table():
    # o = (10, 20, 0, 5), s = (14, 14, 3, 0): N = 66, c = 31/66; the cell empty in o and s... none here
    o, s = _frames([10, 20, 0, 5], [14, 14, 3, 0])
    r = table_utility(o, s, ["v"])
    ob = np.array([10, 20, 0, 5.0])
    sb = np.array([14, 14, 3, 0.0])
    c = sb.sum() / (ob.sum() + sb.sum())
    vw = np.sum((sb - ob * c / (1 - c)) ** 2 / ((ob + sb) * c))
    ft = 4 * np.sum((np.sqrt(sb) - np.sqrt(ob * c / (1 - c))) ** 2)
    po, ps = ob / ob.sum(), sb / sb.sum()
    m = (po + ps) / 2
    jsd = 0.5 * sum(p * np.log2(p / q) for p, q in zip(po, m) if p > 0) + 0.5 * sum(
        p * np.log2(p / q) for p, q in zip(ps, m) if p > 0
    )
    assert r.df == 3 and r.nempty == 0
    assert_allclose([r.VW, r.FT, r.JSD], [vw, ft, jsd])
    assert_allclose(r.S_pMSE, vw / 3)
    assert_allclose(r.pMSE, vw * c * (1 - c) ** 2 / 66)
    assert_allclose(r.S_JSD, jsd * 2 * 66 / 3 / np.log(2))


def test_equal_sizes_reduce_to_the_textbook_forms():
    o, s = _frames([8, 2, 6], [5, 5, 6])
    r = table_utility(o, s, ["v"])
    ob, sb = np.array([8, 2, 6.0]), np.array([5, 5, 6.0])
    assert_allclose(r.VW, np.sum((sb - ob) ** 2 / ((ob + sb) / 2)))
    assert_allclose(r.FT, 4 * np.sum((np.sqrt(sb) - np.sqrt(ob)) ** 2))


def test_cells_empty_in_both_are_dropped():
    o = pd.DataFrame({"a": list("xxyy"), "b": list("uuvv")})
    r = table_utility(o, o, ["a", "b"])
    assert r.nempty == 2 and r.df == 1
    assert_allclose([r.VW, r.FT, r.JSD, r.pMSE], 0.0)


def test_table_pmse_equals_the_saturated_logistic_pmse(adult):
    o = adult.sample(1500, random_state=1)[["race", "sex"]].reset_index(drop=True)
    s = adult.sample(1000, random_state=2)[["race", "sex"]].reset_index(drop=True)
    t = table_utility(o, s, ["race", "sex"], categorical=["race", "sex"])
    p = propensity_metrics(o, s, categorical=["race", "sex"], rng=0)
    assert p.n_params == t.df + 1  # the logistic model with interactions is saturated here
    assert_allclose(p.pmse, t.pMSE, rtol=1e-4)
    assert_allclose(p.pmse_ratio, t.S_pMSE, rtol=1e-4)


def test_correct_synthesizer_has_standardized_statistics_near_one(adult):
    pool = adult[["race", "sex", "relationship"]]
    gen = np.random.default_rng(3)
    vals = []
    for _ in range(10):
        o = pool.iloc[gen.integers(0, len(pool), 3000)].reset_index(drop=True)
        s = o.iloc[gen.integers(0, len(o), 3000)].reset_index(drop=True)
        tab = table_utilities(o, s, tables="twoway", categorical=list(pool.columns))
        vals.append(tab[["S_pMSE", "S_FT"]].to_numpy())
    mean = np.mean(vals, axis=0)
    assert np.all(np.abs(mean - 1) < 0.45)


def test_numeric_columns_are_grouped(adult):
    o = adult.sample(2000, random_state=4).reset_index(drop=True)
    s = adult.sample(2000, random_state=5).reset_index(drop=True)
    r = table_utility(o, s, ["age"], ngroups=5)
    assert r.df + 1 + r.nempty <= 7  # five quantile groups (plus a missing-value group)
    assert table_utility(o, s, ["sex"]).df == 1  # few distinct values: used as they are


def test_all_one_two_and_three_way_tables(adult, independent):
    cols = ["age", "sex", "race", "relationship", "income>50K"]
    o = adult.sample(2000, random_state=6).reset_index(drop=True)[cols]
    s = independent(o, np.random.default_rng(7))
    one = table_utilities(o, s, tables="oneway")
    two = table_utilities(o, s, tables="twoway")
    three = table_utilities(o, s, tables="threeway")
    third = table_utilities(o, s, tables="threeway", third_var="sex")
    assert [len(one), len(two), len(three), len(third)] == [5, 10, 10, 6]
    assert_allclose(one["VW"], 0.0, atol=1e-9)  # permuting a column keeps its margin exactly
    assert two["S_pMSE"].max() > 10  # and destroys the associations
    assert list(two.columns[:2]) == ["variables", "VW"]


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"tables": "fourway"}, InvalidArgumentError),
        ({"ngroups": 1}, InvalidArgumentError),
        ({"columns": ["nope"]}, DataError),
        ({"third_var": "a"}, InvalidArgumentError),
    ],
)
def test_bad_input(kwargs, error):
    o = pd.DataFrame({"a": list("xy"), "b": list("uv")})
    with pytest.raises(error):
        table_utilities(o, o, **kwargs)
