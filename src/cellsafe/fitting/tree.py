"""Consistent estimates over a tree of counts: least squares, then non-negative integers.

Noisy counts measured at every node of a tree whose parents are the sums of their children (a
geography: nation > states > counties > tracts, each crossed with the same other variables) do not
add up.  Two steps make them add up, both post-processing (they cost no privacy budget):

1. :func:`tree_least_squares`: the generalized least-squares (best linear unbiased) estimate of
   every node under the constraint ``parent = sum of children``, for independent measurements with
   known variances (a level may be unmeasured: infinite variance).  Two passes over the levels, as
   Hay, Rastogi, Miklau and Suciu (2010, "Boosting the accuracy of differentially private histograms
   through consistency") give for a uniform tree, generalized to any fan-out and any variance per
   node: upwards, each subtree's sum is estimated from the measurements inside it; downwards, each
   parent's final estimate is shared among its children in proportion to their upward variances.
   The variance of every estimate comes with it, exactly: the a priori error of the release.
2. :func:`tree_integers`: non-negative integers that add up at every level, top-down: the top
   values are rounded, then each parent's integer is shared among its children by the Euclidean
   (weighted) projection of their estimates onto ``{x >= 0, sum x = parent}`` followed by a
   controlled rounding that keeps the parent's total (each child is the floor or the ceiling of its
   projected value, the remainder going to the largest fractional parts).  No step changes a total
   fixed above it, so the integer step costs the top levels nothing.

A tree is given by levels, top first: ``parents[l]`` maps each node of level ``l + 1`` to its parent
at level ``l`` (positions).  Every node above the last level must have at least one child.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._results import Result
from ..exceptions import DataError, InvalidArgumentError

__all__ = ["TreeEstimate", "tree_least_squares", "tree_integers", "check_tree"]


@dataclass(frozen=True)
class TreeEstimate(Result):
    """The least-squares estimate of :func:`tree_least_squares`.

    Attributes
    ----------
    values : list of ndarray
        The estimate at every node, one array per level (top first); each parent is the sum of its
        children up to floating-point rounding.
    variances : list of ndarray
        The variance of each estimate (exact, from the measurement variances alone).
    """

    values: list[np.ndarray]
    variances: list[np.ndarray]

    def to_dict(self) -> dict[str, Any]:
        return {
            "levels": len(self.values),
            "nodes": [int(v.shape[0]) for v in self.values],
            "rmse": [float(np.sqrt(np.mean(v))) if v.size else 0.0 for v in self.variances],
        }


def check_tree(parents: Sequence[Any], sizes: Sequence[int]) -> list[np.ndarray]:
    """Check the parent maps of a tree of ``len(sizes)`` levels and return them as int64 arrays."""
    if len(parents) != len(sizes) - 1:
        raise InvalidArgumentError(f"a tree of {len(sizes)} levels needs {len(sizes) - 1} parent maps. Got {len(parents)}.")
    out = []
    for level, (p, n_up, n) in enumerate(zip(parents, sizes[:-1], sizes[1:])):
        a = np.asarray(p)
        if a.shape != (n,) or (a.size and not np.issubdtype(a.dtype, np.integer)):
            raise InvalidArgumentError(f"parents[{level}] must hold one integer position per node of level {level + 1} ({n}).")
        a = a.astype(np.int64)
        if a.size and (a.min() < 0 or a.max() >= n_up):
            raise DataError(f"parents[{level}] names a node outside level {level} (which has {n_up} nodes).")
        if np.bincount(a, minlength=n_up).min(initial=1) == 0:
            raise DataError(f"a node of level {level} has no child at level {level + 1}; every level must cover the one above.")
        out.append(a)
    return out


def _levels(values: Sequence[Any], what: str) -> list[np.ndarray]:
    out = [np.asarray(v, dtype=np.float64).reshape(-1) for v in values]
    for level, v in enumerate(out):
        if np.isnan(v).any():
            raise DataError(f"{what} of level {level} holds NaN.")
    return out


def _variances(variances: Sequence[Any], sizes: list[int]) -> list[np.ndarray]:
    if len(variances) != len(sizes):
        raise InvalidArgumentError(f"variances must give one value (or array) per level ({len(sizes)}). Got {len(variances)}.")
    out = []
    for level, (v, n) in enumerate(zip(variances, sizes)):
        a = np.broadcast_to(np.asarray(v, dtype=np.float64), (n,))
        if np.isnan(a).any() or (a < 0).any():
            raise InvalidArgumentError(f"variances of level {level} must be non-negative (inf: not measured).")
        out.append(a)
    return out


def tree_least_squares(measured: Sequence[Any], variances: Sequence[Any], parents: Sequence[Any]) -> TreeEstimate:
    """The generalized least-squares estimate of a tree of counts from noisy measurements.

    Parameters
    ----------
    measured : list of array
        The measurement of every node, one array per level, top first (any value where a node is
        not measured).
    variances : list of float or array
        The measurement variance per level (or per node); ``inf`` for a level that is not
        measured, ``0`` for one known exactly.  Measurements are independent.
    parents : list of array of int
        ``parents[l][i]``: the parent (a position in level ``l``) of node ``i`` of level ``l + 1``.

    Returns
    -------
    TreeEstimate
        Estimates and their variances, each parent the sum of its children.

    Notes
    -----
    With ``z_u``, ``v_u`` the estimate of a subtree's sum from the measurements inside it and its
    variance (the measurement itself at the last level), a node ``u`` with measurement ``y_u`` of
    variance ``s_u`` and children ``c`` has ``S = sum z_c``, ``V = sum v_c`` and
    ``z_u = (y_u / s_u + S / V) / (1 / s_u + 1 / V)``, ``v_u = 1 / (1 / s_u + 1 / V)``.  Downwards,
    with ``x_u``, ``w_u`` the final estimate of the parent and its variance,
    ``x_c = z_c + (v_c / V) (x_u - S)`` and ``w_c = v_c - v_c^2 / V + (v_c / V)^2 w_u``: the Gaussian
    conditioning of independent subtree sums on their total.  This is the best linear unbiased
    estimate (Hay et al. 2010, Theorem 3, for a uniform tree and equal variances).  The last level
    must be measured.

    Examples
    --------
    A total measured as 10 and its two parts as 4 and 5, all with variance 1:

    >>> est = tree_least_squares([[10.0], [4.0, 5.0]], [1.0, 1.0], [[0, 0]])
    >>> [round(float(x), 4) for x in est.values[1]], round(float(est.values[0][0]), 4)
    ([4.3333, 5.3333], 9.6667)
    """
    ys = _levels(measured, "measured")
    sizes = [y.shape[0] for y in ys]
    par = check_tree(parents, sizes)
    var = _variances(variances, sizes)
    if np.isinf(var[-1]).any():
        raise InvalidArgumentError("the last level must be measured (finite variances): the estimate shares it out.")
    L = len(ys)
    z_up: list[np.ndarray] = [np.empty(0)] * L
    v_up: list[np.ndarray] = [np.empty(0)] * L
    z_up[-1], v_up[-1] = ys[-1], var[-1]
    for level in range(L - 2, -1, -1):
        n = sizes[level]
        S = np.bincount(par[level], weights=z_up[level + 1], minlength=n)
        V = np.bincount(par[level], weights=v_up[level + 1], minlength=n)
        z_up[level], v_up[level] = _combine(ys[level], var[level], S, V)
    values, variances_out = [z_up[0]], [v_up[0]]
    for level in range(1, L):
        p = par[level - 1]
        n_up = sizes[level - 1]
        S = np.bincount(p, weights=z_up[level], minlength=n_up)[p]
        V = np.bincount(p, weights=v_up[level], minlength=n_up)[p]
        v = v_up[level]
        share = np.divide(v, V, out=np.zeros_like(v), where=V > 0)
        values.append(z_up[level] + share * (values[-1][p] - S))
        variances_out.append(np.maximum(v * (1.0 - share) + share**2 * variances_out[-1][p], 0.0))
    return TreeEstimate(values=values, variances=variances_out)


def _combine(y: np.ndarray, s: np.ndarray, S: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverse-variance combination of a node's measurement (y, s) with its children's sum (S, V)."""
    y = np.where(np.isinf(s), 0.0, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = 1.0 / s, 1.0 / V
        z = np.where(s == 0, y, np.where(V == 0, S, (y * a + S * b) / (a + b)))
        v = np.where((s == 0) | (V == 0), 0.0, 1.0 / (a + b))
    return z, v


def tree_integers(values: Sequence[Any], parents: Sequence[Any], weights: Sequence[Any] | None = None) -> list[np.ndarray]:
    """Non-negative integers close to ``values`` that add up at every level of the tree.

    Parameters
    ----------
    values : list of array
        Real estimates per level, top first (need not add up, may be negative).
    parents : list of array of int
        As for :func:`tree_least_squares`.
    weights : list of float or array, optional
        How freely each node may move when its parent's integer is shared (its variance, say):
        the projection minimizes ``sum (x - value)^2 / weight`` within each family.  Default 1.

    Returns
    -------
    list of ndarray of int64
        One array per level; every parent equals the sum of its children exactly.

    Notes
    -----
    The top level is clipped at 0 and rounded half up.  Then, family by family, the children's
    values are projected onto ``{x >= 0, sum x = parent}`` (``x_i = max(value_i - theta w_i, 0)``
    with the one ``theta`` that meets the sum: an exact sort of the breakpoints ``value_i / w_i``)
    and rounded by largest remainders within the family, so each child is the floor or the
    ceiling of its projection and the family keeps its parent's total.

    Examples
    --------
    >>> [a.tolist() for a in tree_integers([[9.6667], [4.3333, 5.3333]], [[0, 0]])]
    [[10], [5, 5]]
    >>> [a.tolist() for a in tree_integers([[3.0], [-1.0, 2.0, 2.5]], [[0, 0, 0]])]
    [[3], [0, 1, 2]]
    """
    xs = _levels(values, "values")
    sizes = [x.shape[0] for x in xs]
    par = check_tree(parents, sizes)
    if np.isinf(np.concatenate(xs)).any():
        raise DataError("values must be finite.")
    w = _variances([1.0] * len(xs) if weights is None else weights, sizes)
    top = np.floor(np.maximum(xs[0], 0.0) + 0.5).astype(np.int64)
    out = [top]
    for level in range(1, len(xs)):
        p = par[level - 1]
        wl = np.where(np.isinf(w[level]) | (w[level] <= 0), 1.0, w[level])
        proj = _project_families(xs[level], wl, p, out[-1])
        out.append(_round_families(proj, p, out[-1]))
    return out


def _family_order(p: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions sorted by family then by descending key, each family's start, and the rank within it."""
    order = np.lexsort((-key, p))
    ps = p[order]
    start = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    rank = np.arange(order.size) - np.repeat(start, np.diff(np.r_[start, order.size]))
    return order, start, rank


def _project_families(x: np.ndarray, w: np.ndarray, p: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Weighted Euclidean projection of each family onto ``{x >= 0, sum x = its parent's total}``."""
    if x.size == 0:
        return x
    order, start, rank = _family_order(p, x / w)
    xs, ws, ps = x[order], w[order], p[order]
    T = totals[ps].astype(np.float64)
    cx = _cumsum_within(xs, start)
    cw = _cumsum_within(ws, start)
    theta = (cx - T) / cw
    # the active set is the longest prefix whose last breakpoint lies above its theta
    ok = xs / ws > theta
    ok[start] = True  # a family always keeps at least its largest member active
    last = np.maximum.reduceat(np.where(ok, rank, 0), start)
    fam = np.repeat(np.arange(start.size), np.diff(np.r_[start, order.size]))
    th = theta[start + last][fam]
    proj_sorted = np.maximum(xs - th * ws, 0.0)
    proj_sorted[T == 0] = 0.0
    out = np.empty_like(x)
    out[order] = proj_sorted
    return out


def _cumsum_within(a: np.ndarray, start: np.ndarray) -> np.ndarray:
    c = np.cumsum(a)
    before = np.r_[0.0, c[start[1:] - 1]]
    return c - np.repeat(before, np.diff(np.r_[start, a.size]))


def _round_families(x: np.ndarray, p: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Floors plus one for the largest fractional parts of each family, to meet its parent's total."""
    if x.size == 0:
        return x.astype(np.int64)
    fl = np.floor(x)
    out = fl.astype(np.int64)
    missing = totals - np.bincount(p, weights=fl, minlength=totals.shape[0]).astype(np.int64)
    order, _, rank = _family_order(p, x - fl)
    n_family = np.bincount(p, minlength=totals.shape[0])
    if (missing < 0).any() or (missing > n_family).any():  # only after gross floating-point error
        raise AssertionError("projection did not meet the parent's total")
    add = rank < missing[p[order]]
    out[order[add]] += 1
    return out
