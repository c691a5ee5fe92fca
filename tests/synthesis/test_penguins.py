"""Course 002, section 4.1: the fully synthetic Adelie penguins, sex -> bill -> flipper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_equal

from cellsafe import SequentialSynthesizer
from cellsafe.fitting import fit_ols

PENGUINS = Path(__file__).resolve().parents[1] / "reference" / "penguins" / "adelie.csv"
VARS = ["sex", "bill_length_mm", "flipper_length_mm"]
METHODS = {"sex": "sample", "bill_length_mm": "normal", "flipper_length_mm": "normal"}


@pytest.fixture(scope="module")
def penguins() -> pd.DataFrame:
    return pd.read_csv(PENGUINS)[VARS]


def _ols(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    male = (frame["sex"] == "male").to_numpy(dtype=float)
    one = np.ones(len(frame))
    bill = fit_ols(np.column_stack([one, male]), frame["bill_length_mm"].to_numpy(dtype=float))
    flip = fit_ols(
        np.column_stack([one, male, frame["bill_length_mm"].to_numpy(dtype=float)]),
        frame["flipper_length_mm"].to_numpy(dtype=float),
    )
    return bill.coef, flip.coef


def test_data_are_002s(penguins):
    assert_equal(len(penguins), 146)
    assert_equal(penguins["sex"].value_counts().to_dict(), {"female": 73, "male": 73})


def test_models_are_002s_regressions(penguins):
    """002 section 4.1.2 and 4.1.4: summary(lm(...)) printed to four decimals."""
    synth = SequentialSynthesizer(methods=METHODS).fit(penguins)
    bill, flip = synth.models_["bill_length_mm"], synth.models_["flipper_length_mm"]
    assert bill.names == ("(Intercept)", "sexmale")
    assert_allclose(bill.coef, [37.2575, 3.1329], atol=5e-5)
    assert_allclose(bill.se, [0.2524, 0.3570], atol=5e-5)
    assert round(bill.sigma, 3) == 2.157 and bill.df_resid == 144
    assert flip.names == ("(Intercept)", "sexmale", "bill_length_mm")
    assert_allclose(flip.coef, [170.6183, 3.1721, 0.4610], atol=5e-5)
    assert_allclose(flip.se, [8.7497, 1.2422, 0.2341], atol=5e-5)
    assert round(flip.sigma, 3) == 6.058 and flip.df_resid == 143
    assert synth.predictors_ == {"sex": [], "bill_length_mm": ["sex"], "flipper_length_mm": ["sex", "bill_length_mm"]}


def test_synthetic_regressions_centre_on_the_confidential_ones(penguins):
    """Over many implicates of 002's method 2 the regressions refitted on synthetic records average
    to the confidential coefficients: within 4 Monte Carlo standard errors of the mean, and well
    within one standard error of the confidential estimate."""
    synth = SequentialSynthesizer(methods=METHODS, bounded=False).fit(penguins)
    implicates = synth.sample(m=400, rng=20220301)
    coefs = [_ols(s) for s in implicates]
    bill = np.array([c[0] for c in coefs])
    flip = np.array([c[1] for c in coefs])
    for draws, model in ((bill, synth.models_["bill_length_mm"]), (flip, synth.models_["flipper_length_mm"])):
        mean = draws.mean(axis=0)
        mc_se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
        assert np.all(np.abs(mean - model.coef) < 4 * mc_se), (mean, model.coef, mc_se)
        assert np.all(np.abs(mean - model.coef) < 0.25 * model.se)


def test_bounded_draws_stay_in_range_and_flipper_stays_whole(penguins):
    synth = SequentialSynthesizer(methods=METHODS).fit(penguins)
    for s in synth.sample(m=20, rng=3):
        for c in ("bill_length_mm", "flipper_length_mm"):
            assert s[c].min() >= penguins[c].min() and s[c].max() <= penguins[c].max()
        assert s["flipper_length_mm"].dtype == np.int64
        assert set(s["sex"]) <= {"female", "male"}
    # the default (bounded) keeps the synthetic regressions within a standard error as well
    coefs = [_ols(s) for s in synth.sample(m=100, rng=4)]
    mean = np.mean([c[1] for c in coefs], axis=0)
    assert np.all(np.abs(mean - synth.models_["flipper_length_mm"].coef) < synth.models_["flipper_length_mm"].se)


def test_sex_is_sampled_from_its_marginal(penguins):
    """002 section 4.1.1: each synthetic sex is female or male with probability 1/2."""
    synth = SequentialSynthesizer(methods=METHODS).fit(penguins)
    n_male = sum(int((s["sex"] == "male").sum()) for s in synth.sample(m=50, rng=11))
    total = 50 * 146
    assert abs(n_male - total / 2) < 4 * np.sqrt(total / 4)
