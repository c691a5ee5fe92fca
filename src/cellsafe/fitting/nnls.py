"""Post-processing of published tables: additivity restoration and expected inner frequencies.

:func:`restore_additivity` fits perturbed published values ``z`` by ``X^T y`` in least squares
(maximum likelihood under Gaussian noise, 001 section 3), with the zero-and-refit rule for
non-negativity: published cells fitted below zero are fixed at zero, which fixes every inner cell
they contain at zero, and the rest is refitted, until no fit is negative.  The fitted published
values are unique even though ``y`` is not.  The computation is sparse (LSQR on ``X^T``, or a dense
least-squares solve for small problems).

:func:`expected_inner` turns additive published values into expected inner frequencies by IPF
(001 section 4) over the zero-frequency inner combinations as well, using
:func:`cellsafe.fitting.ipf.ipf`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._results import Result
from .._validation import check_integer, check_real
from ..exceptions import CellsafeWarning, ConvergenceWarning, DataError, InvalidArgumentError
from ..published import Publication
from ..table import CountTable
from .ipf import ipf

__all__ = ["AdditivityResult", "ExpectedInnerResult", "restore_additivity", "expected_inner"]

#: Problems with at most this many matrix entries (inner x published) are solved densely.
_DENSE_LIMIT = 100_000


@dataclass(frozen=True)
class AdditivityResult(Result):
    """The result of :func:`restore_additivity`.

    Attributes
    ----------
    inner : ndarray
        Non-negative inner values ``y`` (one per row of X) with ``X^T y = fitted``; not unique.
    fitted : ndarray
        The additivity-restored published values ``X^T y`` (unique), one per column of X.
    n_iter : int
        Number of least-squares fits (1 when no fit was negative).
    converged : bool
        False when the iteration cap was reached or the sparse solver stopped early.
    n_zeroed : int
        Published cells fixed at zero by the non-negativity rule (including cells observed as 0 once
        the rule is active).
    residual_norm : float
        ``||z - fitted||`` over the observed (non-missing) published cells.
    """

    inner: np.ndarray
    fitted: np.ndarray
    n_iter: int
    converged: bool
    n_zeroed: int = 0
    residual_norm: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """Sizes and convergence (the counts: ``inner`` and ``fitted``)."""
        return {
            "n_inner": int(self.inner.shape[0]),
            "n_published": int(self.fitted.shape[0]),
            "n_iter": int(self.n_iter),
            "converged": bool(self.converged),
            "n_zeroed": int(self.n_zeroed),
            "residual_norm": float(self.residual_norm),
        }

    def __repr__(self) -> str:
        return (
            f"AdditivityResult(n_inner={self.inner.shape[0]}, n_published={self.fitted.shape[0]}, "
            f"n_iter={self.n_iter}, converged={self.converged}, n_zeroed={self.n_zeroed}, "
            f"residual_norm={self.residual_norm:.6g})"
        )


def _lsq(A: sp.csr_matrix, b: np.ndarray, tol: float) -> tuple[np.ndarray, bool]:
    """Minimum-norm least-squares solution of A x = b (A is published x inner)."""
    if A.shape[0] == 0 or A.shape[1] == 0:
        return np.zeros(A.shape[1]), True
    if A.shape[0] * A.shape[1] <= _DENSE_LIMIT:
        x, *_ = np.linalg.lstsq(A.toarray(), b, rcond=None)
        return x, True
    from scipy.sparse.linalg import lsqr  # ~0.15 s to import, needed only for large problems

    out = lsqr(A, b, atol=tol, btol=tol, iter_lim=max(10 * min(A.shape), 1000))
    return out[0], out[1] in (0, 1, 2, 4, 5)


def restore_additivity(X: Any, z: Any, *, tol: float = 1e-10, max_iter: int = 100) -> AdditivityResult:
    """Least-squares additivity restoration with non-negative fits.

    Parameters
    ----------
    X : scipy.sparse matrix or array, shape (n_inner, n_published)
        The 0/1 dummy matrix of a publication (``Publication.X``).
    z : array_like, shape (n_published,)
        The perturbed published values.  NaN marks a suppressed (missing) cell: it is left out of
        the fit and gets the value the fit implies.
    tol : float, default 1e-10
        Fits below ``tol`` count as negative (the lower limit of the rule), and the tolerance of
        the sparse solver.
    max_iter : int, default 100
        Cap on the number of refits.

    Returns
    -------
    AdditivityResult
        ``fitted`` (the restored published values) and ``inner`` (non-negative inner values that
        add up to them).

    Notes
    -----
    First the unconstrained least-squares fit ``min ||z - X^T y||``.  While some fitted published
    value is below ``tol``, those cells are fixed at zero; every published cell then at zero
    (also an observed 0) forces its inner cells to zero, which are dropped with any published cell
    left without inner cells, and the remaining cells are refitted (001 section 3; the rule of
    ``LSfitNonNeg`` in the R package SSBtools).  When the fits are non-negative but the
    minimum-norm inner solution is not, the negative inner cells are dropped as well and the fit
    repeated, so that ``inner >= 0`` holds and ``X^T inner = fitted`` (this second rule leaves the
    fit unchanged whenever a non-negative inner solution exists on the remaining cells).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 1, 0], [1, 0, 1]])          # two inner cells, total + two cells
    >>> res = restore_additivity(X, [10, 4, 7])
    >>> res.fitted.round(4).tolist()
    [10.3333, 3.6667, 6.6667]
    """
    Xs = sp.csr_matrix(X, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64).reshape(-1)
    n_inner, n_pub = Xs.shape
    if z.shape[0] != n_pub:
        raise DataError(f"z must have one value per published cell (columns of X, {n_pub}). Got {z.shape[0]}.")
    if np.any(np.isinf(z)):
        raise DataError("published values must be finite numbers (NaN marks a missing cell).")
    check_real(tol, "tol", "restore_additivity", low=0.0, low_open=True)
    check_integer(max_iter, "max_iter", "restore_additivity", low=1)
    observed = ~np.isnan(z)
    zz = np.where(observed, z, 0.0)
    XT = Xs.T.tocsr()  # published x inner

    rows = np.ones(n_inner, dtype=bool)  # inner cells still free
    forced = np.zeros(n_pub, dtype=bool)  # published cells fixed at zero
    converged = True
    n_iter = 0
    y = np.zeros(n_inner)
    while True:
        n_iter += 1
        if forced.any():
            # once the rule is active, every published zero (forced or observed) forces its inner cells to zero
            zero_pub = forced | (observed & (zz == 0))
            hit = np.asarray(Xs[:, zero_pub].sum(axis=1)).reshape(-1) > 0
            rows &= ~hit
        if rows.any():
            live = np.asarray(XT[:, rows].sum(axis=1)).reshape(-1) > 0
        else:
            live = np.zeros(n_pub, dtype=bool)
        use = live & observed & ~forced
        y = np.zeros(n_inner)
        sol, ok = _lsq(XT[use][:, rows], zz[use], tol)
        converged &= ok
        y[rows] = sol
        fitted = np.asarray(XT @ y).reshape(-1)
        new = (fitted < tol) & ~forced & live
        if new.any() and n_iter < max_iter:
            forced |= new
            continue
        scale = max(1.0, float(np.abs(y).max(initial=0.0)))
        neg_inner = rows & (y < -max(tol, 1e-9) * scale)
        if neg_inner.any() and n_iter < max_iter:
            rows &= ~neg_inner
            continue
        if new.any() or neg_inner.any():
            converged = False
        break
    y = np.where(rows, np.maximum(y, 0.0), 0.0)
    fitted = np.asarray(XT @ y).reshape(-1)
    resid = float(np.sqrt(np.sum((zz[observed] - fitted[observed]) ** 2)))
    if not converged:
        warnings.warn(
            f"additivity restoration stopped after {n_iter} fits without meeting its tolerance; raise max_iter.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return AdditivityResult(
        inner=y, fitted=fitted, n_iter=n_iter, converged=converged, n_zeroed=int(forced.sum()), residual_norm=resid
    )


@dataclass(frozen=True)
class ExpectedInnerResult(Result):
    """The result of :func:`expected_inner`.

    Attributes
    ----------
    fitted : CountTable
        Expected inner frequencies (float counts) on the publication's variables.
    converged : bool
        True when IPF met its tolerance.
    n_iter : int
        IPF cycles.
    max_margin_error : float
        Largest absolute difference between a published value and the same cell of the fitted
        table (over every published cell, not only the generating margins).
    additivity_error : float
        Largest disagreement between the published crossings before fitting (0 when additive).
    """

    fitted: CountTable
    converged: bool
    n_iter: int
    max_margin_error: float
    additivity_error: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The fitted table's size and total, and the convergence (the cells: ``fitted``)."""
        return {
            "n_cells": int(self.fitted.n_cells),
            "total": float(self.fitted.total),
            "converged": bool(self.converged),
            "n_iter": int(self.n_iter),
            "max_margin_error": float(self.max_margin_error),
            "additivity_error": float(self.additivity_error),
        }

    def __repr__(self) -> str:
        return (
            f"ExpectedInnerResult(n_cells={self.fitted.n_cells}, total={float(self.fitted.total):.6g}, "
            f"converged={self.converged}, n_iter={self.n_iter}, max_margin_error={self.max_margin_error:.3g})"
        )


