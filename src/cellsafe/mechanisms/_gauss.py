"""Secondary cell suppression by Gaussian elimination on the sparse published-cell matrix X.

A suppressed (primary) cell p is disclosed when its column x_p of X is a linear combination of the
columns of the published cells: an attacker then computes its count exactly from what is published.
The candidates for publication are taken one by one in a fixed priority order; each is published
unless publishing it would make some primary cell's column fall in the span of the published ones,
in which case it is suppressed (secondary).  This is the greedy rule of Langsrud (2024,
GaussSuppression): deterministic for a given candidate order, and over the whole publication at
once (all crossings and hierarchy levels, so linked tables are protected together).

The span of the published columns is kept as an echelon basis of sparse vectors over the inner
cells (each basis vector's pivot is its first non-zero row, below which it is zero), and every
primary column is kept reduced modulo that basis: it is disclosed exactly when its reduced form
vanishes.  A candidate reduced to zero already lies in the span and is published at no cost; one
that is not would add a basis vector v, and it is refused when some reduced primary is a multiple
of v (the only way subtracting v can make it vanish).  Vectors are sorted (row, value) arrays; no
dense matrix of the inner or published cells is formed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["gauss_secondary", "candidate_order"]

_TOL = 1e-9


def candidate_order(X: sp.spmatrix, weight: np.ndarray, *, zeros_first: bool = True) -> np.ndarray:
    """Cells in the order they are offered for publication: large first, zeros first.

    The key is ``(w + 1) + 0.99 t / max(t)`` with ``t = X^T X (w + 1)`` (how much the cell's inner
    cells weigh in the whole publication), decreasing, ties by position: the order GaussSuppression
    documents as its default (``CandidatesDefault``).  Empty cells come first unless
    ``zeros_first`` is False, so that zeros are not chosen as secondary suppressions (suppressing a
    zero protects nothing once counts are known to be non-negative).
    """
    w = np.asarray(weight, dtype=np.float64) + 1.0
    Xc = sp.csc_matrix(X)
    tie = np.abs(np.asarray(Xc.T @ (Xc @ w)).reshape(-1))
    top = tie.max() if tie.size else 1.0
    key = w + 0.99 * tie / (top if top > 0 else 1.0)
    if zeros_first:
        zero = np.asarray(weight) == 0
        key = np.where(zero, key + 0.01 + (key.max() if key.size else 0.0), key)
    return np.argsort(-key, kind="stable")


def _axpy(a_idx: np.ndarray, a_val: np.ndarray, coef: float, b_idx: np.ndarray, b_val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a - coef * b for sorted sparse vectors, dropping entries that cancel."""
    idx = np.concatenate([a_idx, b_idx])
    val = np.concatenate([a_val, -coef * b_val])
    order = np.argsort(idx, kind="stable")
    idx, val = idx[order], val[order]
    start = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    idx, val = idx[start], np.add.reduceat(val, start)
    keep = np.abs(val) > _TOL
    return idx[keep], val[keep]


class _Basis:
    """An echelon basis of sparse vectors: pivot row -> (rows, values), pivot first."""

    def __init__(self, n_rows: int) -> None:
        self.is_pivot = np.zeros(n_rows, dtype=bool)
        self.vectors: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def reduce(self, idx: np.ndarray, val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # Eliminating the smallest pivot row only adds larger rows, so this ends.
        while idx.size:
            hit = self.is_pivot[idx]
            if not hit.any():
                break
            k = int(np.argmax(hit))
            b_idx, b_val = self.vectors[int(idx[k])]
            idx, val = _axpy(idx, val, val[k] / b_val[0], b_idx, b_val)
        return idx, val

    def add(self, idx: np.ndarray, val: np.ndarray) -> None:
        r = int(idx[0])
        self.is_pivot[r] = True
        self.vectors[r] = (idx, val)


def gauss_secondary(
    X: sp.spmatrix, primary: np.ndarray, order: np.ndarray, *, forced: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Secondary suppressions that leave no primary cell linearly computable from the published ones.

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells
    primary : bool array over the published cells
    order : int array
        The non-primary cells in the order they are offered for publication (first = most wanted
        published); see :func:`candidate_order`.
    forced : bool array, optional
        Cells published whatever happens (offered first).

    Returns
    -------
    secondary : bool array over the published cells
    exposed : bool array
        Primary cells computable from the forced cells alone (cannot be protected).
    """
    Xc = sp.csc_matrix(X, dtype=np.float64)
    Xc.sort_indices()
    n_rows, n_cols = Xc.shape
    primary = np.asarray(primary, dtype=bool)
    secondary = np.zeros(n_cols, dtype=bool)
    basis = _Basis(n_rows)

    def column(j: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = Xc.indptr[j], Xc.indptr[j + 1]
        return Xc.indices[lo:hi].astype(np.int64), Xc.data[lo:hi].copy()

    prim = [int(j) for j in np.flatnonzero(primary)]
    reduced: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    exposed = np.zeros(n_cols, dtype=bool)
    for p in prim:
        idx, val = column(p)
        if idx.size == 0:
            exposed[p] = True  # an empty column is known to be 0 without publishing anything
        else:
            reduced[p] = (idx, val)
    # which primaries have each row (rebuilt lazily: rows of a primary only move down as it is reduced)
    forced_cols = np.flatnonzero(forced) if forced is not None else np.zeros(0, dtype=np.int64)
    offered = np.concatenate([forced_cols, np.asarray(order, dtype=np.int64)])
    is_forced = np.zeros(n_cols, dtype=bool)
    is_forced[forced_cols] = True
    for j in offered:
        j = int(j)
        if primary[j] or secondary[j]:
            continue
        idx, val = basis.reduce(*column(j))
        if idx.size == 0:
            continue  # already computable from the published cells: publishing it reveals nothing new
        r = int(idx[0])
        updates = {}
        refused = False
        for p, (p_idx, p_val) in reduced.items():
            k = np.searchsorted(p_idx, r)
            if k >= p_idx.size or p_idx[k] != r:
                continue
            new = _axpy(p_idx, p_val, p_val[k] / val[0], idx, val)
            if new[0].size == 0:
                if is_forced[j]:
                    exposed[p] = True
                    continue
                refused = True
                break
            updates[p] = new
        if refused:
            secondary[j] = True
            continue
        basis.add(idx, val)
        for p in list(reduced):
            if exposed[p]:
                del reduced[p]
        reduced.update(updates)
    return secondary, exposed
