"""LogLinearSynthesizer: IPF means, then the saturated synthesizer's noise."""

from __future__ import annotations

import numpy as np
import pytest
from _loglinear_fixtures import dense_from, load_input
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.distributions import NBI, Poisson
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.fitting import ipf
from cellsafe.mechanisms import LogLinearSynthesizer
from cellsafe.table import CountTable, Variable


def test_mean_is_the_ipf_fit():
    table, _ = load_input("ucb_admissions.csv")
    model = "Admit*Dept + Gender*Dept"
    synth = LogLinearSynthesizer(model, Poisson())
    mu = dense_from(ipf(table, model).fitted)
    assert_allclose(dense_from(synth.expected(table)), mu)
    m = 400
    draws = np.vstack([dense_from(s) for s in synth.sample(table, m=m, rng=11)])
    # Poisson: mean mu, standard error sqrt(mu / m); 5 SE per cell
    assert np.all(np.abs(draws.mean(axis=0) - mu) <= 5 * np.sqrt(mu / m))
    assert all(s.is_integer for s in synth.sample(table, m=2, rng=1))


def test_same_rng_same_tables_and_no_state_change():
    table, _ = load_input("hair_eye_color.csv")
    synth = LogLinearSynthesizer([["Hair", "Eye"], ["Sex"]], NBI(sigma=0.5))
    before = repr(synth)
    a = synth.sample(table, m=2, rng=123)
    b = synth.sample(table, m=2, rng=123)
    assert all(x.equals(y) for x, y in zip(a, b))
    assert repr(synth) == before


def test_structural_zeros_never_change_and_alpha_fills_zero_margins():
    v = [Variable("a", ["x", "y", "z"]), Variable("b", ["u", "v"])]
    t = CountTable.from_dense(np.array([[10, 0], [30, 40], [0, 6]]), v, structural_zeros=[1])
    # margin of a: z has 6, b: u has 40 -> the independence fit is positive on every open cell
    for s in LogLinearSynthesizer("a + b", Poisson(), alpha=0.5).sample(t, m=20, rng=3):
        assert_array_equal(s.structural_zeros, [1])
        assert s.lookup([1])[0] == 0


def test_zero_margin_cells_stay_zero_with_alpha_zero():
    table, _ = load_input("titanic.csv")
    synth = LogLinearSynthesizer("(Class + Sex + Age + Survived)^2", Poisson())
    for s in synth.sample(table, m=5, rng=2):
        codes = s.codes()
        assert not np.any((codes[:, 0] == 3) & (codes[:, 2] == 0))  # Crew children


@pytest.mark.parametrize(
    "args, match",
    [
        (("a*", Poisson()), "cannot parse formula"),
        (([], Poisson()), "'margins' parameter of LogLinearSynthesizer"),
        (("a + b", "poisson"), "'distribution' parameter of LogLinearSynthesizer"),
        (("a + b", Poisson(), -1.0), "'alpha' parameter of LogLinearSynthesizer"),
    ],
)
def test_bad_parameters(args, match):
    with pytest.raises(InvalidArgumentError, match=match):
        LogLinearSynthesizer(*args)


def test_unknown_variable_at_sample():
    table, _ = load_input("ucb_admissions.csv")
    with pytest.raises(InvalidArgumentError, match="unknown variable 'Sex'"):
        LogLinearSynthesizer("Admit*Sex", Poisson()).sample(table, rng=1)