def expected_inner(
    publication: Publication,
    values: Any,
    *,
    structural_zeros: Any = None,
    tol: float = 1e-8,
    max_iter: int = 1000,
    additivity_tol: float = 1e-6,
) -> ExpectedInnerResult:
    """Expected inner frequencies from additive published values, by IPF.

    Parameters
    ----------
    publication : Publication
        The published cells (their crossings are the IPF margins; the grand total is implied).
    values : array_like
        Published values aligned with ``publication``'s cells: additive and non-negative (a small
        count rounded table, or the ``fitted`` values of :func:`restore_additivity`).
    structural_zeros : array of int, optional
        Flat indices of impossible inner cells (kept at zero).
    tol, max_iter : float, int
        Passed to :func:`~cellsafe.fitting.ipf.ipf`.
    additivity_tol : float, default 1e-6
        Published values whose crossings disagree by more than ``additivity_tol * max(1, total)``
        are refused (DataError): restore additivity first.

    Returns
    -------
    ExpectedInnerResult

    Notes
    -----
    The fit starts from 1 in every inner combination, the zero-frequency ones included, so the
    result is the maximum-likelihood fit of the log-linear model whose sufficient statistics are the
    published cells (001 section 4, Tables 7 and 8).
    """
    if not isinstance(publication, Publication):
        raise InvalidArgumentError(f"expected_inner needs a Publication. Got {type(publication).__name__}.")
    vals = np.asarray(values, dtype=np.float64).reshape(-1)
    if vals.shape[0] != publication.n_published:
        raise DataError(
            f"expected {publication.n_published} published values (one per published cell). Got {vals.shape[0]}."
        )
    if not np.all(np.isfinite(vals)):
        raise DataError(
            "some published values are missing (suppressed) or not finite; run restore_additivity first to fill them."
        )
    if np.any(vals < 0):
        raise DataError("published values must be non-negative; run restore_additivity first.")
    err = publication.additivity_error(vals)
    scale = max(1.0, float(np.max(vals)))
    if err > additivity_tol * scale:
        raise DataError(
            f"the published values are not additive: crossings disagree by up to {err:.6g}; restore additivity "
            "first (cellsafe.fitting.restore_additivity) and fit its 'fitted' values."
        )
    variables = publication.variables
    if publication.is_hierarchical:
        y, conv, n_iter = _ipf_on_x(publication, vals, tol, max_iter)
        fitted = CountTable(variables, publication.inner_index, y, structural_zeros)
        margin_err = float(np.max(np.abs(publication.aggregate(y) - vals)))
        return ExpectedInnerResult(fitted, conv, n_iter, margin_err, err)
    gen = publication.generating_crossings()
    full = CountTable(variables, np.zeros(0, dtype=np.int64), np.zeros(0), structural_zeros)
    n_open = full.n_cells - full.n_structural_zeros
    if not gen:
        total = float(vals[publication.crossing == 0].sum())
        start_idx = publication.inner_index
        fitted = full.with_counts(start_idx, np.full(start_idx.shape[0], total / max(1, start_idx.shape[0])))
        return ExpectedInnerResult(fitted, True, 0, 0.0, err)
    targets = {c: publication.margin_table(vals, c) for c in gen}
    start = None
    if publication.n_inner < n_open:
        start = full.with_counts(publication.inner_index, np.ones(publication.n_inner))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CellsafeWarning)
        res = ipf(full, [list(c) for c in gen], targets=targets, start=start, tol=tol, max_iter=max_iter)
    if not res.converged:
        warnings.warn(
            f"IPF for the expected inner frequencies did not converge in {max_iter} cycles "
            f"(largest margin deviation {res.max_deviation:.3g}).",
            ConvergenceWarning,
            stacklevel=2,
        )
    agg = publication.aggregate(np.asarray(res.fitted.lookup(publication.inner_index), dtype=np.float64))
    margin_err = float(np.max(np.abs(agg - vals)))
    return ExpectedInnerResult(res.fitted, res.converged, res.n_iter, margin_err, err)


