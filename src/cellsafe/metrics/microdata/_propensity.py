"""Discriminant (propensity-score) utility: pMSE, pMSE ratio, SPECKS and AUC.

The original and synthetic records are stacked with an indicator ``1 = synthetic``; a classifier
(logistic regression with interactions fitted by Newton-Raphson, or a scikit-learn
classification tree) estimates each
record's propensity of being synthetic.  With ``c = N_s / (N_o + N_s)``:

- ``pMSE = mean (p_i - c)^2`` over all ``N = N_o + N_s`` records (Woo et al. 2009);
- its null expectation when both data sets come from one distribution: for a logistic model
  with ``k`` parameters ``(k - 1)(1 - c)^2 c / N`` with standard deviation
  ``sqrt(2 (k - 1)) (1 - c)^2 c / N`` (Snoke et al. 2018); for a tree, the mean pMSE over refits
  with permuted labels;
- pMSE ratio = pMSE / null expectation (1 for a perfect synthesis);
- SPECKS = Kolmogorov-Smirnov distance between the propensities of the two groups;
- AUC of the classifier refitted on a training split and evaluated on the held-out split.

Course 002, section 3.5.1; methods.md section 8.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import special

from ..._random import as_generator
from ..._results import Result
from ..._validation import check_in, check_integer, check_real
from ...exceptions import InvalidArgumentError
from ._data import as_frame_pair, check_columns, is_categorical, joint_codes, numeric_values
from ...fitting.regression import fit_logistic, weighted_gram

__all__ = ["PropensityResult", "propensity_metrics", "ks_distance", "roc_auc"]

_OWNER = "propensity_metrics"


@dataclass(frozen=True)
class PropensityResult(Result):
    """Propensity-score (discriminant) utility of one synthetic data set.

    Attributes
    ----------
    method : str
        ``"logit"`` or ``"cart"``.
    pmse : float
        Mean squared difference of the in-sample propensities from ``c``.
    pmse_null : float
        Expected pMSE if the synthetic data came from the original's distribution.
    pmse_null_sd : float
        Its standard deviation (analytic for logit, over permutations for cart).
    pmse_ratio : float
        ``pmse / pmse_null``.
    standardized_pmse : float
        ``(pmse - pmse_null) / pmse_null_sd``.
    specks : float
        Kolmogorov-Smirnov distance between the propensities of synthetic and original records.
    auc : float
        Area under the ROC curve on the held-out split (0.5: indistinguishable).
    n_params : int
        Parameters of the logistic model including the intercept (leaves of the tree for cart).
    c : float
        Share of synthetic records in the stacked data.
    n_original, n_synthetic : int
    scores : numpy.ndarray
        In-sample propensities, original records first.
    is_synthetic : numpy.ndarray
        The indicator, aligned with ``scores``.
    converged : bool
        Whether the logistic fits converged (always True for cart).
    """

    method: str
    pmse: float
    pmse_null: float
    pmse_null_sd: float
    pmse_ratio: float
    standardized_pmse: float
    specks: float
    auc: float
    n_params: int
    c: float
    n_original: int
    n_synthetic: int
    scores: np.ndarray = field(repr=False, compare=False)
    is_synthetic: np.ndarray = field(repr=False, compare=False)
    converged: bool = True

    def _title(self) -> str:
        return f"PropensityResult ({self.method})"

    def to_dict(self) -> dict[str, Any]:
        """The scalar metrics (the keys of ``implicates`` in ``cellsafe evaluate-microdata --json``)."""
        return {
            "pmse": self.pmse,
            "pmse_null": self.pmse_null,
            "pmse_ratio": self.pmse_ratio,
            "standardized_pmse": self.standardized_pmse,
            "specks": self.specks,
            "auc": self.auc,
            "n_params": self.n_params,
        }


# --------------------------------------------------------------------------- small statistics


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov distance ``sup |F_a - F_b|`` (ties handled exactly)."""
    a = np.sort(np.asarray(a, dtype=float))
    b = np.sort(np.asarray(b, dtype=float))
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve: P(score of a positive > score of a negative) + ties / 2."""
    labels = np.asarray(labels, dtype=bool)
    n1 = int(labels.sum())
    n0 = labels.size - n1
    if n1 == 0 or n0 == 0:
        return np.nan
    r = _average_ranks(np.asarray(scores, dtype=np.float64))
    return float((r[labels].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (scipy.stats.rankdata's default, without importing scipy.stats)."""
    order = np.argsort(x, kind="mergesort")
    s = x[order]
    first = np.r_[True, s[1:] != s[:-1]]
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], s.size]
    ranks = np.empty(s.size)
    ranks[order] = ((starts + ends + 1) / 2.0)[np.cumsum(first) - 1]
    return ranks


