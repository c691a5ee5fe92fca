"""Graphical models fitted to noisy marginals: estimation and sampling on a junction tree.

A differentially private marginal release measures some marginals of the data with noise
(:class:`Measurement`: the attributes, the noisy counts, the noise's standard deviation).  The
estimate is the distribution, scaled to a total, whose marginals best explain every measurement
at once: it minimizes the Gaussian negative log-likelihood

    L(mu) = sum over measurements m of ||mu_m - y_m||^2 / (2 sigma_m^2)

over the marginals mu of distributions, which is the estimator of McKenna, Sheldon and Miklau
(2019, "Graphical-model based estimation and inference for differential privacy").  Its
solution is a graphical model whose cliques are the measured attribute sets (the maximum-entropy
distribution with those marginals), so it is computed on the junction tree of those sets
(:mod:`cellsafe.fitting._junction`) and never on the full table.

:func:`estimate_model` starts from iterative proportional fitting to the noisy marginals (clipped
at zero and scaled to the estimated total), which settles the large cells in a few sweeps, and
then runs entropic mirror descent on L (log-potentials moved against the gradient of L in the
marginals, with an adaptive step checked for sufficient decrease), which weighs each measurement
by its precision, uses the negative noisy counts and makes every marginal consistent.

:class:`GraphicalModel` gives marginals of any attribute set and synthetic records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._random import RNGLike, as_generator
from .._results import Result
from ..exceptions import DataError, InvalidArgumentError
from ._beliefs import CellMap, Calibrator, MarginalOracle, expand_shape, sum_to
from ._junction import JunctionTree, junction_tree, model_size

__all__ = ["Measurement", "GraphicalModel", "ModelFit", "estimate_model", "minimum_variance_total", "model_size", "JunctionTree", "junction_tree"]


@dataclass(frozen=True)
class Measurement:
    """A noisy marginal: ``values`` = the counts of ``attrs`` plus noise of standard deviation ``sigma``.

    Parameters
    ----------
    attrs : tuple of int
        Sorted attribute indices of the marginal.
    values : ndarray
        Noisy counts, one axis per attribute (in ``attrs`` order).
    sigma : float or ndarray
        Standard deviation of the noise of every cell (> 0), or one per cell (a merged cell of k
        measured cells has sqrt(k) times the noise of each).
    """

    attrs: tuple[int, ...]
    values: np.ndarray = field(repr=False)
    sigma: Any

    def __post_init__(self) -> None:
        attrs = tuple(int(a) for a in self.attrs)
        if list(attrs) != sorted(set(attrs)):
            raise InvalidArgumentError(f"a Measurement's attrs must be sorted and distinct. Got {self.attrs!r}.")
        values = np.asarray(self.values, dtype=np.float64)
        sigma = np.asarray(self.sigma, dtype=np.float64)
        if sigma.ndim and sigma.shape != values.shape:
            raise InvalidArgumentError(f"a Measurement's sigma must be one number or one per cell ({values.shape}).")
        if not (np.all(sigma > 0) and np.all(np.isfinite(sigma))):
            raise InvalidArgumentError(f"a Measurement's sigma must be positive and finite. Got {self.sigma!r}.")
        object.__setattr__(self, "attrs", attrs)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "sigma", float(sigma) if sigma.ndim == 0 else sigma)

    @property
    def variance(self) -> np.ndarray:
        """The noise variance of each cell."""
        return np.broadcast_to(np.square(self.sigma), self.values.shape)


def minimum_variance_total(measurements: Sequence[Measurement]) -> float:
    """The total estimated from every measurement's sum, weighted by the inverse of its variance."""
    w = np.array([1.0 / float(m.variance.sum()) for m in measurements])
    s = np.array([float(m.values.sum()) for m in measurements])
    return float(max((w * s).sum() / w.sum(), 1.0))


