"""CART: classification and regression trees with donors drawn from leaves.

A tree is grown on the confidential values (a classification tree for a category, a regression
tree for a number; every leaf keeps at least ``min_leaf`` records).  A synthetic record is
dropped down the tree with its synthetic predictor values, and its value is that of a confidential
record drawn at random from the leaf it lands in (course 002, section 2.5, nonparametric
synthesis; Reiter 2005).  Donor values are observed values, so categories keep their labels and
numbers their observed range; ``smoothing="density"`` adds Gaussian noise to numeric donors with
each leaf's rule-of-thumb bandwidth ``0.9 min(sd, IQR / 1.34) n^(-1/5)`` (R's ``bw.nrd0``).

Trees come from scikit-learn (the optional extra ``ml``).  Predictors enter as numbers or as
category codes in the categories' order, and missing numeric values are routed by the tree.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import CellsafeError

__all__ = ["CartModel", "fit_cart"]


def _sklearn_tree() -> Any:
    try:
        from sklearn import tree
    except ImportError:  # pragma: no cover - depends on the environment
        raise CellsafeError(
            "method 'cart' needs scikit-learn; install it with pip install 'cellsafe[ml]'."
        ) from None
    return tree


@dataclass(frozen=True)
class CartModel:
    """A fitted tree and the confidential values of each of its leaves.

    Attributes
    ----------
    tree : sklearn.tree.DecisionTreeClassifier or DecisionTreeRegressor
    donors : numpy.ndarray
        Confidential target values ordered by leaf.
    starts, counts : numpy.ndarray
        For every node id, where its donors start in ``donors`` and how many there are.
    bandwidth : numpy.ndarray or None
        Per node smoothing bandwidth (``smoothing="density"``).
    low, high : float
        Range smoothed values are clipped to.
    """

    tree: Any = field(repr=False)
    donors: np.ndarray = field(repr=False)
    starts: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)
    bandwidth: np.ndarray | None = field(default=None, repr=False)
    low: float = -np.inf
    high: float = np.inf

    @property
    def n_leaves(self) -> int:
        return int(self.tree.get_n_leaves())

    def proba(self, x: np.ndarray) -> np.ndarray:
        """Share of each code among the donors of each record's leaf (a classification tree)."""
        if x.shape[1] == 0:
            x = np.zeros((x.shape[0], 1), dtype=np.float32)
        leaf = _leaves(self.tree, x)
        k = int(self.donors.max()) + 1
        uniq, inv = np.unique(leaf, return_inverse=True)
        table = np.empty((uniq.size, k))
        for i, node in enumerate(uniq):
            d = self.donors[self.starts[node] : self.starts[node] + self.counts[node]].astype(np.int64)
            table[i] = np.bincount(d, minlength=k) / max(d.size, 1)
        return table[inv.reshape(-1)]

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        if x.shape[1] == 0:  # grown without predictors
            x = np.zeros((x.shape[0], 1), dtype=np.float32)
        leaf = _leaves(self.tree, x)
        count = self.counts[leaf]
        pick = self.starts[leaf] + np.minimum((gen.random(leaf.size) * count).astype(np.int64), count - 1)
        y = self.donors[pick]
        if self.bandwidth is not None:
            y = y + self.bandwidth[leaf] * gen.standard_normal(leaf.size)
            np.clip(y, self.low, self.high, out=y)
        return y


def _leaves(tree: Any, x: np.ndarray) -> np.ndarray:
    """The leaf of each row (the fitted tree's own ``apply``, without scikit-learn's input checks:
    the matrices come from :func:`~cellsafe.synthesis._design.tree_matrix`, float32 as the tree was fitted)."""
    return tree.tree_.apply(np.ascontiguousarray(x, dtype=np.float32))


def _leaf_bandwidths(values: np.ndarray, leaf: np.ndarray, n_nodes: int) -> np.ndarray:
    """``bw.nrd0`` of each leaf's values, vectorized over leaves (0 for a leaf of one record)."""
    order = np.lexsort((values, leaf))
    v, lf = values[order], leaf[order]
    counts = np.bincount(lf, minlength=n_nodes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    sums = np.bincount(lf, weights=v, minlength=n_nodes)
    sq = np.bincount(lf, weights=v * v, minlength=n_nodes)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (sq - sums**2 / np.maximum(counts, 1)) / np.maximum(counts - 1, 1)
        sd = np.sqrt(np.clip(var, 0, None))

        def quantile(q: float) -> np.ndarray:
            pos = starts + q * np.maximum(counts - 1, 0)
            lo = np.floor(pos).astype(np.int64)
            hi = np.minimum(lo + 1, starts + np.maximum(counts - 1, 0))
            lo = np.minimum(lo, len(v) - 1)
            hi = np.minimum(hi, len(v) - 1)
            return v[lo] + (pos - lo) * (v[hi] - v[lo])

        iqr = quantile(0.75) - quantile(0.25)
        spread = np.minimum(sd, iqr / 1.34)
        spread = np.where(spread > 0, spread, sd)
        bw = 0.9 * spread * np.maximum(counts, 1) ** (-0.2)
    bw[counts < 2] = 0.0
    return np.nan_to_num(bw)


def fit_cart(
    y: np.ndarray,
    x: np.ndarray,
    *,
    categorical: bool,
    min_leaf: int = 5,
    smoothing: str | None = None,
    low: float = -np.inf,
    high: float = np.inf,
) -> CartModel:
    """Grow a tree of ``y`` on ``x`` and index the confidential values of its leaves.

    Parameters
    ----------
    y : numpy.ndarray
        Category codes (``categorical=True``) or numbers without missing values.
    x : (n, p) numpy.ndarray
        Predictors from :func:`~cellsafe.synthesis._design.tree_matrix` (``p`` may be 0).
    min_leaf : int
        Fewest confidential records in a leaf (rpart's ``minbucket``).
    smoothing : {None, "density"}
        Gaussian smoothing of numeric donors.
    low, high : float
        Range smoothed numbers are clipped to.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.repeat([0.0, 1.0], 10)[:, None]
    >>> m = fit_cart(np.repeat([3.0, 7.0], 10), x, categorical=False)
    >>> m.draw(np.array([[0.0], [1.0]]), np.random.default_rng(1))
    array([3., 7.])
    """
    tree = _sklearn_tree()
    n = y.size
    if x.shape[1] == 0:  # no predictors: one leaf, the marginal
        x = np.zeros((n, 1), dtype=np.float32)
    cls = tree.DecisionTreeClassifier if categorical else tree.DecisionTreeRegressor
    model = cls(min_samples_leaf=int(min_leaf), random_state=0)
    with warnings.catch_warnings():  # many classes for few records is expected (e.g. numbers read as text)
        warnings.filterwarnings("ignore", message="The number of unique classes", category=UserWarning)
        model.fit(x, y)
    leaf = model.apply(x)
    n_nodes = model.tree_.node_count
    order = np.argsort(leaf, kind="stable")
    counts = np.bincount(leaf, minlength=n_nodes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    bandwidth = None
    if smoothing == "density" and not categorical:
        bandwidth = _leaf_bandwidths(y.astype(np.float64), leaf, n_nodes)
    return CartModel(model, y[order], starts, counts, bandwidth, low, high)
