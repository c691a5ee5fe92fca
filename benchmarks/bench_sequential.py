"""Benchmark: CART sequential synthesis of all Adult columns (48,842 records, m = 1).

cellsafe's :class:`~cellsafe.SequentialSynthesizer` (predictor matrices built once as codes, one
tree per column, donors drawn for all records with one sort and one index per column) against a
straightforward implementation run in the same process: for every column, the confidential and
synthetic predictors are one-hot encoded afresh with pandas, a scikit-learn tree is fitted, and
donors are drawn leaf by leaf.  Both use trees with at least 5 records per leaf.  The utility
of the release (pMSE of a logistic propensity model: main effects, then with pairwise
interactions) is compared with independent sampling of each column's marginal, and its
disclosure risk (DiSCO, TCAP) is reported beside it.

Usage: ``python benchmarks/bench_sequential.py [path/to/adult.csv]``; the default is the copy
committed with the tests.  Prints times and ratios, asserts nothing about time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import cellsafe
from cellsafe.metrics.microdata import attribute_disclosure, propensity_metrics

from _timing import timed

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "reference" / "adult" / "adult.csv.gz"
CATEGORICAL = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "income>50K"]
KEYS = ["age", "sex", "race", "occupation"]
TARGET = "income>50K"


def straightforward_cart(data: pd.DataFrame, categorical: list[str], min_leaf: int, seed: int) -> pd.DataFrame:
    """One tree per column, refitted from freshly encoded frames, donors drawn leaf by leaf."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    gen = np.random.default_rng(seed)
    cols = list(data.columns)
    n = len(data)
    syn = pd.DataFrame({cols[0]: data[cols[0]].to_numpy()[gen.integers(0, n, n)]})
    for i, col in enumerate(cols[1:], start=1):
        preds = cols[:i]
        both = pd.concat([data[preds], syn[preds]], keys=["conf", "syn"])
        for c in preds:
            if c in categorical:
                both[c] = both[c].astype("category")
        x = pd.get_dummies(both, columns=[c for c in preds if c in categorical], dtype=float)
        xc, xs = x.loc["conf"].to_numpy(), x.loc["syn"].to_numpy()
        tree = (DecisionTreeClassifier if col in categorical else DecisionTreeRegressor)(min_samples_leaf=min_leaf, random_state=0)
        y = data[col].to_numpy()
        tree.fit(xc, y)
        leaf_c, leaf_s = tree.apply(xc), tree.apply(xs)
        donors = pd.Series(y).groupby(leaf_c).apply(np.asarray)
        out = np.empty(n, dtype=y.dtype)
        for leaf, rows in pd.Series(np.arange(n)).groupby(leaf_s):
            out[rows.to_numpy()] = gen.choice(donors[leaf], size=len(rows))
        syn[col] = out
    return syn


def main(path: str | None = None) -> None:
    adult = pd.read_csv(Path(path) if path else DEFAULT)
    print(f"Adult: {len(adult):,} records, {adult.shape[1]} variables; CART for every variable after the first, m = 1")

    def cellsafe_cart() -> pd.DataFrame:
        synth = cellsafe.SequentialSynthesizer(methods="cart").fit(adult, categorical=CATEGORICAL)
        return synth.sample(rng=1)[0]

    cart, t_cs = timed(cellsafe_cart)
    print(f"cellsafe SequentialSynthesizer (fit + sample):   {t_cs:7.2f} s  (target: under 15 s)")
    _, t_base = timed(straightforward_cart, adult, CATEGORICAL, 5, 1)
    print(f"straightforward CART (one-hot, refit, per leaf): {t_base:7.2f} s   ratio baseline / cellsafe = {t_base / t_cs:5.1f}")

    gen = np.random.default_rng(2)
    marginal = pd.DataFrame({c: adult[c].to_numpy()[gen.integers(0, len(adult), len(adult))] for c in adult.columns})
    for label, order in (("main effects", 1), ("main effects + pairwise interactions (200 parameters)", 2)):
        p_cart = propensity_metrics(adult, cart, max_order=order, categorical=CATEGORICAL, rng=3)
        p_marg = propensity_metrics(adult, marginal, max_order=order, categorical=CATEGORICAL, rng=3)
        print(
            f"pMSE, logistic {label}: CART {p_cart.pmse:.3g} (ratio {p_cart.pmse_ratio:.2f}), "
            f"independent marginals {p_marg.pmse:.3g} (ratio {p_marg.pmse_ratio:.2f}); "
            f"marginals / CART = {p_marg.pmse / p_cart.pmse:.1f}"
        )
    risk = attribute_disclosure(adult, cart, KEYS, TARGET)
    risk_m = attribute_disclosure(adult, marginal, KEYS, TARGET)
    print(
        f"risk, keys {', '.join(KEYS)} -> {TARGET}: CART DiSCO {risk.DiSCO:.4f}, TCAP {risk.TCAP:.4f}, repU {risk.repU:.4f} "
        f"(original DiO {risk.DiO:.4f}); independent marginals DiSCO {risk_m.DiSCO:.4f}, TCAP {risk_m.TCAP:.4f}"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