# --------------------------------------------------------------------------- design matrices


def _main_blocks(
    orig: pd.DataFrame, syn: pd.DataFrame, cols: list[str], categorical: Sequence[str] | None
) -> list[tuple[str, np.ndarray]]:
    """One block per column over the stacked records: dummies (first level dropped) or a numeric."""
    blocks: list[tuple[str, np.ndarray]] = []
    for c in cols:
        if is_categorical(orig[c], categorical) or is_categorical(syn[c], categorical):
            (a, b), uniq = joint_codes([orig[c], syn[c]])
            codes = np.concatenate([a, b])
            counts = np.bincount(codes, minlength=len(uniq))
            keep = np.flatnonzero(counts > 0)[1:]  # drop the first present level
            if keep.size == 0:
                continue
            x = (codes[:, None] == keep[None, :]).astype(np.float64)
            blocks.append((c, x))
        else:
            x = np.concatenate([numeric_values(orig[c], _OWNER), numeric_values(syn[c], _OWNER)])
            miss = np.isnan(x)
            if miss.all():
                continue
            mu = np.nanmean(x)
            cols_ = [np.where(miss, mu, x)]
            if miss.any():
                cols_.append(miss.astype(np.float64))
            blocks.append((c, np.column_stack(cols_)))
    return blocks


def _design(blocks: list[tuple[str, np.ndarray]], max_order: int, max_params: int) -> np.ndarray:
    """Main effects plus pairwise products of blocks, smallest interaction blocks first, within max_params."""
    mains = [b for _, b in blocks]
    n_main = sum(b.shape[1] for b in mains)
    if n_main + 1 > max_params:
        raise InvalidArgumentError(
            f"{_OWNER}: the main effects alone need {n_main + 1} parameters, more than max_params={max_params}; "
            "use the tree (method='cart'; --propensity cart on the command line), fewer columns or categories, "
            "or a larger max_params."
        )
    parts = list(mains)
    if max_order >= 2 and len(mains) >= 2:
        pairs = [(mains[i].shape[1] * mains[j].shape[1], i, j) for i in range(len(mains)) for j in range(i)]
        pairs.sort()
        used = n_main + 1
        for size, i, j in pairs:
            if used + size > max_params:
                continue
            prod = (mains[i][:, :, None] * mains[j][:, None, :]).reshape(mains[i].shape[0], -1)
            parts.append(prod)
            used += size
    x = np.concatenate(parts, axis=1) if parts else np.zeros((0, 0))
    sd = x.std(axis=0)
    keep = sd > 1e-12
    x = x[:, keep]
    x -= x.mean(axis=0)
    x /= sd[keep]
    return x


def _rank(x: np.ndarray) -> int:
    if x.shape[1] == 0:
        return 0
    g = weighted_gram(x)
    w = np.linalg.eigvalsh(g)
    return int(np.sum(w > w.max() * 1e-10))


