"""Tuning a marginal synthesizer (MST, AIM) to an a priori error of its released marginals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cellsafe
from cellsafe import Domain
from cellsafe.apriori import marginal_error
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import GeometricNoise
from cellsafe.tuning import parse_metric, parse_target, tune

DOMAIN = {"sex": ["F", "M"], "region": ["N", "S", "E", "W"], "age": ["0-17", "18-64", "65+"], "job": list("abcde")}


def _table(n: int = 3000) -> cellsafe.CountTable:
    rng = np.random.default_rng(0)
    sex = rng.choice(["F", "M"], n)
    region = rng.choice(["N", "S", "E", "W"], n, p=[0.4, 0.3, 0.2, 0.1])
    age = np.where(rng.random(n) < 0.2, "0-17", np.where(rng.random(n) < 0.8, "18-64", "65+"))
    job = np.where(age == "0-17", "a", rng.choice(list("bcde"), n))
    table, _ = Domain(DOMAIN).table(pd.DataFrame({"sex": sex, "region": region, "age": age, "job": job}))
    return table


def test_marginal_tv_is_a_metric_in_the_one_syntax():
    assert parse_metric("marginal_tv(2)").name == "marginal_tv(2)"
    t = parse_target("marginal_tv(3) <= 0.05")
    assert (t.text, t.op, t.metric.k) == ("marginal_tv(3)<=0.05", "<=", 3)
    with pytest.raises(InvalidArgumentError, match="1-, 2- or 3-way"):
        parse_metric("marginal_tv(4)")
    with pytest.raises(InvalidArgumentError, match="proportion"):
        parse_target("marginal_tv(2)<=2")


@pytest.mark.parametrize("synth", [
    cellsafe.MarginalSynthesizer(1.0),
    pytest.param(cellsafe.MarginalSynthesizer(1.0, selection="aim", rounds=6), marks=pytest.mark.slow),
], ids=repr)
def test_the_smallest_epsilon_that_meets_a_marginal_error(synth):
    """tune(table, MST or AIM, "epsilon", "marginal_tv(2)<=0.05"): the a priori error at the solution is the
    target, a tenth less epsilon misses it, and the side that meets it is the larger epsilons."""
    table = _table()
    r = tune(table, synth, "epsilon", "marginal_tv(2)<=0.05", xtol=1e-4)
    assert r.parameter == "epsilon" and type(r.mechanism) is type(synth)
    assert r.mechanism.epsilon == r.value
    at = marginal_error(table, r.mechanism, degrees=(2,)).tv(2)
    assert at == pytest.approx(0.05, abs=2e-3) and r.achieved == pytest.approx(at, abs=1e-12)
    assert marginal_error(table, synth.with_params(epsilon=0.9 * r.value), degrees=(2,)).tv(2) > 0.05
    assert marginal_error(table, synth.with_params(epsilon=1.1 * r.value), degrees=(2,)).tv(2) <= 0.05
    assert r.meets == f"epsilon >= {r.value:.6g}"


def test_marginal_targets_and_mechanisms_go_together():
    table = _table()
    with pytest.raises(InvalidArgumentError, match="marginal synthesizer"):
        tune(table, GeometricNoise(1.0), "epsilon", "marginal_tv(2)<=0.05")
    with pytest.raises(InvalidArgumentError, match="marginal_tv"):
        tune(table, cellsafe.MarginalSynthesizer(1.0), "epsilon", "tau4(1)<=0.4")
    with pytest.raises(InvalidArgumentError, match="CountTable"):
        tune({0: 10, 1: 5}, cellsafe.MarginalSynthesizer(1.0), "epsilon", "marginal_tv(2)<=0.05")
    with pytest.raises(InvalidArgumentError, match="unreachable"):
        tune(table, cellsafe.MarginalSynthesizer(1.0), "epsilon", "marginal_tv(1)<=0.00001", bounds=(0.1, 1.0))
