"""An attacker of suppressed tables, written apart from cellsafe's protection and audit (it imports nothing from cellsafe).

It holds what a published file reveals and computes, by linear programs over the inner cells (HiGHS through
``highspy``, one model whose objective changes from cell to cell, so each program starts from the last basis):

- every withheld cell's interval: the least and the largest value of the cell over all non-negative inner cells
  that reproduce the published cells (and, where the file lists only non-empty cells, keep every listed cell at
  least 1; a cell the file does not list is 0);
- the primaries whose upper bound stays within the frequency rule (at most its threshold T: the attacker learns the
  cell is small), and the withheld cells recovered exactly (interval of width 0);
- the derivable sums of primaries within the rule: groups of 2 to ``max_group`` withheld primaries whose sum is the
  same in every solution and at most T.  A group's sum is the same in every solution exactly when its column lies in
  the span of the equations every solution meets: the published cells, the withheld cells recovered exactly and the
  inner cells that are 0 in every solution (found by linear programs maximising the inner cells that may be
  positive).  Candidates are found on the Gram matrices of those columns (the squared distance of a group's column
  from the span, through the pseudo-inverse of the span's Gram matrix) and each is then confirmed by two linear
  programs on the group's sum; only minimal groups are counted (none of their smaller groups is derivable).

Every derivable sum of non-negative cells at most T bounds each of its members by T, so a table with no primary
within the rule has no derivable sum within it either; the sums are reported because they are what an office sees.

Run on its own: ``python benchmarks/suppression_attacker.py RELEASE.csv TABLE.csv --variables a,b --formula F``
is not offered; the benchmark (``bench_suppression_peers.py``) builds the matrices and calls :func:`attack`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import scipy.sparse as sp

__all__ = ["Attack", "attack"]

_INF = np.inf


@dataclass
class Attack:
    """What the attacker computed (positions are published cells)."""

    withheld: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    exact: np.ndarray
    primaries_within: np.ndarray
    sums: list[tuple[int, ...]] = field(default_factory=list)
    forced_zero_inner: int = 0
    n_lp: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        return (
            f"{self.withheld.size} withheld, {self.exact.size} recovered exactly, {self.primaries_within.size} "
            f"primaries within the rule, {len(self.sums)} derivable sums of primaries within the rule "
            f"({self.n_lp} linear programs, {self.seconds:.1f} s)"
        )


class _Model:
    """The attacker's linear program: inner cells y >= 0, one row per published or listed withheld cell."""

    def __init__(self, X: sp.csc_matrix, released: np.ndarray, listed_lower: float) -> None:
        import highspy

        self.X = X
        n_inner, n_pub = X.shape
        shown = ~np.isnan(released)
        rows = np.flatnonzero(shown | (listed_lower > 0))
        lo = np.where(shown[rows], released[rows], listed_lower)
        hi = np.where(shown[rows], released[rows], _INF)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        # primal simplex from the last basis, no presolve (it would drop the basis): a new objective then takes a
        # few iterations instead of thousands (0.01 s against 1-2 s per program on 2,678 inner cells)
        h.setOptionValue("presolve", "off")
        h.setOptionValue("simplex_strategy", 4)
        inf = h.getInfinity()
        h.addCols(n_inner, np.zeros(n_inner), np.zeros(n_inner), np.full(n_inner, inf), 0, np.zeros(n_inner + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        A = X[:, rows].T.tocsr()
        h.addRows(rows.size, lo, np.where(np.isinf(hi), inf, hi), A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data.astype(np.float64))
        self.h = h
        self.inf = inf
        self.n_inner = n_inner
        self.cost_idx = np.zeros(0, dtype=np.int32)
        self.n_lp = 0

    def extreme(self, c_idx: np.ndarray, c_val: np.ndarray, sense: float) -> float:
        """min (sense = 1) or max (sense = -1) of sum c_val * y[c_idx]; inf when unbounded."""
        h = self.h
        if self.cost_idx.size:
            h.changeColsCost(self.cost_idx.size, self.cost_idx, np.zeros(self.cost_idx.size))
        idx = c_idx.astype(np.int32)
        h.changeColsCost(idx.size, idx, sense * c_val.astype(np.float64))
        self.cost_idx = idx
        h.run()
        self.n_lp += 1
        status = h.modelStatusToString(h.getModelStatus())
        if status not in ("Optimal", "Unbounded", "Primal unbounded"):  # a stalled warm start: solve afresh
            h.clearSolver()
            h.setOptionValue("presolve", "on")
            h.setOptionValue("simplex_strategy", 1)
            h.run()
            h.setOptionValue("presolve", "off")
            h.setOptionValue("simplex_strategy", 4)
            status = h.modelStatusToString(h.getModelStatus())
        if status == "Optimal":
            return sense * h.getInfo().objective_function_value
        if status in ("Unbounded", "Primal unbounded"):
            return _INF
        raise RuntimeError(f"the attacker's linear program ended with status {status!r}: is the release additive?")

    def interval(self, col: np.ndarray) -> tuple[float, float]:
        """The least and largest value of the sum of the given published cells' columns."""
        v = np.asarray(self.X[:, col].sum(axis=1)).reshape(-1)
        nz = np.flatnonzero(v)
        return self.extreme(nz, v[nz], 1.0), self.extreme(nz, v[nz], -1.0)

    def forced_zero(self) -> np.ndarray:
        """Inner cells that are 0 in every solution: maximise min(y_i, 1) over the cells not yet seen positive."""
        h = self.h
        n = self.n_inner
        inf = self.inf
        # z_i <= y_i, 0 <= z_i <= 1, appended to a copy of the model
        import highspy

        g = highspy.Highs()
        g.setOptionValue("output_flag", False)
        g.passModel(h.getLp())
        g.changeColsCost(n, np.arange(n, dtype=np.int32), np.zeros(n))
        g.addCols(n, -np.ones(n), np.zeros(n), np.ones(n), 0, np.zeros(n + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        starts = (2 * np.arange(n)).astype(np.int32)
        idx = np.column_stack([np.arange(n), n + np.arange(n)]).reshape(-1).astype(np.int32)
        val = np.tile([1.0, -1.0], n)
        g.addRows(n, np.zeros(n), np.full(n, inf), 2 * n, starts, idx, val)
        open_ = np.ones(n, dtype=bool)
        while True:
            g.run()
            self.n_lp += 1
            if g.modelStatusToString(g.getModelStatus()) != "Optimal":
                raise RuntimeError("the attacker's program for the cells that may be positive did not solve")
            y = np.asarray(g.getSolution().col_value[:n])
            seen = open_ & (y > 1e-7)
            if not seen.any():
                return np.flatnonzero(open_)
            open_ &= ~seen
            hit = np.flatnonzero(seen).astype(np.int32)
            g.changeColsCost(hit.size, n + hit, np.zeros(hit.size))
            if not open_.any():
                return np.zeros(0, dtype=np.int64)


def attack(
    X: sp.spmatrix,
    released: np.ndarray,
    original: np.ndarray,
    primary: np.ndarray,
    *,
    threshold: float,
    listed_lower: float = 0.0,
    max_group: int = 3,
    tol: float = 1e-6,
) -> Attack:
    """Attack one release.

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells (0/1)
        The attacker's inner cells: every combination the file leaves possible (or, for a stronger attacker, only the
        non-empty ones).
    released : array over the published cells
        The published values, NaN where withheld.  A cell the file does not list is passed as a published 0.
    original : array over the published cells
        The true values (to tell which groups of primaries sum to at most T).
    primary : bool array
        The primaries (the rule's sensitive cells; a withheld cell that is not primary is a secondary).
    threshold : float
        T of the frequency rule (counts 1..T, and 0 where zeros are protected, are sensitive).
    listed_lower : float
        1 where the file lists only non-empty cells (each listed withheld cell is then at least 1), else 0.
    """
    t0 = time.perf_counter()
    X = sp.csc_matrix(X, dtype=np.float64)
    released = np.asarray(released, dtype=np.float64)
    original = np.asarray(original, dtype=np.float64)
    primary = np.asarray(primary, dtype=bool)
    withheld = np.flatnonzero(np.isnan(released))
    model = _Model(X, released, listed_lower)
    lower = np.empty(withheld.size)
    upper = np.empty(withheld.size)
    for i, j in enumerate(withheld):
        lower[i], upper[i] = model.interval(np.array([j]))
    scale = np.maximum(1.0, np.abs(original[withheld]))
    exact_mask = upper - lower <= tol * scale
    exact = withheld[exact_mask]
    within = withheld[primary[withheld] & (upper <= threshold + tol * scale)]
    zero_inner = model.forced_zero()
    sums = _derivable_sums(X, released, original, primary, withheld, exact, zero_inner, model, threshold, max_group, tol)
    return Attack(withheld, lower, upper, exact, within, sums, int(zero_inner.size), model.n_lp, time.perf_counter() - t0)


def _derivable_sums(
    X: sp.csc_matrix,
    released: np.ndarray,
    original: np.ndarray,
    primary: np.ndarray,
    withheld: np.ndarray,
    exact: np.ndarray,
    zero_inner: np.ndarray,
    model: _Model,
    threshold: float,
    max_group: int,
    tol: float,
) -> list[tuple[int, ...]]:
    """Minimal groups of 2..max_group withheld primaries (none recovered exactly) whose sum is derivable and <= T."""
    members = np.setdiff1d(withheld[primary[withheld]], exact)
    if members.size < 2:
        return []
    keep_rows = np.setdiff1d(np.arange(X.shape[0]), zero_inner)
    Xr = X[keep_rows]
    span = np.union1d(np.flatnonzero(~np.isnan(released)), exact)
    A = Xr[:, span]
    W = Xr[:, members]
    G = (A.T @ A).toarray()
    GAW = (A.T @ W).toarray()
    GWW = (W.T @ W).toarray()
    lam, V = np.linalg.eigh(G)
    keep = lam > 1e-10 * max(1.0, float(lam.max(initial=0.0)))
    C = V[:, keep] @ ((V[:, keep].T @ GAW) / lam[keep][:, None])
    K = GWW - GAW.T @ C  # Gram matrix of the members' residuals off the span
    norm = np.diag(GWW)
    vals = original[members]
    found: list[tuple[int, ...]] = []
    derivable: set[frozenset[int]] = set()
    for idx in _candidates(K, norm, vals, threshold, max_group):
        if any(frozenset(sub) in derivable for k in range(2, len(idx)) for sub in combinations(idx, k)):
            continue
        cells = members[list(idx)]
        lo, hi = model.interval(cells)
        if hi - lo <= tol * max(1.0, abs(float(original[cells].sum()))):
            derivable.add(frozenset(idx))
            found.append(tuple(int(c) for c in cells))
    return found


def _candidates(K: np.ndarray, norm: np.ndarray, vals: np.ndarray, threshold: float, max_group: int, cutoff: float = 1e-6):
    """Groups (sorted index tuples, smallest groups first) whose values sum to at most T and whose residual column is
    (numerically) 0: ``1' K_S 1 <= cutoff * sum of the members' squared norms``."""
    n = vals.size
    d = np.diag(K)
    P = d[:, None] + d[None, :] + 2 * K  # squared residual of each pair's sum
    pair_ok = (vals[:, None] + vals[None, :] <= threshold + 1e-9) & np.triu(np.ones((n, n), dtype=bool), 1)
    hit = pair_ok & (P <= cutoff * (norm[:, None] + norm[None, :]))
    yield from (tuple(map(int, ij)) for ij in np.argwhere(hit))
    if max_group >= 3:
        for i in range(n):
            if vals[i] * 3 > threshold + 1e-9:
                continue
            # triples i < j < k: |r_i + r_j + r_k|^2 = P_ij + d_k + 2 (K_ik + K_jk)
            R = P[i, :, None] + d[None, :] + 2 * (K[i, None, :] + K)
            ok = (vals[i] + vals[:, None] + vals[None, :] <= threshold + 1e-9)
            ok &= np.triu(np.ones((n, n), dtype=bool), 1)
            ok[: i + 1, :] = False
            ok &= R <= cutoff * (norm[i] + norm[:, None] + norm[None, :])
            yield from ((i, int(j), int(k)) for j, k in np.argwhere(ok))
    for size in range(4, max_group + 1):
        for idx in _groups(vals, threshold, size):
            if float(np.sum(K[np.ix_(idx, idx)])) <= cutoff * float(norm[list(idx)].sum()):
                yield idx


def _groups(vals: np.ndarray, threshold: float, size: int):
    """Index tuples of ``size`` members whose values sum to at most ``threshold`` (members sorted by value first)."""
    order = np.argsort(vals, kind="stable")
    v = vals[order]

    def walk(start: int, left: int, budget: float, chosen: list[int]):
        if left == 0:
            yield tuple(sorted(int(order[c]) for c in chosen))
            return
        for k in range(start, v.size):
            if v[k] * left > budget + 1e-9:
                break  # sorted: every later member is at least as large
            chosen.append(k)
            yield from walk(k + 1, left - 1, budget - v[k], chosen)
            chosen.pop()

    yield from walk(0, size, threshold, [])
