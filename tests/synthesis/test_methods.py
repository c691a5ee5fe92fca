"""Each method of sequential synthesis against a reference or a statistical check at a fixed seed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe import SequentialSynthesizer
from cellsafe.synthesis import CartModel, fit_multinomial

REF = Path(__file__).resolve().parents[1] / "reference" / "multinomial"


def test_multinomial_matches_nnet_multinom():
    """race ~ sex + age + hours on 2,000 Adult records: R's nnet::multinom (make_fixtures.R)."""
    d = pd.read_csv(REF / "adult_2000.csv")
    ref = pd.read_csv(REF / "multinom_coef.csv")
    synth = SequentialSynthesizer(
        methods={"race": "multinomial"}, visit_sequence=["sex", "age", "hours", "race"], predictors={"race": ["sex", "age", "hours"]}
    ).fit(d, categorical=["race", "sex"])
    model = synth.models_["race"]
    assert model.converged
    assert_allclose(model.coef[:, 1:].T, ref.iloc[:, 1:].to_numpy(), rtol=1e-5, atol=1e-6)
    loglik = float(pd.read_csv(REF / "multinom_loglik.csv", header=None).iloc[0, 1])
    assert_allclose(model.loglik, loglik, rtol=1e-9)


def test_multinomial_draws_follow_the_fitted_probabilities():
    g = np.random.default_rng(0)
    codes = g.choice(3, size=3000, p=[0.2, 0.3, 0.5])
    model = fit_multinomial(codes, 3, np.ones((3000, 1)))
    draws = model.draw(np.ones((20000, 1)), np.random.default_rng(1))
    p = np.bincount(codes, minlength=3) / 3000
    counts = np.bincount(draws, minlength=3)
    chi2 = np.sum((counts - 20000 * p) ** 2 / (20000 * p))
    assert chi2 < 13.8  # chi-square(2) 0.999 quantile


def test_logistic_reproduces_a_conditional_share():
    g = np.random.default_rng(2)
    x = g.integers(0, 2, size=4000)
    y = np.where(g.random(4000) < np.where(x == 1, 0.8, 0.3), "yes", "no")
    df = pd.DataFrame({"x": np.where(x == 1, "b", "a"), "y": y})
    synth = SequentialSynthesizer(methods={"y": "logistic"}).fit(df)
    [s] = synth.sample(n=20000, rng=3)
    for label in ("a", "b"):
        share_o = (df.loc[df.x == label, "y"] == "yes").mean()
        rows = s.loc[s.x == label, "y"]
        se = np.sqrt(share_o * (1 - share_o) / len(rows) + share_o * (1 - share_o) / (df.x == label).sum())
        assert abs((rows == "yes").mean() - share_o) < 4 * se
    assert set(s["y"]) == {"yes", "no"}  # text stays text: "yes" never becomes True


def test_cart_draws_donors_from_the_leaf_of_the_synthetic_predictors():
    # y is determined by x's group: every leaf holds one value, so a donor must be it
    x = np.repeat([0, 1, 2, 3], 25)
    df = pd.DataFrame({"x": x, "y": x * 10.0 + 1})
    synth = SequentialSynthesizer(methods={"x": "sample", "y": "cart"}).fit(df)
    assert isinstance(synth.models_["y"], CartModel)
    for s in synth.sample(m=3, rng=5):
        assert_array_equal(s["y"], s["x"] * 10.0 + 1)


def test_cart_smoothing_blurs_within_the_observed_range():
    g = np.random.default_rng(6)
    df = pd.DataFrame({"a": g.choice(["p", "q"], 500), "v": g.normal(size=500)})
    plain = SequentialSynthesizer().fit(df).sample(rng=1)[0]
    smooth = SequentialSynthesizer(smoothing="density").fit(df).sample(rng=1)[0]
    assert set(plain["v"]) <= set(df["v"])
    assert not set(smooth["v"]) <= set(df["v"])
    assert smooth["v"].min() >= df["v"].min() and smooth["v"].max() <= df["v"].max()


def test_sample_method_chi_square():
    df = pd.DataFrame({"c": np.repeat(["x", "y", "z"], [100, 300, 600])})
    [s] = SequentialSynthesizer().fit(df).sample(n=30000, rng=8)
    counts = s["c"].value_counts().reindex(["x", "y", "z"]).to_numpy()
    expected = 30000 * np.array([0.1, 0.3, 0.6])
    assert np.sum((counts - expected) ** 2 / expected) < 13.8