def _fit_logit(x: np.ndarray, y: np.ndarray, start: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Coefficients (intercept first) of a logistic fit by Newton-Raphson (from ``start`` when given)."""
    xi = np.column_stack([np.ones(x.shape[0]), x])
    # A very weak ridge on the standardized columns only keeps coefficients finite when a category
    # occurs in one data set alone; elsewhere it does not move the fitted propensities.
    fit = fit_logistic(xi, y.astype(np.float64), ridge=1e-3, max_iter=30, tol=1e-7, warn=False, start=start,
                       standard_errors=False)
    return fit.coef, fit.converged


def _predict_logit(beta: np.ndarray, x: np.ndarray) -> np.ndarray:
    return special.expit(beta[0] + x @ beta[1:])


def _tree(cp: float, min_samples_leaf: int, c: float, rs: int) -> Any:
    from sklearn.tree import DecisionTreeClassifier

    # rpart's complexity parameter cp relative to the root's Gini impurity 2c(1-c)
    return DecisionTreeClassifier(
        min_samples_leaf=min_samples_leaf, min_impurity_decrease=cp * 2 * c * (1 - c), random_state=rs
    )


def _tree_matrix(orig: pd.DataFrame, syn: pd.DataFrame, cols: list[str], categorical: Sequence[str] | None) -> np.ndarray:
    out = []
    for c in cols:
        if is_categorical(orig[c], categorical) or is_categorical(syn[c], categorical):
            (a, b), _ = joint_codes([orig[c], syn[c]])
            out.append(np.concatenate([a, b]).astype(np.float64))
        else:
            x = np.concatenate([numeric_values(orig[c], _OWNER), numeric_values(syn[c], _OWNER)])
            out.append(np.where(np.isnan(x), np.nanmin(x) - 1 if not np.isnan(x).all() else 0, x))
    return np.column_stack(out)


def _split(y: np.ndarray, test_size: float, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A stratified train/test split of positions."""
    train, test = [], []
    for v in (0, 1):
        idx = np.flatnonzero(y == v)
        gen.shuffle(idx)
        n_test = max(1, int(round(test_size * idx.size)))
        test.append(idx[:n_test])
        train.append(idx[n_test:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


# --------------------------------------------------------------------------- public function


def propensity_metrics(
    original: Any,
    synthetic: Any,
    columns: Sequence[str] | None = None,
    *,
    method: str = "logit",
    max_order: int = 2,
    max_params: int = 200,
    categorical: Sequence[str] | None = None,
    test_size: float = 0.3,
    n_permutations: int = 10,
    cp: float = 0.0,
    min_samples_leaf: int = 20,
    rng: Any = None,
) -> PropensityResult:
    """pMSE, pMSE ratio, SPECKS and AUC of one synthetic data set against the original.

    Parameters
    ----------
    original, synthetic : DataFrame
        The original records and one synthetic data set (pass implicates one at a time).
    columns : sequence of str, optional
        Columns the classifier sees (default: all shared columns).
    method : {"logit", "cart"}
        Logistic regression with interactions, or a classification tree.
    max_order : int
        Highest order of the logistic model's terms: 1 main effects, 2 adds pairwise products.
    max_params : int
        Cap on the logistic model's parameters; pairwise interaction blocks are added from the
        smallest up while they fit under the cap (the null uses the parameters actually fitted).
    categorical : sequence of str, optional
        Numeric columns to treat as categorical (dummies instead of a linear term).
    test_size : float
        Share of records held out for the AUC.
    n_permutations : int
        Refits with permuted labels for the tree's null pMSE.
    cp, min_samples_leaf : float, int
        Tree growth controls: a split must reduce the Gini impurity by ``cp`` times the root's
        (as rpart's complexity parameter), and every leaf keeps ``min_samples_leaf`` records.
        Trees grow greedily, so a synthesis that keeps every margin but breaks associations
        is only found with ``cp = 0`` (no single split improves the fit at the root).
    rng : None, int, SeedSequence or Generator
        Randomness for the train/test split, permutations and tree tie-breaking.

    Returns
    -------
    PropensityResult

    Notes
    -----
    Course 002, section 3.5.1 and methods.md section 8.  The logistic null expectation
    ``(k - 1)(1 - c)^2 c / N`` and standard deviation ``sqrt(2(k - 1))(1 - c)^2 c / N`` use ``k``,
    the rank of the design with its intercept.  The null is Snoke et al.'s: the synthetic records
    are drawn from the distribution the original records estimate (a correct synthesizer, given
    the original data), so resampling the original records gives a ratio near 1.  When the
    original and the synthetic records are instead two independent samples of one population,
    the original's own sampling noise adds to the difference and the expected ratio is
    ``1 / (1 - c)`` (2 for equal sizes).  pMSE and SPECKS are in-sample (as synthpop's
    ``utility.gen``); the AUC is out-of-sample, as the course recommends.  Trees see categorical
    columns as their integer codes.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> g = np.random.default_rng(1)
    >>> o = pd.DataFrame({"a": g.normal(size=500), "b": g.normal(size=500)})
    >>> s = pd.DataFrame({"a": g.normal(size=500), "b": g.normal(size=500)})
    >>> r = propensity_metrics(o, s, rng=2)
    >>> 0 < r.pmse_ratio < 4
    True
    """
    method = check_in(method, "method", _OWNER, ("logit", "cart"))
    max_order = check_integer(max_order, "max_order", _OWNER, low=1, high=2)
    max_params = check_integer(max_params, "max_params", _OWNER, low=2)
    test_size = check_real(test_size, "test_size", _OWNER, low=0.0, high=1.0, low_open=True, high_open=True)
    n_permutations = check_integer(n_permutations, "n_permutations", _OWNER, low=1)
    cp = check_real(cp, "cp", _OWNER, low=0.0)
    min_samples_leaf = check_integer(min_samples_leaf, "min_samples_leaf", _OWNER, low=1)
    orig, syn = as_frame_pair(original, synthetic, _OWNER)
    cols = check_columns({"original": orig, "synthetic": syn}, columns, _OWNER)
    gen = as_generator(rng)
    n_o, n_s = len(orig), len(syn)
    n = n_o + n_s
    c = n_s / n
    y = np.r_[np.zeros(n_o, dtype=np.int64), np.ones(n_s, dtype=np.int64)]
    train, test = _split(y, test_size, gen)
    seeds = gen.integers(0, 2**31 - 1, size=2 + n_permutations)

    if method == "logit":
        x = _design(_main_blocks(orig, syn, cols, categorical), max_order, max_params)
        k = _rank(x) + 1
        beta, conv = _fit_logit(x, y)
        p = _predict_logit(beta, x)
        # the training records' fit starts from all records' (the two share most records: a few steps)
        beta_t, conv_t = _fit_logit(x[train], y[train], start=beta)
        p_test = _predict_logit(beta_t, x[test])
        pmse = float(np.mean((p - c) ** 2))
        scale = (1 - c) ** 2 * c / n
        null = (k - 1) * scale
        null_sd = np.sqrt(2 * (k - 1)) * scale
        converged = conv and conv_t
        n_params = k
    else:
        x = _tree_matrix(orig, syn, cols, categorical)
        tree = _tree(cp, min_samples_leaf, c, int(seeds[0])).fit(x, y)
        p = tree.predict_proba(x)[:, 1]
        pmse = float(np.mean((p - c) ** 2))
        p_test = _tree(cp, min_samples_leaf, c, int(seeds[1])).fit(x[train], y[train]).predict_proba(x[test])[:, 1]
        null_draws = np.empty(n_permutations)
        for b in range(n_permutations):
            yp = gen.permutation(y)
            pp = _tree(cp, min_samples_leaf, c, int(seeds[2 + b])).fit(x, yp).predict_proba(x)[:, 1]
            null_draws[b] = np.mean((pp - c) ** 2)
        null = float(null_draws.mean())
        null_sd = float(null_draws.std(ddof=1)) if n_permutations > 1 else np.nan
        converged = True
        n_params = int(tree.get_n_leaves())
    ratio = pmse / null if null > 0 else np.nan
    std = (pmse - null) / null_sd if null_sd and null_sd > 0 else np.nan
    specks = ks_distance(p[y == 1], p[y == 0])
    auc = roc_auc(p_test, y[test])
    return PropensityResult(
        method=method,
        pmse=pmse,
        pmse_null=float(null),
        pmse_null_sd=float(null_sd),
        pmse_ratio=float(ratio),
        standardized_pmse=float(std),
        specks=specks,
        auc=auc,
        n_params=int(n_params),
        c=c,
        n_original=n_o,
        n_synthetic=n_s,
        scores=p,
        is_synthetic=y.astype(bool),
        converged=converged,
    )
