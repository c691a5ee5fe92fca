"""Specific utility through the all-two-way log-linear model (003 section 4.4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.datasets import esc_like
from cellsafe.distributions import NBI
from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.fitting import fit_loglinear
from cellsafe.mechanisms.saturated import SaturatedSynthesizer
from cellsafe.metrics import ci_overlap, specific_utility
from cellsafe.metrics.specific import SpecificUtility
from cellsafe.table import CountTable, Variable

REF = Path(__file__).resolve().parents[1] / "reference" / "loglinear"
ESC_MODEL = "ethnicity*age + ethnicity*language + age*language"


def _load(name):
    df = pd.read_csv(REF / name)
    variables = [Variable(c, list(pd.unique(df[c]))) for c in df.columns if c != "count"]
    return CountTable.from_frame(df, variables, count="count")


@pytest.fixture(scope="module")
def esc():
    return esc_like()


def test_identical_tables():
    t = _load("hair_eye_color.csv")
    res = specific_utility(t, [t], "(Hair + Eye + Sex)^2")
    p = res.to_frame()
    # synthetic intervals are sqrt(2) wider (eq. 13 with m = 1, n_syn = n) around the same estimate
    assert_allclose(p["overlap"], 0.5 * (1 + 1 / np.sqrt(2)))
    assert_allclose(p["std_diff"], 0.0, atol=1e-12)
    assert_allclose(p["pct_diff"], 0.0, atol=1e-10)
    assert_allclose(p["se_synthetic"], np.sqrt(2) * p["se_original"])
    assert p["same_sign"].all() and res.n_compared == res.n_parameters == 23
    assert res.trimmed_mean_pct_diff == pytest.approx(0.0, abs=1e-10)
    assert res.overlap_implicates.shape == (1, 23)


def test_against_hand_computation():
    t = _load("ucb_admissions.csv")
    rng = np.random.default_rng(5)
    syn = [t.with_counts(t.index, rng.poisson(t.counts)) for _ in range(3)]
    model = "Admit*Dept + Gender*Dept"
    res = specific_utility(t, syn, model, level=0.9)
    fo = fit_loglinear(t, model)
    fs = [fit_loglinear(s, model) for s in syn]
    q = np.vstack([f.params for f in fs])
    v = np.vstack([f.bse**2 for f in fs])
    n_syn = np.mean([s.total for s in syn])
    q_bar = q.mean(axis=0)
    se = np.sqrt(v.mean(axis=0) * (n_syn / t.total + 1 / 3))
    z = 1.6448536269514722
    ov = ci_overlap(fo.params - z * fo.bse, fo.params + z * fo.bse, q_bar - z * se, q_bar + z * se, clamp=False)
    p = res.to_frame()
    assert_allclose(p["estimate_synthetic"], q_bar)
    assert_allclose(p["se_synthetic"], se)
    assert_allclose(p["overlap_signed"], ov)
    assert_allclose(p["std_diff"], (q_bar - fo.params) / fo.bse)
    assert_allclose(p["pct_diff"], 100 * (q_bar - fo.params) / fo.params)
    b = q.var(axis=0, ddof=1)
    assert_allclose(p["se_partially"], np.sqrt(v.mean(axis=0) + b / 3))
    # SSO as 002 section 3.10 defines it: same sign, same significance at 1 - level, overlapping intervals
    sig_o = (fo.params - z * fo.bse > 0) | (fo.params + z * fo.bse < 0)
    sig_s = (q_bar - z * se > 0) | (q_bar + z * se < 0)
    sso = (np.sign(q_bar) == np.sign(fo.params)) & (sig_o == sig_s) & (ov > 0)
    assert_array_equal(p["sso"], sso)
    # trimmed mean: 10% cut at each end (003 Table 5)
    x = np.sort(p["pct_diff"].to_numpy())
    k = int(0.1 * x.size)
    assert res.trimmed_mean_pct_diff == pytest.approx(x[k : x.size - k].mean())
    part = specific_utility(t, syn, model, rule="partially")
    assert_allclose(part.to_frame()["se_synthetic"], np.sqrt(v.mean(axis=0) + b / 3))


@pytest.mark.slow
def test_mean_overlap_falls_as_nbi_sigma_rises(esc):
    """003 Fig. 4: utility falls with sigma; the all-two-way model of ethnicity x age x language."""
    means = []
    for sigma in (0.1, 1.0, 10.0):
        [syn] = SaturatedSynthesizer(NBI(sigma)).sample(esc, m=1, rng=2022)
        res = specific_utility(esc, [syn], ESC_MODEL)
        assert isinstance(res, SpecificUtility)
        assert res.n_parameters == 608
        assert res.n_compared > 400  # every parameter finite in the original
        means.append(res.mean_overlap)
    assert means[0] > means[1] > means[2]
    assert means[2] < 0.5
    # 003 section 4.4.1: with sigma = 10 the median overlap is zero.  One implicate's median swings with
    # the seed (0 to 0.2 here), so take the typical implicate of three.
    medians = [specific_utility(esc, [x], ESC_MODEL).median_overlap for x in SaturatedSynthesizer(NBI(10.0)).sample(esc, m=3, rng=2022)]
    assert np.median(medians) < 0.05
    # sigma = 10 empties many margins: fewer parameters are finite in the synthetic table
    excluded = specific_utility(esc, [syn], ESC_MODEL, not_estimable="exclude")
    assert excluded.n_compared <= res.n_compared
    assert excluded.to_frame()["estimable"].equals(res.to_frame()["estimable"])


def test_infinite_parameters_are_not_compared():
    t = _load("titanic.csv")
    with pytest.warns(Warning) as record:
        fo = fit_loglinear(t, "(Class + Sex + Age + Survived)^2")
    assert record
    res = specific_utility(t, [t], "(Class + Sex + Age + Survived)^2")
    p = res.to_frame()
    assert not p.loc["ClassCrew", "estimable"] and np.isnan(p.loc["ClassCrew", "overlap"])
    assert res.n_compared == res.n_parameters - int(fo.infinite.sum())
    assert "n_compared=17" in repr(res)


def test_overview():
    t = _load("random4.csv")
    rng = np.random.default_rng(1)
    syn = t.with_counts(t.index, rng.poisson(t.counts))
    o = specific_utility(t, syn, "(a + b + c + d)^2").overview()
    assert set(o.index) >= {"mean_overlap", "median_overlap", "trimmed_mean_pct_diff", "sso_rate", "n_compared"}
    assert 0 <= o["mean_overlap"] <= 1 and 0 <= o["sso_rate"] <= 1


def test_bad_input():
    t = _load("ucb_admissions.csv")
    other = CountTable.from_frame(
        pd.read_csv(REF / "ucb_admissions.csv"), ["Admit", "Gender", "Dept"], count="count"
    )  # categories sorted, not in the original's order
    cases = [
        (dict(synthetic_list=[]), "non-empty list"),
        (dict(synthetic_list=[t], rule="partially"), "m >= 2"),
        (dict(synthetic_list=[t], rule="both"), "'rule' parameter"),
        (dict(synthetic_list=[t], level=1.0), "'level' parameter"),
        (dict(synthetic_list=[t], not_estimable="keep"), "'not_estimable' parameter"),
        (dict(synthetic_list=[t], formula="Admit*Sex"), "unknown variable 'Sex'"),
        (dict(synthetic_list=["x.csv"]), "must be a cellsafe CountTable"),
    ]
    for kwargs, match in cases:
        kwargs.setdefault("formula", "Admit*Dept")
        with pytest.raises(InvalidArgumentError, match=match):
            specific_utility(t, **kwargs)
    with pytest.raises(DataError, match="synthetic table 0 does not have the variables and categories of the original"):
        specific_utility(t, [other], "Admit*Dept")