def test_keep_is_partial_synthesis():
    """002 section 2.9: kept variables are released as they are, in record order."""
    g = np.random.default_rng(9)
    df = pd.DataFrame({"carat": g.uniform(0.2, 2, 300).round(2), "cut": g.choice(["Good", "Ideal"], 300)})
    df["price"] = (df["carat"] * 4000 + g.normal(0, 300, 300)).round()
    synth = SequentialSynthesizer(methods={"carat": "keep", "cut": "keep", "price": "normal"}).fit(df)
    a, b = synth.sample(m=2, rng=1)
    pd.testing.assert_frame_equal(a[["carat", "cut"]], df[["carat", "cut"]])
    pd.testing.assert_frame_equal(b[["carat", "cut"]], df[["carat", "cut"]])
    assert not a["price"].equals(df["price"]) and not a["price"].equals(b["price"])
    with pytest.raises(ValueError, match="as many records"):
        synth.sample(n=10, rng=1)


def test_same_rng_same_records_and_independent_implicates():
    g = np.random.default_rng(10)
    df = pd.DataFrame({"a": g.choice(["u", "v", "w"], 400), "b": g.normal(size=400), "c": g.integers(0, 9, 400)})
    synth = SequentialSynthesizer(methods={"b": "normal"}).fit(df)
    one = synth.sample(m=3, rng=42)
    two = synth.sample(m=3, rng=42)
    for x, y in zip(one, two):
        pd.testing.assert_frame_equal(x, y)
    assert not one[0].equals(one[1])
    # implicate i does not depend on how many implicates are drawn
    pd.testing.assert_frame_equal(synth.sample(m=1, rng=42)[0], one[0])
    # sampling leaves the fitted synthesizer unchanged
    assert synth.models_["b"] is synth.models_["b"] and len(synth.sample(rng=1)[0]) == 400


def test_types_labels_and_order_are_kept():
    df = pd.DataFrame(
        {
            "grade": pd.Categorical(["low", "mid", "high", "mid"] * 30, categories=["low", "mid", "high"], ordered=True),
            "flag": [True, False, True, True] * 30,
            "code": ["0.50", "0.25", "0.50", "1.00"] * 30,
            "n": np.arange(120) % 7,
            "x": np.linspace(0, 1, 120),
        }
    )
    [s] = SequentialSynthesizer().fit(df).sample(rng=2)
    assert list(s.columns) == list(df.columns)
    assert s["grade"].dtype == df["grade"].dtype  # same categories, same order, still ordered
    assert s["flag"].dtype == bool
    assert set(s["code"]) <= {"0.50", "0.25", "1.00"}
    assert s["n"].dtype == np.int64 and s["n"].between(0, 6).all()
    assert s["x"].between(0, 1).all()