def _ipf_on_x(publication: Publication, vals: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, bool, int]:
    """IPF over the columns of X, crossing by crossing, from 1 in every inner cell of the publication.

    The same Deming-Stephan cycles as :func:`~cellsafe.fitting.ipf.ipf`, with the published cells
    of each crossing as one margin (hierarchy levels included).  Where an inner cell counts in
    several cells of one crossing (overlapping aggregates) the crossing's cells are fitted one
    after the other, which is still a cyclic projection onto each constraint.
    """
    Xc = publication.X.tocsc()
    y = np.ones(publication.n_inner)
    blocks = []
    for k in range(len(publication.crossings)):
        cols = np.flatnonzero(publication.crossing == k)
        sub = Xc[:, cols]
        partition = bool(np.all(np.asarray(sub.sum(axis=1)).reshape(-1) <= 1))
        blocks.append((cols, sub.tocsr(), partition))
    converged, n_iter = False, 0
    for n_iter in range(1, max_iter + 1):
        for cols, sub, partition in blocks:
            target = vals[cols]
            if partition:
                cur = np.asarray(sub.T @ y).reshape(-1)
                with np.errstate(divide="ignore", invalid="ignore"):
                    f = np.where(cur > 0, target / cur, 0.0)
                row_f = np.asarray(sub @ f).reshape(-1)
                inside = np.asarray(sub.sum(axis=1)).reshape(-1) > 0
                y = np.where(inside, y * row_f, y)
            else:
                subc = sub.tocsc()
                for j in range(cols.shape[0]):
                    rows = subc.indices[subc.indptr[j] : subc.indptr[j + 1]]
                    cur = y[rows].sum()
                    y[rows] = y[rows] * (target[j] / cur) if cur > 0 else 0.0
        dev = float(np.max(np.abs(publication.aggregate(y) - vals))) if vals.size else 0.0
        if dev <= tol * max(1.0, float(np.max(vals))):
            converged = True
            break
    return y, converged, n_iter