class GraphicalModel:
    """A distribution on a junction tree, scaled to ``total`` records.

    Parameters
    ----------
    sizes : sequence of int
        Categories of each attribute.
    tree : JunctionTree
    theta : sequence of ndarray
        Log-potentials, one table per clique of the tree.
    total : float
        The number of records the model stands for.
    """

    def __init__(self, sizes: Sequence[int], tree: JunctionTree, theta: Sequence[np.ndarray], total: float) -> None:
        self.sizes = tuple(int(s) for s in sizes)
        self.tree = tree
        self.theta = tuple(np.asarray(t, dtype=np.float64) for t in theta)
        self.total = float(total)
        self._beliefs, self.log_z = Calibrator(tree).calibrate(self.theta)
        self._oracle = MarginalOracle(tree, self._beliefs)

    @property
    def cliques(self) -> tuple[tuple[int, ...], ...]:
        return self.tree.cliques

    def probabilities(self, attrs: Sequence[int]) -> np.ndarray:
        """The marginal distribution of ``attrs`` (axes in the order given)."""
        attrs = tuple(int(a) for a in attrs)
        order = tuple(sorted(attrs))
        p = self._oracle.marginal(order)
        if order != attrs:
            p = np.transpose(p, [order.index(a) for a in attrs])
        return p

    def marginal(self, attrs: Sequence[int]) -> np.ndarray:
        """Expected counts of the marginal of ``attrs`` (probabilities times ``total``)."""
        return self.total * self.probabilities(attrs)

    def sample_records(self, n: int | None = None, rng: RNGLike = None, method: str = "round") -> np.ndarray:
        """Synthetic records as codes, shape (n, d), drawn clique by clique down the tree.

        Parameters
        ----------
        n : int, optional
            Number of records (default: ``total`` rounded).
        rng : None, int, SeedSequence, Generator or "secure"
        method : {"round", "sample"}
            "sample" draws every record independently from the model.  "round" gives each
            combination of the root clique, and each value of a clique given its separator, its
            expected number of records rounded down, and places the remainders by systematic
            sampling with inclusion probabilities equal to the fractional parts: every marginal
            of a clique is then within one record per cell of its expectation, and the draw is
            still unbiased.

        Returns
        -------
        ndarray of int64
        """
        if method not in ("round", "sample"):
            raise InvalidArgumentError(f"method must be 'round' or 'sample'. Got {method!r}.")
        n = int(round(self.total)) if n is None else int(n)
        if n < 0:
            raise InvalidArgumentError(f"the number of records must be >= 0. Got {n}.")
        gen = as_generator(rng)
        tree = self.tree
        out = np.zeros((n, len(self.sizes)), dtype=np.int64)
        for i, (cl, p, sep) in enumerate(zip(tree.cliques, tree.parent, tree.separators)):
            b = self._beliefs[i]
            new = tuple(a for a in cl if a not in set(sep))
            if not new:
                continue
            # the conditional table P(new | sep), rows = separator cells
            order = tuple(sep) + new
            table = np.transpose(b, [cl.index(a) for a in order])
            n_sep = math.prod(self.sizes[a] for a in sep) if sep else 1
            n_new = math.prod(self.sizes[a] for a in new)
            table = table.reshape(n_sep, n_new)
            row_sum = table.sum(axis=1, keepdims=True)
            with np.errstate(divide="ignore", invalid="ignore"):
                cond = np.where(row_sum > 0, table / row_sum, 1.0 / n_new)
            key = np.ravel_multi_index(tuple(out[:, a] for a in sep), [self.sizes[a] for a in sep]) if sep else np.zeros(n, np.int64)
            codes = _draw_conditional(cond, key, gen, method)
            out[:, list(new)] = np.stack(np.unravel_index(codes, [self.sizes[a] for a in new]), axis=1)
        if method == "round":
            out = out[_permutation(n, gen)]
        return out


def _permutation(n: int, gen: Any) -> np.ndarray:
    """A uniform random permutation from random 63-bit keys (works with the secure generator)."""
    keys = gen.integers(0, 2**63 - 1, size=n, dtype=np.int64)
    return np.argsort(keys, kind="stable")


def _draw_conditional(cond: np.ndarray, key: np.ndarray, gen: Any, method: str) -> np.ndarray:
    """One code per record from row ``key`` of the conditional table ``cond`` (rows sum to 1)."""
    n_rows, n_new = cond.shape
    n = key.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if method == "sample":
        cdf = np.cumsum(cond, axis=1)
        cdf[:, -1] = 1.0
        flat = (cdf + np.arange(n_rows)[:, None]).ravel()
        u = gen.random(n)
        pos = np.searchsorted(flat, key + u, side="right")
        return np.minimum(pos - key * n_new, n_new - 1)
    counts = np.bincount(key, minlength=n_rows)
    expected = cond * counts[:, None]
    base = np.floor(expected)
    frac = expected - base
    extra = counts - base.sum(axis=1).astype(np.int64)
    # systematic sampling of `extra` cells per row with inclusion probabilities frac
    c = np.cumsum(frac, axis=1)
    c *= np.where(c[:, -1] > 0, extra / np.where(c[:, -1] > 0, c[:, -1], 1.0), 0.0)[:, None]
    u = gen.random(n_rows)[:, None]
    hits = np.floor(c - u + 1.0)
    hits = np.clip(hits, 0, extra[:, None])
    picked = np.diff(np.concatenate([np.zeros((n_rows, 1)), hits], axis=1), axis=1)
    alloc = (base + picked).astype(np.int64)
    # records of each row, in row order, receive the row's codes in random order
    values = np.repeat(np.tile(np.arange(n_new), n_rows), alloc.ravel())
    rows = np.repeat(np.arange(n_rows), alloc.sum(axis=1))
    shuffle = np.lexsort((gen.random(values.size), rows))
    values = values[shuffle]
    order = np.argsort(key, kind="stable")
    out = np.empty(n, dtype=np.int64)
    out[order] = values
    return out


