"""Tuning alpha, sigma, nu and zeros_to_ones to a priori targets (003 section 3.3.5)."""

from pathlib import Path

import math

import numpy as np
import pandas as pd
import pytest

from cellsafe import apriori
from cellsafe.distributions import GAF, NBI, PIG, Poisson
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms.saturated import SaturatedSynthesizer
from cellsafe.tuning import parse_metric, parse_target, poisson_alpha_for_zero_share, tune

TABLE2 = Path(__file__).parents[1] / "reference" / "apriori" / "esc_table2_cell_sizes.csv"


@pytest.fixture(scope="module")
def table2() -> pd.Series:
    df = pd.read_csv(TABLE2)
    return pd.Series(df["cells"].to_numpy(), index=df["count"].to_numpy())


def test_closed_form_alpha_equals_root_search(table2):
    alpha = poisson_alpha_for_zero_share(table2)
    # by hand from 003 section 3.3.5
    j = table2.index.to_numpy()
    s = float(np.sum(np.exp(-j[j > 0]) * table2.to_numpy()[j > 0]) / table2.loc[0])
    assert alpha == pytest.approx(-math.log(1 - s), rel=1e-14)
    closed = tune(table2, SaturatedSynthesizer(Poisson()), "alpha", "tau1(0)=tau2(0)")
    assert closed.method == "closed form" and closed.value == alpha
    # the generic root search (bypassing the closed form through a Target object on bounds)
    from cellsafe.tuning._solve import _root

    cs = apriori.cell_sizes(table2)

    def f(x):
        t = apriori.tau(cs, SaturatedSynthesizer(Poisson(), alpha=x), k=[0])
        return float(t.tau1.iloc[0] - t.tau2.iloc[0])

    decl = SaturatedSynthesizer(Poisson()).tunable_params()["alpha"]
    root = _root(f, "alpha", decl, 0.0, 10.0, parse_target("tau1(0)=tau2(0)"), SaturatedSynthesizer(Poisson()), 1e-14, lambda: 0)
    assert root.value == pytest.approx(alpha, rel=1e-9)
    t = apriori.tau(table2, closed.mechanism, k=[0])
    assert t.at[0, "tau1"] == pytest.approx(t.at[0, "tau2"], abs=1e-14)


def test_alpha_for_zero_share_other_families(table2):
    r = tune(table2, SaturatedSynthesizer(NBI(1.0)), "alpha", "tau1(0)=tau2(0)")
    assert r.method == "brentq"
    t = apriori.tau(table2, r.mechanism, k=[0])
    assert t.at[0, "tau1"] == pytest.approx(t.at[0, "tau2"], abs=1e-10)


@pytest.mark.parametrize(
    "mech, solve, target",
    [
        (SaturatedSynthesizer(Poisson()), "alpha", "tau4(1)=0.4"),
        (SaturatedSynthesizer(NBI(1.0)), "alpha", "tau4(1)=0.3"),
        (SaturatedSynthesizer(NBI(1.0)), "sigma", "tau4(1)=0.5"),
        (SaturatedSynthesizer(PIG(1.0)), "sigma", "tau3(1)=0.2"),
        (SaturatedSynthesizer(NBI(1.0)), "sigma", "tau3(1)=0.2"),
        (SaturatedSynthesizer(GAF(1.0)), "zeros_to_ones", "tau4(1)=0.5"),
    ],
)
def test_targets_are_met(table2, mech, solve, target):
    r = tune(table2, mech, solve, target)
    metric, value = target.split("=")
    which, k = int(metric[3]), int(metric[5])
    t = apriori.tau(table2, r.mechanism, k=[k])
    assert t.iloc[0, which - 1] == pytest.approx(float(value), abs=1e-8)
    assert r.achieved == pytest.approx(float(value), abs=1e-8)
    assert r.to_dict()[solve] == r.value


def test_nbi_tau3_closed_form(table2):
    # NBI tau3(1) = (1 + sigma)^(-1/sigma - 1): tau3(1) = 0.25 at sigma = 1
    r = tune(table2, SaturatedSynthesizer(NBI(0.5)), "sigma", "tau3(1)=0.25")
    assert r.value == pytest.approx(1.0, rel=1e-8)


def test_nu_for_loss(table2):
    mech = SaturatedSynthesizer(GAF(1.0, nu=0.0))
    r = tune(table2, mech, "nu", "loss=2e6", bounds=(-1.0, 1.0))
    got = apriori.expected_squared_error(table2, r.mechanism).per_implicate
    assert got == pytest.approx(2e6, rel=1e-8)
    assert r.mechanism.distribution.sigma == 1.0


def test_unreachable_target_states_range(table2):
    with pytest.raises(InvalidArgumentError, match=r"unreachable .* tau4\(1\) ranges over \[0\.3"):
        tune(table2, SaturatedSynthesizer(NBI(1.0)), "sigma", "tau4(1)=0.1")


BAD_TARGETS = [
    ("tau4(1)=1.5", "must lie in \\[0, 1\\]"),
    ("tau4(1)=-0.1", "must lie in \\[0, 1\\]"),
    ("tau7(1)=0.4", "unknown metric"),
    ("risk=0.4", "unknown metric"),
    ("tau4(-1)=0.4", "k in tauN\\(k\\) must be >= 0"),
    ("tau4(1)", "must look like"),
    ("tau4(1)=abc", "must be a number"),
    ("loss=-3", "must be >= 0"),
]


@pytest.mark.parametrize("text, message", BAD_TARGETS)
def test_bad_targets(text, message):
    with pytest.raises(InvalidArgumentError, match=message):
        parse_target(text)


def test_bad_parameters(table2):
    with pytest.raises(InvalidArgumentError, match="'solve' parameter"):
        tune(table2, SaturatedSynthesizer(Poisson()), "beta", "tau4(1)=0.4")
    with pytest.raises(InvalidArgumentError, match="tunable parameter of SaturatedSynthesizer: 'alpha', 'zeros_to_ones'. Got 'sigma'"):
        tune(table2, SaturatedSynthesizer(Poisson()), "sigma", "tau4(1)=0.4")
    with pytest.raises(InvalidArgumentError, match="has no parameter 'nu'"):
        SaturatedSynthesizer(NBI(1.0)).with_params(nu=0.5)
    with pytest.raises(InvalidArgumentError, match="no alpha makes"):
        poisson_alpha_for_zero_share({0: 1, 1: 100})
    with pytest.raises(InvalidArgumentError, match="unknown metric"):
        parse_metric("utility")


def test_one_solve_is_fast_enough_to_be_interactive(table2):
    # not a timing assertion: the number of metric evaluations stays bounded
    r = tune(table2, SaturatedSynthesizer(NBI(1.0)), "sigma", "tau4(1)=0.5")
    assert r.n_evaluations < 80
