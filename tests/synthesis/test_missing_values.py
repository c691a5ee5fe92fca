"""Missing values of real records (palmerpenguins with R's NA): read, modelled, and kept."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellsafe import SequentialSynthesizer
from cellsafe.exceptions import DataError
from cellsafe.io import read_records
from cellsafe.metrics.microdata import compare_missingness

PENGUINS = Path(__file__).resolve().parents[1] / "reference" / "penguins" / "penguins.csv"
NUMBERS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


@pytest.fixture(scope="module")
def penguins() -> pd.DataFrame:
    return read_records(PENGUINS)  # text as written: 'NA' where R wrote a missing value


def _fit(methods, data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SequentialSynthesizer(methods=methods, **kw).fit(data, missing_values={"sex": ["NA"]})


@pytest.mark.slow
@pytest.mark.parametrize(
    "methods",
    [
        None,  # sample the first, CART after
        {"island": "multinomial", "bill_length_mm": "normal", "bill_depth_mm": "pmm", "flipper_length_mm": "normrank",
         "body_mass_g": "normal", "sex": "multinomial", "year": "multinomial"},
    ],
    ids=["cart", "parametric"],
)
def test_share_of_missing_values_within_two_monte_carlo_se_over_50_implicates(penguins, methods):
    synth = _fit(methods, penguins)
    implicates = synth.sample(m=50, rng=2026)
    original = penguins.replace("NA", np.nan)
    result = compare_missingness(original, implicates)
    table = result.columns
    assert table.loc["sex", "original"] == pytest.approx(11 / 344)
    assert table.loc["body_mass_g", "original"] == pytest.approx(2 / 344)
    for col in NUMBERS + ["sex"]:
        row = table.loc[col]
        assert row["synthetic"] > 0
        assert abs(row["synthetic"] - row["original"]) <= 2 * row["mc_se"], (col, row.to_dict())


def test_share_missing_by_predictor_is_kept(penguins):
    """sex is missing mostly for Adelie and Gentoo penguins; the synthetic shares by species follow."""
    synth = _fit(None, penguins)
    implicates = synth.sample(m=50, rng=7)
    result = compare_missingness(penguins.replace("NA", np.nan), implicates)
    rows = result.by_category[(result.by_category["column"] == "sex") & (result.by_category["by"] == "species")]
    se = np.sqrt(rows["original"] * (1 - rows["original"]) / rows["n"]) + 0.01
    assert np.all(np.abs(rows["synthetic"] - rows["original"]) < 3 * se), rows


def test_blanks_na_and_empty_strings_are_missing_in_numbers():
    frame = pd.DataFrame({"g": list("abab") * 10, "x": ["1.5", "", " ", "NA", "2", "3.25", None, "4", "NaN", "5"] * 4})
    synth = SequentialSynthesizer(methods={"x": "normal"}).fit(frame, numeric=["x"])
    col = synth.columns_["x"]
    assert col.kind == "numeric" and col.has_missing and col.low == 1.5 and col.high == 5.0
    [s] = synth.sample(rng=1)
    assert s["x"].isna().any() and s["x"].notna().any()


def test_declared_markers_are_missing_and_an_undeclared_one_names_the_fix():
    frame = pd.DataFrame({"g": list("ab") * 10, "x": ["1", "-9", "3", "4", ".", "6", "7", "8", "9", "10"] * 2})
    with pytest.raises(DataError, match=r"missing_values=\{'x': \['\.'\]\}"):
        SequentialSynthesizer().fit(frame, numeric=["x"])
    synth = SequentialSynthesizer().fit(frame, numeric=["x"], missing_values={"x": ["-9", "."]})
    assert synth.columns_["x"].low == 1 and synth.columns_["x"].has_missing
    # a marker for every column; "NA" in a text column is a category unless declared
    text = pd.DataFrame({"s": ["NA", "a", "b"] * 5})
    assert "NA" in list(SequentialSynthesizer().fit(text).columns_["s"].labels)
    assert "NA" not in list(SequentialSynthesizer().fit(text, missing_values=["NA"]).columns_["s"].labels)


def test_collinear_missing_indicators_do_not_stop_a_regression(penguins):
    """All four measurements are missing on the same two records: their missing indicators are
    collinear, and on the records where a value is present they are constant.  The design drops
    them as R's lm does, instead of 'rank deficient (collinear predictors)'."""
    synth = _fit({c: "normal" for c in NUMBERS} | {"island": "multinomial"}, penguins)
    model = synth.models_["body_mass_g"]
    assert np.all(np.isfinite(model.coef))
    assert len(model.keep) < 1 + 2 + 2 + 3 * 2  # intercept, species, island, 3 numbers with their indicators
