"""polr against MASS::polr, multinomial standard errors against nnet::multinom, pmm and normrank draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe import SequentialSynthesizer
from cellsafe.synthesis import fit_multinomial, fit_polr
from cellsafe.synthesis.numeric import fit_normrank, fit_pmm

REF = Path(__file__).resolve().parents[1] / "reference" / "ordinal"


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return pd.read_csv(REF / "ordinal_data.csv")


def test_polr_matches_mass_polr(data):
    ref = pd.read_csv(REF / "polr_coef.csv")
    codes = data["educ"].map({"low": 0, "mid": 1, "high": 2, "top": 3}).to_numpy()
    x = np.column_stack([(data["sex"] == "M").astype(float), data["age"].astype(float)])
    m = fit_polr(codes, 4, x)
    assert m.converged
    assert_allclose(np.concatenate([m.coef, m.zeta]), ref["estimate"], rtol=1e-6)
    # R's standard errors come from optim's finite-difference Hessian: agreement to its precision
    assert_allclose(m.se, ref["se"], rtol=5e-4)
    assert_allclose(m.loglik, float(pd.read_csv(REF / "polr_loglik.csv").iloc[0, 0]), rtol=1e-10)


def test_polr_in_the_synthesizer_uses_the_declared_order(data):
    synth = SequentialSynthesizer(methods={"educ": "polr"}, visit_sequence=["sex", "age", "educ"]).fit(
        data, levels={"educ": ["low", "mid", "high", "top"]}
    )
    assert list(synth.columns_["educ"].labels) == ["low", "mid", "high", "top"]
    model = synth.models_["educ"]
    ref = pd.read_csv(REF / "polr_coef.csv")
    assert_allclose(np.concatenate([model.coef, model.zeta]), ref["estimate"], rtol=1e-6)
    shares = pd.concat(synth.sample(m=20, rng=1))["educ"].value_counts(normalize=True)
    orig = data["educ"].value_counts(normalize=True)
    assert np.all(np.abs(shares - orig) < 4 * np.sqrt(orig * (1 - orig) / len(data)))


def test_multinomial_standard_errors_match_nnet(data):
    ref = pd.read_csv(REF / "multinom_se.csv")
    codes = data["region"].map({"north": 0, "south": 1, "west": 2}).to_numpy()
    x = np.column_stack([np.ones(len(data)), (data["sex"] == "M").astype(float), data["age"].astype(float)])
    m = fit_multinomial(codes, 3, x)
    assert_allclose(m.coef[:, 1:].T.ravel(), ref["estimate"], rtol=1e-5, atol=1e-7)
    assert_allclose(m.se[:, 1:].T.ravel(), ref["se"], rtol=1e-5)


def test_pmm_draws_observed_values_near_the_prediction():
    g = np.random.default_rng(0)
    x = np.column_stack([np.ones(500), g.normal(size=500)])
    y = np.exp(1 + x[:, 1] + 0.3 * g.normal(size=500))  # skewed
    m = fit_pmm(y, x)
    draws = m.draw(x, np.random.default_rng(1))
    assert np.isin(draws, y).all()
    assert np.corrcoef(np.log(draws), x[:, 1])[0, 1] > 0.8
    # the three nearest donors: a record at the top of the prediction range gets a top value
    top = m.draw(x[[np.argmax(x[:, 1])]], np.random.default_rng(2))
    assert top[0] >= np.sort(y)[-30]


def test_normrank_keeps_the_marginal_and_the_dependence():
    g = np.random.default_rng(3)
    x = np.column_stack([np.ones(2000), g.normal(size=2000)])
    y = np.exp(0.8 * x[:, 1] + 0.6 * g.normal(size=2000))
    m = fit_normrank(y, x)
    draws = m.draw(x, np.random.default_rng(4))
    assert np.isin(draws, y).all()
    qs = [0.1, 0.5, 0.9]
    assert_allclose(np.quantile(draws, qs), np.quantile(y, qs), rtol=0.1)
    assert np.corrcoef(np.log(draws), x[:, 1])[0, 1] == pytest.approx(np.corrcoef(np.log(y), x[:, 1])[0, 1], abs=0.05)
