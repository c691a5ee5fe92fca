"""Secondary cell suppression by Gaussian elimination over the published-cell columns of X.

A suppressed (primary) cell p is disclosed when its column x_p of X (inner x published cells) is a
linear combination of the columns of the published cells: an attacker then computes its value
exactly from what is published.  The candidates for publication are taken one by one in a fixed
priority order; each is published unless publishing it would make some primary column fall in the
span of the published ones, in which case it is suppressed (secondary).  This is the greedy rule of
Langsrud (2024, GaussSuppression): deterministic for a given candidate order, and over the whole
publication at once (all crossings and hierarchy levels, so linked tables are protected together).

Two computations give the same decisions (only the arithmetic differs; tests compare them with
exact rational elimination).  By default the span is kept as sparse pivot vectors on X itself
(:mod:`~cellsafe.mechanisms._gauss_sparse`: exact pattern, cost growing with the rows a candidate
shares with the span, seconds on a 10^4-leaf hierarchy).  ``method="dense"`` is the projection
below, whose cost grows with the square of the span (hours and 9 GB on that hierarchy):

1. *A smaller matrix with the same column dependencies.*  Everything the rule asks is whether some
   column lies in the span of others, which depends only on the linear relations among the columns
   of X.  When X has more inner cells (rows) than published cells, it is replaced by ``Y = S X``
   with S a fixed sparse random matrix of ``n_published`` rows (four Gaussian entries per inner cell,
   seed fixed, so the pattern is the same on every run).  A linear map never breaks a relation, and
   a generic one of at least rank(X) rows creates none, so Y has the relations of X; its size is
   ``n_published`` squared whatever the number of inner cells (4,009 x 4,009 instead of 352,757 x
   4,009 for all 2-way margins of six variables).
2. *Orthogonal projection instead of pivoting.*  The published span is kept as an orthonormal basis;
   a candidate is projected off it (classical Gram-Schmidt applied twice, in blocks of candidates
   so that the work is matrix-matrix products), and its residual is its new direction.  There is no
   pivot choice and so no fill-in.
3. *Primary cells only where touched.*  The residuals of the primary columns are kept; a candidate
   with new direction u exposes primary p exactly when p's residual is a multiple of u, i.e. when
   ``|r_p - (u . r_p) u|`` vanishes, and only primaries with ``u . r_p != 0`` are looked at.

Tolerance: a residual counts as zero when its norm is at most ``tol`` (1e-9) times the norm of the
column it came from.  Rounding in the double projection leaves about 1e-14 of a column's norm on a
column that is in the span; a column that is not has, for the 0/1 matrices of publications, a
residual many orders of magnitude above 1e-9 (tests compare the patterns with exact rational
elimination).  The final pattern can be checked independently by
:func:`cellsafe.metrics.audit_suppression`.

References: Langsrud, Ø. (2024). Secondary cell suppression by Gaussian elimination: an algorithm
suitable for handling issues with zeros and singletons. Privacy in Statistical Databases, LNCS 14915.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .._work import check, projected
from ._gauss_sparse import sparse_gauss_secondary, sparse_in_span

__all__ = ["gauss_secondary", "candidate_order", "column_relations", "in_published_span"]

#: Relative size below which a residual counts as zero (see the module notes).
TOL = 1e-9
#: Inner cells each sketch entry mixes (entries of S per inner cell).
_SKETCH_NNZ = 4
_SKETCH_SEED = 20240901
_BLOCK = 64


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


def choose_method(X: sp.spmatrix) -> str:
    """The elimination :func:`gauss_secondary` uses by default (both give the same pattern; this is speed only).

    "dense" when the dense matrices are small (at most 2,500 rows of :func:`column_relations`) and
    the columns long (100 or more inner cells each on average: all 2-way margins of six variables),
    where the sparse vectors fill in; else "sparse".  Measured (CPU s, sparse / dense, same pattern):
    2-way margins of six variables at 1e5 records (13,482 x 1,667) 2.4 / 3.6, at 1e6 (45,870 x
    1,912) 12.7 / 5.3; 2,000 leaves by sex (3,975 x 6,098) 0.04 / 22.7; 10^4 leaves (19,862 x
    30,165) 0.35 / hours.
    """
    Xc = sp.csc_matrix(X)
    m, n = Xc.shape
    d = min(m, int(np.count_nonzero(np.diff(Xc.indptr))))
    return "dense" if d <= 2500 and Xc.nnz >= 100 * max(n, 1) else "sparse"


def column_relations(X: sp.spmatrix) -> np.ndarray:
    """A dense matrix with the same linear relations among its columns as X (step 1 of the notes).

    X itself (dense) when it has no more rows than non-empty columns, else ``S X`` with S a fixed
    sparse Gaussian matrix of as many rows as X has non-empty columns (the rank of X is at most
    that: a release listing every cell of its frame has many empty columns, which add nothing).
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    m, n = X.shape
    d = int(np.count_nonzero(np.diff(sp.csc_matrix(X).indptr)))
    if m <= d:
        return X.toarray(order="F")  # written in column order at once (a C-order copy doubled the peak)
    rng = np.random.default_rng(_SKETCH_SEED)
    rows = rng.integers(0, max(d, 1), size=(m, _SKETCH_NNZ))
    vals = rng.standard_normal((m, _SKETCH_NNZ))
    cols = np.repeat(np.arange(m, dtype=np.int64), _SKETCH_NNZ)
    S = sp.csr_matrix((vals.reshape(-1), (rows.reshape(-1), cols)), shape=(max(d, 1), m))
    return (S @ X).toarray(order="F")


