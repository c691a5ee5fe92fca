"""Sequential synthesis on a subsample of Adult: utility against independent marginals, the metrics on implicates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellsafe import SequentialSynthesizer
from cellsafe.metrics.microdata import attribute_disclosure, propensity_metrics, regression_utility

ADULT = Path(__file__).resolve().parents[1] / "reference" / "adult" / "adult.csv.gz"
PENGUINS = Path(__file__).resolve().parents[1] / "reference" / "penguins" / "adelie.csv"
CATEGORICAL = ["workclass", "marital-status", "relationship", "race", "sex", "income>50K"]
COLUMNS = ["age", "sex", "race", "relationship", "marital-status", "workclass", "education-num", "hours-per-week", "income>50K"]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT, usecols=COLUMNS)[COLUMNS].sample(4000, random_state=7).reset_index(drop=True)


@pytest.fixture(scope="module")
def cart(adult) -> list[pd.DataFrame]:
    return SequentialSynthesizer().fit(adult, categorical=CATEGORICAL).sample(m=2, rng=11)


def test_cart_keeps_associations_that_marginals_lose(adult, cart):
    gen = np.random.default_rng(3)
    marginal = pd.DataFrame({c: adult[c].to_numpy()[gen.integers(0, len(adult), len(adult))] for c in adult.columns})
    p_cart = propensity_metrics(adult, cart[0], categorical=CATEGORICAL, max_params=120, rng=5)
    p_marg = propensity_metrics(adult, marginal, categorical=CATEGORICAL, max_params=120, rng=5)
    assert p_marg.pmse > 20 * p_cart.pmse
    assert p_cart.pmse_ratio < 4  # 2 is expected for an independent sample from the fitted model


def test_cart_outputs_keep_the_data_types(adult, cart):
    for s in cart:
        assert list(s.columns) == COLUMNS and len(s) == len(adult)
        assert (s.dtypes == adult.dtypes).all()
        for c in CATEGORICAL:
            assert set(s[c]) <= set(adult[c])
        assert s["age"].between(adult["age"].min(), adult["age"].max()).all()


def test_risk_metrics_run_on_the_release(adult, cart):
    r = attribute_disclosure(adult, cart[0], ["age", "sex", "race"], "income>50K")
    assert 0 <= r.DiSCO <= r.DiO <= 1


def test_combining_rules_accept_implicates():
    """Raab et al. (fully synthetic) and Reiter (partially synthetic) combining rules over implicates."""
    penguins = pd.read_csv(PENGUINS)[["sex", "bill_length_mm", "flipper_length_mm"]]
    full = SequentialSynthesizer(methods={"bill_length_mm": "normal", "flipper_length_mm": "normal"}).fit(penguins)
    r = regression_utility(penguins, full.sample(m=5, rng=1), "flipper_length_mm ~ sex + bill_length_mm")
    assert r.mean_overlap > 0.5
    partial = SequentialSynthesizer(methods={"sex": "keep", "bill_length_mm": "keep", "flipper_length_mm": "normal"}).fit(penguins)
    r = regression_utility(
        penguins, partial.sample(m=5, rng=2), "flipper_length_mm ~ sex + bill_length_mm", synthesis="partially"
    )
    assert r.mean_overlap > 0.5