@dataclass(frozen=True)
class ModelFit(Result):
    """The result of :func:`estimate_model`.

    Attributes
    ----------
    model : GraphicalModel
    loss : float
        The final value of L (sum of squared residuals over twice the variances).
    n_iter : int
        Mirror-descent iterations run.
    converged : bool
        True when the relative decrease of L over the last iterations fell below the tolerance.
    """

    model: GraphicalModel
    loss: float
    n_iter: int
    converged: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "cliques": [list(c) for c in self.model.cliques],
            "model_cells": int(self.model.tree.n_cells),
            "total": self.model.total,
            "loss": self.loss,
            "n_iter": int(self.n_iter),
            "converged": bool(self.converged),
        }


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """sum(a * b) without BLAS threads (which cost more than they save on these sizes); small vectors take
    np.dot, whose call costs less than einsum's, and which stays on one thread below a few thousand values."""
    if a.size < 2048:
        return float(np.dot(a.ravel(), b.ravel()))
    return float(np.einsum("i,i->", a.ravel(), b.ravel()))


class _Problem:
    """Measurements assigned to the cliques of a junction tree, with the loss and its gradient."""

    def __init__(self, tree: JunctionTree, measurements: Sequence[Measurement], total: float) -> None:
        self.tree = tree
        self.total = total
        self.calibrator = Calibrator(tree)
        self.items = []
        for m in measurements:
            k = tree.clique_of(m.attrs)
            if k < 0:
                raise AssertionError(f"no clique holds {m.attrs}")
            shape = tuple(tree.sizes[a] for a in m.attrs)
            if m.values.shape != shape:
                raise DataError(f"a measurement of attributes {m.attrs} has shape {m.values.shape}, not {shape}.")
            self.items.append((k, m, expand_shape(tree.sizes, m.attrs, tree.cliques[k]), 1.0 / m.variance))
        # largest marginals first, so that smaller ones are summed from them rather than from the clique
        self.items.sort(key=lambda it: (it[0], -it[1].values.size))
        self.order = self._plan()
        # the items summed from their clique, with the map of its cells onto them (every iteration uses it)
        self.maps = {i: CellMap(tree.sizes, tree.cliques[self.items[i][0]], self.items[i][1].attrs)
                     for i, src in self.order if src < 0}

    def marginals(self, theta: Sequence[np.ndarray]) -> list[np.ndarray]:
        beliefs, _ = self.calibrator.calibrate(theta)
        return [self.total * b for b in beliefs]

    def _plan(self) -> list[tuple[int, int]]:
        """For each item, where its marginal is summed from: -1 for its clique, else an earlier item (a superset)."""
        plan = []
        cl = self.tree.cliques
        done: list[tuple[int, tuple[int, ...], int]] = []  # (clique, attrs, item)
        for i, (k, m, _, _) in enumerate(self.items):
            best, best_size = -1, math.prod(self.tree.sizes[a] for a in cl[k])
            for kk, attrs, j in done:
                if kk == k and set(m.attrs) <= set(attrs):
                    size = math.prod(self.tree.sizes[a] for a in attrs)
                    if size < best_size:
                        best, best_size = j, size
            plan.append((i, best))
            done.append((k, m.attrs, i))
        return plan

    def loss_grad(self, mu: Sequence[np.ndarray]) -> tuple[float, list[np.ndarray]]:
        """L = sum of w (margin - y)^2 / 2 over the measurements, and its gradient on every clique's marginal.

        A measurement summed from a larger one's margin passes its gradient back through that one (on
        the small tables), so each clique table is summed and added to once per measurement read from it.
        """
        grad = [np.zeros_like(x) for x in mu]
        loss = 0.0
        items = self.items
        margins: dict[int, np.ndarray] = {}
        wrs: dict[int, np.ndarray] = {}
        for i, src in self.order:
            k, m, shape, w = items[i]
            if src < 0:
                margins[i] = self.maps[i].sum(mu[k])
            else:
                margins[i] = sum_to(margins[src], items[src][1].attrs, m.attrs)
            r = margins[i] - m.values
            wr = w * r
            loss += 0.5 * _dot(wr, r)
            wrs[i] = wr
        for i, src in reversed(self.order):  # a measurement comes after the one it is summed from
            if src >= 0:
                wrs[src] = wrs[src] + wrs[i].reshape(expand_shape(self.tree.sizes, items[i][1].attrs, items[src][1].attrs))
            else:
                grad[items[i][0]] += self.maps[i].spread(wrs[i])
        return loss, grad