def gauss_secondary(
    X: sp.spmatrix,
    primary: np.ndarray,
    order: np.ndarray,
    *,
    forced: np.ndarray | None = None,
    tol: float = TOL,
    method: str = "auto",
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
    tol : float
        Relative size below which a residual counts as zero (see the module notes).
    method : {"auto", "sparse", "dense", "exact"}
        The arithmetic, never the decisions: "sparse" is the exact-pattern sparse elimination of
        :mod:`~cellsafe.mechanisms._gauss_sparse` on X itself, "exact" the same in rational
        arithmetic (slow: for tests), "dense" the projection of the module notes; "auto" is
        :func:`choose_method`.

    Returns
    -------
    secondary : bool array over the published cells
    exposed : bool array
        Primary cells computable from the forced cells alone, or empty (cannot be protected).
    """
    n_cols = X.shape[1]
    primary = np.asarray(primary, dtype=bool)
    secondary = np.zeros(n_cols, dtype=bool)
    exposed = np.zeros(n_cols, dtype=bool)
    forced_cols = np.flatnonzero(forced) if forced is not None else np.zeros(0, dtype=np.int64)
    offered = np.concatenate([forced_cols, np.asarray(order, dtype=np.int64)])
    is_forced = np.zeros(n_cols, dtype=bool)
    is_forced[forced_cols] = True
    # each cell once, primaries never offered
    _, first = np.unique(offered, return_index=True)
    offered = offered[np.sort(first)]
    offered = offered[~primary[offered]]
    prim = np.flatnonzero(primary)
    if prim.size == 0 or offered.size == 0:
        return secondary, exposed
    what = f"secondary suppression of {n_cols:,} published cells ({X.shape[0]:,} inner)"
    fix = "publish fewer cells (fewer crossings or hierarchy levels in the formula)"
    method = choose_method(X) if method == "auto" else method
    if method in ("sparse", "exact"):
        return sparse_gauss_secondary(X, primary, offered, is_forced, exact=method == "exact", what=what, fix=fix)

    # bounded work (cellsafe._work; nothing happens without a limit in force): the dense matrices are judged
    # against the memory there is before they are made, and the elimination by its pace once under way
    rows = min(X.shape[0], int(np.count_nonzero(np.diff(sp.csc_matrix(X).indptr))))
    check(what, 0.0, fix, memory=8.0 * rows * (n_cols + min(rows, offered.size) + prim.size))
    Y = column_relations(X)
    d = Y.shape[0]
    norms = np.sqrt(np.einsum("ij,ij->j", Y, Y))
    # residuals of the primary columns off the published span, brought up to date after each block;
    # a primary is "live" while it is protected
    Rp = np.array(Y[:, prim], order="F")
    p_norm = norms[prim]
    live = p_norm > 0
    exposed[prim[~live]] = True  # an empty column is known to be 0 without publishing anything
    Q = np.empty((min(d, offered.size), d))  # orthonormal basis of the published span, by rows
    k = 0
    started, work = time.perf_counter(), 0.0
    for start in range(0, offered.size, _BLOCK):
        if not live.any():
            break  # nothing left to protect: every later candidate is published
        cols = offered[start : start + _BLOCK]
        B = np.array(Y[:, cols], order="F")
        if k:
            Qk = Q[:k]
            B -= Qk.T @ (Qk @ B)
            # a second projection where the first cancelled more than two digits: rounding then leaves
            # at most about 1e-14 of the residual along the span (twice is enough, Giraud et al. 2005)
            again = np.flatnonzero(np.einsum("ij,ij->j", B, B) < 1e-4 * norms[cols] ** 2)
            if again.size:
                Ba = B[:, again]
                B[:, again] = Ba - Qk.T @ (Qk @ Ba)
        k0 = k
        # u . r_p for a direction u published in this block: u is orthogonal to the span at the block
        # start, so u . r_p = u . Rp, got from BRp = B^T Rp less the in-block directions' share
        BRp = B.T @ Rp
        C = np.empty((len(cols), Rp.shape[1]))  # u . Rp of the directions published in this block
        r2 = np.einsum("ij,ij->j", Rp, Rp)  # squared residual norms, less what this block takes
        for i, j in enumerate(cols):
            r = B[:, i]
            if k > k0:  # directions published earlier in this block
                Ql = Q[k0:k]
                a = Ql @ r
                r = r - Ql.T @ a
                a2 = Ql @ r
                r = r - Ql.T @ a2
                c = BRp[i] - (a + a2) @ C[: k - k0]
            else:
                c = BRp[i].copy()
            size = float(np.sqrt(r @ r))
            if size <= tol * norms[j]:
                continue  # already computable from the published cells: publishing reveals nothing new
            u = r / size
            c /= size
            # p can only be exposed when its residual is (nearly) parallel to u; those few are checked
            # on the vectors themselves, since 1 - cos^2 cannot be resolved below 1e-16
            near = np.flatnonzero(live & (c * c >= (1.0 - 1e-6) * r2))
            if near.size:
                rp = Rp[:, near]
                if k > k0:
                    Ql = Q[k0:k]
                    for _ in range(2):
                        rp = rp - Ql.T @ (Ql @ rp)
                c[near] = u @ rp
                rest = rp - np.outer(u, c[near])
                left = np.sqrt(np.einsum("ij,ij->j", rest, rest))
                gone = near[left <= tol * p_norm[near]]
                if gone.size:
                    if not is_forced[j]:
                        secondary[j] = True
                        continue
                    exposed[prim[gone]] = True
                    live[gone] = False
            r2 -= c * c
            C[k - k0] = c
            Q[k] = u
            k += 1
            if k == Q.shape[0]:
                break
        if k > k0:
            Qb = Q[k0:k]
            Rp -= Qb.T @ (Qb @ Rp)
        if k == Q.shape[0]:
            break  # the published span is everything: later candidates are in it
        # a candidate costs about 4 d k flops to project off a span of k directions and 6 d p to update the p
        # primaries' residuals; the span has grown by `rate` directions per candidate so far: at that rate until
        # it is full (the loop stops there)
        fixed = 1.5 * prim.size
        work += len(cols) * (k + fixed)
        seen, n_left = start + len(cols), offered.size - start - len(cols)
        rate = k / seen
        to_full = min(float(n_left), (Q.shape[0] - k) / rate) if rate > 0 else float(n_left)
        ahead = to_full * ((k + k + rate * to_full) / 2.0 + fixed)
        projected(what, int(work), int(work + ahead), started, fix)
    return secondary, exposed


def in_published_span(
    X: sp.spmatrix, published: np.ndarray, cells: np.ndarray, *, tol: float = TOL, method: str = "sparse"
) -> np.ndarray:
    """Whether each of ``cells`` is a linear combination of the ``published`` cells (columns of X).

    By default the sparse elimination of :mod:`~cellsafe.mechanisms._gauss_sparse` on X itself
    ("exact": the same in rational arithmetic); ``method="dense"`` builds the span on
    :func:`column_relations` (X or its sketch) by blocked Gram-Schmidt applied twice, a cell being
    in it when its residual is at most ``tol`` times its column's norm.  An empty column is in every
    span.
    """
    cells = np.asarray(cells, dtype=np.int64)
    if method in ("sparse", "exact"):
        return sparse_in_span(X, np.asarray(published, dtype=np.int64), cells, exact=method == "exact")
    Y = column_relations(X)
    norms = np.sqrt(np.einsum("ij,ij->j", Y, Y))
    Q = span_basis(Y, norms, np.asarray(published, dtype=np.int64), tol=tol)
    R = off_span(Q, Y[:, cells])
    return np.sqrt(np.einsum("ij,ij->j", R, R)) <= tol * norms[cells]


def span_basis(
    Y: np.ndarray, norms: np.ndarray, cols: np.ndarray, *, start: np.ndarray | None = None, tol: float = TOL
) -> np.ndarray:
    """An orthonormal basis (rows) of the span of ``start``'s rows and the columns ``cols`` of ``Y``.

    Blocked Gram-Schmidt applied twice; a column adds a direction when its residual is above ``tol``
    times its norm (``norms``).  ``start`` is an orthonormal basis already built (rows), extended.
    """
    d = Y.shape[0]
    k = 0 if start is None else start.shape[0]
    Q = np.empty((min(d, k + cols.size), d))
    if k:
        Q[:k] = start
    for first in range(0, cols.size, _BLOCK):
        block = cols[first : first + _BLOCK]
        B = np.array(Y[:, block], order="F")
        if k:
            for _ in range(2):
                B -= Q[:k].T @ (Q[:k] @ B)
        k0 = k
        for i, j in enumerate(block):
            r = B[:, i]
            if k > k0:  # directions found earlier in this block
                for _ in range(2):
                    r = r - Q[k0:k].T @ (Q[k0:k] @ r)
            size = float(np.sqrt(r @ r))
            if size > tol * norms[j] and k < Q.shape[0]:
                Q[k] = r / size
                k += 1
    return Q[:k]


def off_span(Q: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The residuals of the columns of ``R`` off the span of the orthonormal rows of ``Q`` (projected twice)."""
    R = np.array(R, dtype=np.float64, order="F")
    if Q.shape[0]:
        for _ in range(2):
            R -= Q.T @ (Q @ R)
    return R
