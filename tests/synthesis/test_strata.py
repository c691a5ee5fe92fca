"""Synthesis within strata: each stratum keeps its size; small strata are pooled."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from cellsafe import SequentialSynthesizer
from cellsafe.exceptions import CellsafeWarning, InvalidArgumentError


def _data(seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    region = np.repeat(["north", "south", "east", "isle"], [300, 200, 120, 15])
    income = np.where(region == "north", 30.0, 50.0) + g.gamma(2, 5, size=region.size)
    sex = g.choice(["F", "M"], size=region.size)
    # within the north, men work more; elsewhere the reverse: a structure only strata keep
    hours = np.round(35 + np.where((region == "north") == (sex == "M"), 8, -4) + g.normal(0, 3, size=region.size))
    return pd.DataFrame({"region": region, "sex": sex, "hours": hours, "income": income}).sample(frac=1, random_state=1).reset_index(drop=True)


def test_strata_keep_each_stratums_size_and_place():
    data = _data()
    with pytest.warns(CellsafeWarning, match=r"strata smaller than 50 records \(isle \(15\)\)"):
        synth = SequentialSynthesizer(strata="region", min_stratum=50).fit(data)
    assert synth.strata_ == {"east": 120, "isle": 15, "north": 300, "south": 200}
    assert synth.pooled_strata_ == ["isle"]
    for s in synth.sample(m=3, rng=5):
        assert_array_equal(s["region"].to_numpy(), data["region"].to_numpy())
        assert s.groupby("region")["income"].min().loc["north"] < 45 < s.groupby("region")["income"].min().loc["south"]


def test_each_stratum_keeps_its_own_structure():
    data = _data()
    synth = SequentialSynthesizer(strata="region", min_stratum=50).fit(data)
    s = pd.concat(synth.sample(m=10, rng=1))
    gap = s.groupby(["region", "sex"])["hours"].mean().unstack()
    assert gap.loc["north", "M"] - gap.loc["north", "F"] > 8
    assert gap.loc["south", "F"] - gap.loc["south", "M"] > 8


def test_threads_give_the_same_records():
    data = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = SequentialSynthesizer(strata="region", min_stratum=50, n_jobs=1).fit(data).sample(m=2, rng=9)
        two = SequentialSynthesizer(strata="region", min_stratum=50, n_jobs=2).fit(data).sample(m=2, rng=9)
    for a, b in zip(one, two):
        pd.testing.assert_frame_equal(a, b)


def test_strata_refuse_another_size_and_a_bad_column():
    data = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SequentialSynthesizer(strata="region").fit(data)
    with pytest.raises(InvalidArgumentError, match="leave n unset"):
        synth.sample(n=10)
    with pytest.raises(Exception, match="unknown column 'regoin'"):
        SequentialSynthesizer(strata="regoin").fit(data)
    # the default minimum is synthpop's: 10 + 10 x the variables synthesized (3 here: 40)
    assert synth.pooled_strata_ == ["isle"]


def test_rules_and_pairs_may_name_the_stratum():
    g = np.random.default_rng(0)
    n = 400
    region = np.repeat(["north", "south"], [250, 150])
    age = g.integers(10, 70, size=n)
    marital = np.where(age < 16, "single", g.choice(["single", "married"], size=n))
    work = np.where(region == "north", g.choice(["farm", "office"], size=n), "office")
    data = pd.DataFrame({"region": region, "age": age, "work": work, "marital": marital})
    synth = SequentialSynthesizer(
        strata="region", min_stratum=50, methods={"work": "multinomial"},
        rules={"marital": "region == 'south' and age < 20 -> 'single'"},
    ).fit(data)
    out = synth.sample(m=20, rng=1)
    assert sum(((s["region"] == "south") & (s["age"] < 20) & (s["marital"] != "single")).sum() for s in out) == 0
    # no farm in the south: a pair of the stratum and a category never seen together
    assert sum(((s["region"] == "south") & (s["work"] == "farm")).sum() for s in out) == 0
