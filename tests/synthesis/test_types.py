"""Types said out loud: numbers inferred from text with a notice, many categories warned about."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cellsafe import SequentialSynthesizer
from cellsafe.exceptions import CellsafeWarning


def diamonds_like(n: int = 2000, seed: int = 1) -> pd.DataFrame:
    """Text columns as a CSV gives them: carat and price numbers, cut a category, codes with leading zeros."""
    g = np.random.default_rng(seed)
    carat = np.round(g.gamma(2.0, 0.4, size=n), 2)
    price = np.round(np.exp(7.8 + 1.6 * np.log(carat + 0.2) + g.normal(0, 0.3, size=n))).astype(int)
    cut = g.choice(["Fair", "Good", "Very Good", "Premium", "Ideal"], size=n)
    depth_band = g.choice(["1", "2", "3"], size=n)
    shop = np.array([f"{i:03d}" for i in g.integers(0, 40, size=n)])
    return pd.DataFrame(
        {"carat": carat.astype(str), "cut": cut, "band": depth_band, "shop": shop, "price": price.astype(str)}
    )


def test_diamonds_without_numeric_gives_the_notice_naming_columns_and_distinct_counts():
    data = diamonds_like()
    with pytest.warns(CellsafeWarning) as caught:
        synth = SequentialSynthesizer().fit(data)
    text = " ".join(str(w.message) for w in caught)
    n_price = data["price"].nunique()
    assert f"price ({n_price:,} distinct values)" in text
    assert f"carat ({data['carat'].astype(float).nunique():,} distinct values)" in text
    assert "band (3)" in text  # number-like, few values: kept as categories, and said so
    assert synth.columns_["price"].kind == "numeric" and synth.columns_["carat"].kind == "numeric"
    assert synth.columns_["shop"].kind == "categorical"  # '007' keeps its leading zeros
    assert synth.columns_["band"].kind == "categorical"
    assert synth.notices_ and any("price" in t for t in synth.notices_)
    [s] = synth.sample(rng=1)
    assert s["price"].dtype == np.int64 and s["shop"].str.len().eq(3).all()


def test_many_levels_of_a_category_get_a_warning_and_a_suggestion():
    data = diamonds_like()
    with pytest.warns(CellsafeWarning, match=r"'price' is categorical with [\d,]+ categories .*--numeric price"):
        synth = SequentialSynthesizer(methods={"price": "sample"}, visit_sequence=["price", "cut"]).fit(
            data, categorical=["price"]
        )
    assert synth.columns_["price"].kind == "categorical"


def test_declared_types_win_and_say_nothing():
    data = diamonds_like()[["carat", "cut"]]
    with _no_warning():
        synth = SequentialSynthesizer().fit(data, numeric=["carat"])
    assert synth.columns_["carat"].kind == "numeric"


class _no_warning:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings(record=True)
        self.caught = self._w.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._w.__exit__(*exc)
        assert not [w for w in self.caught if issubclass(w.category, CellsafeWarning)]
        return False