def _ipf_start(problem: _Problem, sweeps: int) -> list[np.ndarray]:
    """Log-potentials from IPF to the measurements clipped at 0 and scaled to the total."""
    tree = problem.tree
    theta = [np.zeros(math.prod(tree.sizes[a] for a in c)).reshape([tree.sizes[a] for a in c]) for c in tree.cliques]
    total = problem.total
    targets = []
    for k, m, shape, w in problem.items:
        t = np.maximum(m.values, 0.0)
        s = t.sum()
        t = t * (total / s) if s > 0 else np.full(t.shape, total / t.size)
        targets.append(np.log(np.maximum(t, 1e-9 * total / t.size)))
    for _ in range(sweeps):
        for (k, m, shape, w), log_t in zip(problem.items, targets):
            mu = problem.marginals(theta)
            cur = sum_to(mu[k], tree.cliques[k], m.attrs)
            theta[k] = theta[k] + (log_t - np.log(np.maximum(cur, 1e-300))).reshape(shape)
    return theta


def estimate_model(
    sizes: Sequence[int],
    measurements: Sequence[Measurement],
    *,
    total: float | None = None,
    cliques: Sequence[Sequence[int]] = (),
    start: GraphicalModel | None = None,
    ipf_sweeps: int = 5,
    max_iter: int = 500,
    tol: float = 1e-6,
) -> ModelFit:
    """The graphical model that best explains noisy marginals (Gaussian likelihood, on marginals only).

    Parameters
    ----------
    sizes : sequence of int
        Categories of each attribute ``0 .. d-1``.
    measurements : sequence of Measurement
    total : float, optional
        The model's number of records; default :func:`minimum_variance_total` of the measurements.
    cliques : sequence of attribute sets, optional
        Further sets the model must hold (besides the measured ones).
    start : GraphicalModel, optional
        Warm start: its potentials are carried over to the new tree (each of its cliques lies in
        a clique of the new tree when the measured sets only grew); IPF is then skipped.
    ipf_sweeps : int
        Sweeps of IPF to the clipped measurements before mirror descent (0: start uniform).
    max_iter : int
        Mirror-descent iterations at most.
    tol : float
        Stop when L decreased by less than ``tol`` times L over the last 10 iterations.

    Returns
    -------
    ModelFit
    """
    if not measurements:
        raise InvalidArgumentError("estimate_model needs at least one measurement.")
    sizes = tuple(int(s) for s in sizes)
    tot = minimum_variance_total(measurements) if total is None else float(total)
    tree = junction_tree(sizes, [m.attrs for m in measurements] + [tuple(sorted(c)) for c in cliques])
    problem = _Problem(tree, measurements, tot)
    if start is not None:
        theta = _carry(start, tree)
    else:
        theta = _ipf_start(problem, ipf_sweeps) if ipf_sweeps > 0 else [
            np.zeros([sizes[a] for a in c]) for c in tree.cliques
        ]
    theta, loss, n_iter, converged = _mirror_descent(problem, theta, max_iter, tol)
    return ModelFit(GraphicalModel(sizes, tree, theta, tot), loss, n_iter, converged)


def _carry(model: GraphicalModel, tree: JunctionTree) -> list[np.ndarray]:
    """The potentials of ``model`` summed into the cliques of ``tree`` that hold them."""
    theta = [np.zeros([tree.sizes[a] for a in c]) for c in tree.cliques]
    for c, t in zip(model.tree.cliques, model.theta):
        k = tree.clique_of(c)
        if k < 0:  # the old clique was split: spread its log-marginal instead (a start only)
            continue
        theta[k] = theta[k] + t.reshape(expand_shape(tree.sizes, c, tree.cliques[k]))
    return theta


def _mirror_descent(
    problem: _Problem, theta: list[np.ndarray], max_iter: int, tol: float
) -> tuple[list[np.ndarray], float, int, bool]:
    mu = problem.marginals(theta)
    loss, grad = problem.loss_grad(mu)
    w_max = max(float(np.max(w)) for *_, w in problem.items)
    step = 1.0 / (w_max * problem.total)
    history = [loss]
    it = 0
    converged = False
    while it < max_iter:
        it += 1
        new_theta = [t - step * g for t, g in zip(theta, grad)]
        new_mu = problem.marginals(new_theta)
        new_loss, new_grad = problem.loss_grad(new_mu)
        decrease = sum(_dot(g, m0 - m1) for g, m0, m1 in zip(grad, mu, new_mu))
        if loss - new_loss >= 0.5 * decrease:
            theta, mu, loss, grad = new_theta, new_mu, new_loss, new_grad
            step *= 1.05
            history.append(loss)
            if len(history) > 10 and history[-11] - loss <= tol * max(loss, 1e-300):
                converged = True
                break
        else:
            step *= 0.5
    return theta, loss, it, converged
