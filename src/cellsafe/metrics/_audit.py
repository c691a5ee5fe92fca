"""Audit of a release with missing cells: the interval an attacker can compute for every suppressed cell.

An attacker who knows every published value and that inner counts are non-negative can bound a
suppressed cell by two linear programs over the inner cells y >= 0 with ``X_P^T y = z_P`` (the
published cells P): the minimum and the maximum of the suppressed cell's ``x_j^T y``.  A cell is
unsafe when its interval is narrower than the protection it needs: any positive width for a
frequency-rule cell (so it is not computed exactly), and for dominance rules the upper and lower
protection given per cell (Hundepool et al. 2012, section 4.3), the lower one capped at the cell's
value since no attacker's lower bound falls below 0.  The linear programs are solved by scipy's
HiGHS in :func:`cellsafe.mechanisms.cell_intervals`, the same code cell suppression uses to reach
the protection it promises.  Works on any release with NaN cells (suppression, or the cell key method's threshold).

A cheaper argument comes first where it is exact: when every inner cell's true value is known to be
strictly positive (pass ``inner``) and there is no upper bound, the true inner cells are an interior
point of the attacker's feasible set, so a withheld cell's interval has positive width exactly when
its column of X is not a linear combination of the published columns (a perturbation along the
residual stays feasible in both directions).  Cells that need only a positive width are then
decided by that span test (:func:`cellsafe.mechanisms.in_published_span`) and their bounds are
reported as NaN; linear programs are solved only for cells that need a given width.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._results import Result
from ..exceptions import DataError, InvalidArgumentError
from ..mechanisms import cell_intervals, in_published_span, protection_met
from ..published import PublishedTable

__all__ = ["SuppressionAudit", "audit_suppression"]


@dataclass(frozen=True, eq=False)
class SuppressionAudit(Result):
    """The attacker's intervals of the suppressed cells of a release.

    Attributes
    ----------
    release : PublishedTable
    cells : ndarray of int64
        Positions of the suppressed published cells.
    lower, upper : ndarray of float64
        The attacker's bounds on each.
    required : ndarray of float64
        The protection each needs on both sides (0: only that it is not exact).
    safe : ndarray of bool
        ``upper - value >= required`` and ``value - lower >= min(required, value)`` (and width > 0
        when nothing more is required), each up to ``tol * max(1, |value|)``.
    """

    release: PublishedTable = field(repr=False)
    cells: np.ndarray = field(repr=False)
    lower: np.ndarray = field(repr=False)
    upper: np.ndarray = field(repr=False)
    required: np.ndarray = field(repr=False)
    safe: np.ndarray = field(repr=False)

    @property
    def passed(self) -> bool:
        """True when every suppressed cell is protected as required."""
        return bool(np.all(self.safe))

    @property
    def n_unsafe(self) -> int:
        return int(np.sum(~self.safe))

    def to_frame(self) -> pd.DataFrame:
        """One row per suppressed cell: its variables, value, status, bounds, width, required and safe."""
        rel = self.release
        out = rel.publication.cells().iloc[self.cells].reset_index(drop=True)
        out[rel.measure] = np.asarray(rel.original, dtype=np.float64)[self.cells]
        if rel.suppression is not None:
            out["suppression"] = rel.suppression[self.cells]
        out["lower"] = self.lower
        out["upper"] = self.upper
        out["width"] = self.upper - self.lower
        out["required"] = self.required
        out["safe"] = self.safe
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_suppressed": int(self.cells.shape[0]),
            "n_unsafe": self.n_unsafe,
            "passed": self.passed,
            "min_width": float(np.nanmin(self.upper - self.lower)) if np.isfinite(self.upper - self.lower).any() else float("nan"),
        }

    def _title(self) -> str:
        return "Suppression audit"

    def __repr__(self) -> str:
        return f"SuppressionAudit(n_suppressed={self.cells.shape[0]}, unsafe={self.n_unsafe}, passed={self.passed})"


def audit_suppression(
    release: PublishedTable,
    *,
    required: Any = None,
    upper_bound: float | None = None,
    inner: Any = None,
    tol: float = 1e-7,
) -> SuppressionAudit:
    """Intervals of every suppressed cell of ``release`` from everything it publishes.

    Parameters
    ----------
    release : PublishedTable
        Any release with NaN where cells are withheld; ``original`` holds the true values.
    required : float or array over the published cells, optional
        Protection each suppressed cell needs on both sides of its value (default 0: the interval
        must only have positive width).
    upper_bound : float, optional
        A known upper bound on every inner cell (default none).
    inner : array over the publication's inner cells, optional
        Their true values (``release.inner_original`` when it is set).  When all are positive and
        there is no ``upper_bound``, cells that need only a positive width are decided without linear
        programs (module notes); their ``lower`` and ``upper`` are NaN.
    tol : float
        Relative tolerance of the comparisons (times ``max(1, |value|)``).

    Returns
    -------
    SuppressionAudit

    Notes
    -----
    The inner cells are those of the release's publication (its non-zero cells unless it was
    built with ``zeros=True``): the attacker is assumed to know which combinations can be
    non-empty, which is conservative.

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe.table import CountTable, Variable
    >>> from cellsafe.mechanisms import CellSuppression
    >>> vs = [Variable("a", ["x", "y", "z"]), Variable("b", ["u", "v"])]
    >>> t = CountTable.from_dense(np.array([[1, 9], [7, 8], [6, 5]]), vs)
    >>> [res] = CellSuppression("a*b", rules=["freq<=2"]).sample(t)
    >>> audit_suppression(res).to_frame()[["a", "b", "lower", "upper"]].values.tolist()[0]
    ['x', 'u', 0.0, 7.0]
    """
    if not isinstance(release, PublishedTable):
        raise InvalidArgumentError(f"audit_suppression needs a PublishedTable. Got {type(release).__name__}.")
    pub = release.publication
    released = np.asarray(release.released, dtype=np.float64)
    hidden = np.flatnonzero(np.isnan(released))
    shown = np.flatnonzero(~np.isnan(released))
    need = np.zeros(pub.n_published) if required is None else np.broadcast_to(np.asarray(required, dtype=np.float64), (pub.n_published,))
    if np.any(need < 0):
        raise DataError("required protection must be non-negative.")
    Xc = sp.csc_matrix(pub.X)
    lower = np.zeros(hidden.shape[0])
    upper = np.zeros(hidden.shape[0])
    req = need[hidden]
    inner = release.inner_original if inner is None else inner
    by_span = np.zeros(hidden.shape[0], dtype=bool)
    if inner is not None and upper_bound is None:
        inner = np.asarray(inner, dtype=np.float64)
        if inner.shape != (pub.n_inner,):
            raise DataError(f"inner must hold the publication's {pub.n_inner} inner cells. Got shape {inner.shape}.")
        if np.all(inner > 0):
            by_span = req == 0
    if by_span.any():
        determined = in_published_span(Xc, shown, hidden[by_span])
        lower[by_span] = np.nan
        upper[by_span] = np.nan
        # a determined cell's interval is its value; an undetermined one has positive width
        lower[np.flatnonzero(by_span)[determined]] = np.asarray(release.original, dtype=np.float64)[hidden[by_span][determined]]
        upper[np.flatnonzero(by_span)[determined]] = lower[np.flatnonzero(by_span)[determined]]
    lp = np.flatnonzero(~by_span)
    lower[lp], upper[lp] = cell_intervals(Xc, released, hidden[lp], upper_bound=upper_bound)
    value = np.asarray(release.original, dtype=np.float64)[hidden]
    safe_low, safe_up = protection_met(value, lower, upper, req, tol)
    safe = safe_low & safe_up
    safe[by_span] = np.isnan(upper[by_span] - lower[by_span])
    return SuppressionAudit(release, hidden.astype(np.int64), lower, upper, req.copy(), safe)