def test_csv_is_read_as_written(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("answer,share,count\n" + "yes,0.50,3\nno,0.25,4\nyes,1.00,5\n" * 20)
    synth = SequentialSynthesizer().fit(path, numeric=["count"])
    assert synth.columns_["answer"].kind == "categorical" and list(synth.columns_["share"].labels) == ["0.25", "0.50", "1.00"]
    assert synth.columns_["count"].kind == "numeric"
    [s] = synth.sample(rng=1)
    assert set(s["answer"]) <= {"yes", "no"} and set(s["share"]) <= {"0.50", "0.25", "1.00"}
    assert s["count"].dtype == np.int64


def test_missing_values_are_synthesized_as_missing():
    g = np.random.default_rng(12)
    n = 2000
    grp = g.choice(["a", "b"], n)
    income = np.where(g.random(n) < np.where(grp == "a", 0.1, 0.4), np.nan, g.normal(50, 10, n))
    region = pd.Series(g.choice(["north", "south", None], n, p=[0.45, 0.45, 0.1]), dtype=object)
    df = pd.DataFrame({"grp": grp, "region": region, "income": income})
    for method in ("cart", "normal"):
        synth = SequentialSynthesizer(methods={"region": "cart", "income": method}).fit(df)
        [s] = synth.sample(n=20000, rng=13)
        assert 0.08 < s["region"].isna().mean() < 0.12
        for label, p in (("a", 0.1), ("b", 0.4)):
            share = s.loc[s.grp == label, "income"].isna().mean()
            assert abs(share - df.loc[df.grp == label, "income"].isna().mean()) < 0.03, (method, label, share)
        obs = s["income"].dropna()
        assert obs.min() >= np.nanmin(income) and obs.max() <= np.nanmax(income)


def test_predictors_restrict_the_model():
    g = np.random.default_rng(14)
    df = pd.DataFrame({"a": g.normal(size=200), "b": g.normal(size=200), "c": g.normal(size=200)})
    synth = SequentialSynthesizer(methods="normal", predictors={"c": ["a"]}).fit(df)
    assert synth.predictors_ == {"a": [], "b": ["a"], "c": ["a"]}
    assert synth.models_["c"].names == ("(Intercept)", "a")
    assert synth.methods_ == {"a": "normal", "b": "normal", "c": "normal"}


def test_default_methods_and_visit_sequence():
    df = pd.DataFrame({"a": ["x", "y"] * 50, "b": np.arange(100.0), "c": ["p", "q", "r", "s"] * 25})
    synth = SequentialSynthesizer(visit_sequence=["c", "a"]).fit(df)
    assert synth.methods_ == {"c": "sample", "a": "cart"}
    [s] = synth.sample(rng=1)
    assert list(s.columns) == ["a", "c"]  # the data's order; b is not in the visit sequence


BAD = [
    (dict(methods="tree"), None, "must be one of"),
    (dict(methods={"a": "normal"}), None, "models a number"),
    (dict(methods={"b": "logistic"}), None, "models a category"),
    (dict(methods={"c": "logistic"}), None, "two values"),
    (dict(visit_sequence=["a", "zz"]), None, "unknown column 'zz'"),
    (dict(predictors={"a": ["b"]}), None, "comes at or after"),
    (dict(min_leaf=0), None, "min_leaf"),
    (dict(smoothing="kernel"), None, "smoothing"),
    (dict(), "empty", "no records"),
]


@pytest.mark.parametrize("kwargs, data, match", BAD)
def test_bad_input(kwargs, data, match):
    df = pd.DataFrame({"a": ["x", "y"] * 5, "b": np.arange(10.0), "c": list("pqrpqrpqrs")})
    if data == "empty":
        df = df.iloc[:0]
    with pytest.raises(ValueError, match=match):
        SequentialSynthesizer(**kwargs).fit(df)


def test_declared_numeric_text_must_be_numbers():
    df = pd.DataFrame({"a": ["1", "2", "x"]})
    with pytest.raises(ValueError, match="'x' in data row 3"):
        SequentialSynthesizer().fit(df, numeric=["a"])


def test_sample_before_fit():
    with pytest.raises(ValueError, match="not fitted"):
        SequentialSynthesizer().sample()


def test_arrow_and_parquet_inputs_give_the_same_records(tmp_path):
    pa = pytest.importorskip("pyarrow")
    g = np.random.default_rng(15)
    df = pd.DataFrame({"a": g.choice(["u", "v"], 300), "b": g.integers(0, 50, 300), "c": g.normal(size=300)})
    path = tmp_path / "d.parquet"
    df.to_parquet(path, index=False)
    from_frame = SequentialSynthesizer().fit(df).sample(rng=4)[0]
    from_arrow = SequentialSynthesizer().fit(pa.Table.from_pandas(df)).sample(rng=4)[0]
    from_file = SequentialSynthesizer().fit(path).sample(rng=4)[0]
    pd.testing.assert_frame_equal(from_arrow, from_frame, check_dtype=False)
    pd.testing.assert_frame_equal(from_file, from_frame, check_dtype=False)
    assert from_file["b"].dtype.kind == "i"


def test_proper_synthesis_doubles_the_spread_of_a_mean_between_implicates():
    """Sampling from the marginal: the mean of an implicate varies by s^2/n around the original's;
    with the marginal refitted on a bootstrap sample first (proper) by about 2 s^2/n."""
    g = np.random.default_rng(0)
    frame = pd.DataFrame({"x": g.normal(size=200)})
    spread = {}
    for proper in (False, True):
        synth = SequentialSynthesizer(methods="sample", proper=proper).fit(frame)
        means = [s["x"].mean() for s in synth.sample(m=400, rng=1)]
        spread[proper] = np.var(means, ddof=1) / (frame["x"].var() / 200)
    # the variance of a variance estimate over 400 implicates: relative SE sqrt(2/399) = 0.07
    assert abs(spread[False] - 1) < 4 * 0.071 and abs(spread[True] - 2) < 4 * 0.071 * 2
    again = SequentialSynthesizer(methods="sample", proper=True).fit(frame)
    a, b = again.sample(m=2, rng=5), again.sample(m=2, rng=5)
    assert all(x.equals(y) for x, y in zip(a, b))


def test_proper_synthesis_keeps_kept_columns_and_strata():
    frame = pd.DataFrame({"g": list("ab") * 60, "x": np.arange(120.0), "y": np.arange(120.0) % 7})
    synth = SequentialSynthesizer(methods={"g": "keep", "x": "normal", "y": "cart"}, proper=True).fit(frame)
    for s in synth.sample(m=3, rng=2):
        assert s["g"].tolist() == frame["g"].tolist()


def test_a_fitted_synthesizer_pickles():
    import pickle

    frame = pd.DataFrame({"g": list("ab") * 40, "x": [1.0, np.nan, 3.0, 4.0] * 20, "y": np.arange(80.0)})
    synth = SequentialSynthesizer(methods={"x": "normal", "y": "pmm"}).fit(frame)
    again = pickle.loads(pickle.dumps(synth))
    pd.testing.assert_frame_equal(synth.sample(rng=3)[0], again.sample(rng=3)[0])
