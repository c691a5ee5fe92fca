"""evaluate_microdata: every metric in one call, summarized for JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe.exceptions import InvalidArgumentError
from cellsafe.metrics.microdata import evaluate_microdata


def test_summary_shape_and_values(adult, independent):
    o = adult.sample(2000, random_state=1).reset_index(drop=True)
    h = adult.sample(1000, random_state=2).reset_index(drop=True)
    s1 = independent(o, np.random.default_rng(3))
    ev = evaluate_microdata(o, [s1, o.copy()], keys=["age", "sex"], target="income>50K", holdout=h, n_sample=200, rng=4)
    d = ev.to_dict()
    json.dumps(d)  # JSON-ready
    u, r = d["utility"], d["risk"]
    for k in ("pmse", "pmse_ratio", "specks", "auc"):
        assert k in u
    for k in ("repU", "DiSCO", "TCAP", "UiO", "DiO", "DiS"):
        assert k in r
    assert len(ev.propensity) == 2 and len(ev.disclosure) == 2
    assert np.isclose(u["pmse_ratio"], np.mean([p.pmse_ratio for p in ev.propensity]))
    assert np.isclose(r["DiSCO"], np.mean([x.DiSCO for x in ev.disclosure]))
    assert set(u["tables"]) == {"oneway", "twoway", "threeway"}
    assert u["tables"]["twoway"]["n_tables"] == 14 * 13 // 2
    assert "dcr" in r and "membership" in r


def test_same_seed_same_result(adult):
    o = adult.sample(800, random_state=5).reset_index(drop=True)[["age", "sex", "race"]]
    s = adult.sample(800, random_state=6).reset_index(drop=True)[["age", "sex", "race"]]
    a = evaluate_microdata(o, s, tables=(2,), rng=7).to_dict()
    b = evaluate_microdata(o, s, tables=(2,), rng=7).to_dict()
    assert a == b


@pytest.mark.parametrize(
    "kwargs",
    [{"keys": ["a"]}, {"target": "b"}, {"tables": (4,)}],
)
def test_bad_input(kwargs):
    o = pd.DataFrame({"a": list("xyxy"), "b": list("uuvv")})
    with pytest.raises(InvalidArgumentError):
        evaluate_microdata(o, o, **kwargs)


def test_regression_and_table_cap(adult):
    o = adult.sample(1500, random_state=8).reset_index(drop=True)[["age", "sex", "race", "income>50K"]]
    s = o.sample(frac=1.0, replace=True, random_state=9).reset_index(drop=True)
    ev = evaluate_microdata(o, s, formula="`income>50K` ~ age + sex", family="binomial", max_tables=4, rng=1)
    d = ev.to_dict()["utility"]
    assert d["regression"]["family"] == "binomial"
    assert set(d["regression"]["coefficients"]) == {"(Intercept)", "age", "sex"}
    assert d["regression"]["mean_overlap"] > 0.3
    assert set(d["tables"]) == {"oneway", "threeway"}  # 4 one-way, 6 two-way (> 4), 4 three-way tables
    assert d["skipped"] == ["twoway tables: 6 tables exceed max_tables=4"]
