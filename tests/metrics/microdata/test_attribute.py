"""Replicated uniques, DiSCO, TCAP and the CAP family (synthpop disclosure vignette, App. 1 and 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics.microdata import attribute_disclosure




def test_hand_computed_example():
    o = pd.DataFrame({"k": list("aabbcd"), "t": [1, 1, 1, 2, 1, 1]})
    s = pd.DataFrame({"k": list("aabcce"), "t": [1, 2, 1, 1, 1, 1]})
    r = attribute_disclosure(o, s, ["k"], "t")
    expected = {
        "UiO": 2 / 6,
        "UiS": 2 / 6,
        "UiOiS": 1 / 6,
        "repU": 0.0,
        "DiO": 4 / 6,
        "DiS": 4 / 6,
        "iS": 5 / 6,
        "DiSCO": 2 / 6,
        "DiSDiO": 1 / 6,
        "TCAP": 2 / 3,
        "baseCAPd": 26 / 36,
        "CAPd": 5 / 6,
        "CAPs": 5 / 6,
        "DCAP": 0.5,
        "DiSCO_chance": 111 / 216,
    }
    for k, v in expected.items():
        assert_allclose(getattr(r, k), v, err_msg=k)


def test_identical_synthetic_data_disclose_as_much_as_the_original(adult):
    o = adult.sample(3000, random_state=1).reset_index(drop=True)
    r = attribute_disclosure(o, o.copy(), ["age", "sex", "race"], "marital-status")
    assert r.DiSCO == r.DiO == r.DiSDiO == r.DiS
    assert r.repU == r.UiO == r.UiOiS == r.UiS
    assert r.iS == 1.0 and r.TCAP == 1.0
    assert_allclose(r.CAPd, r.CAPs)
    assert_allclose(r.DCAP, r.CAPd)


def test_independent_columns_give_chance_level_disco(adult, independent):
    """Over 20 independent-column syntheses DiSCO averages its chance level within 4 SE."""
    o = adult.sample(4000, random_state=2).reset_index(drop=True)[["age", "sex", "race", "marital-status"]]
    gen = np.random.default_rng(3)
    disco, chance = [], []
    for _ in range(20):
        r = attribute_disclosure(o, independent(o, gen), ["age", "sex", "race"], "marital-status")
        disco.append(r.DiSCO)
        chance.append(r.DiSCO_chance)
        assert r.DiSCO < r.DiO
    diff = np.asarray(disco) - np.asarray(chance)
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    assert abs(diff.mean()) < 4 * se + 1e-3
    # and far below the original's disclosive share
    assert np.mean(disco) < 0.5 * attribute_disclosure(o, o, ["age", "sex", "race"], "marital-status").DiO


def test_categories_only_in_synthetic_data():
    o = pd.DataFrame({"k": ["a", "b"], "t": ["x", "y"]})
    s = pd.DataFrame({"k": ["z", "b"], "t": ["w", "y"]})
    r = attribute_disclosure(o, s, ["k"], "t")
    assert_allclose([r.iS, r.DiSCO, r.repU], [0.5, 0.5, 0.5])


@pytest.mark.parametrize(
    "keys, target, error",
    [
        (["k"], "k", InvalidArgumentError),
        ([], "t", InvalidArgumentError),
        (["nope"], "t", DataError),
        (["k"], "nope", DataError),
    ],
)
def test_bad_input(keys, target, error):
    o = pd.DataFrame({"k": ["a", "b"], "t": ["x", "y"]})
    with pytest.raises(error):
        attribute_disclosure(o, o, keys, target)


def test_one_synthetic_set_at_a_time():
    o = pd.DataFrame({"k": ["a", "b"], "t": ["x", "y"]})
    with pytest.raises(InvalidArgumentError, match="once per implicate"):
        attribute_disclosure(o, [o, o], ["k"], "t")
