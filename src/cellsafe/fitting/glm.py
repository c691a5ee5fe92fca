"""The Poisson log-linear model as a generalized linear model, fitted by IRLS.

:func:`fit_loglinear` fits ``log mu = X beta`` to the cells of a table's margin over the
formula's variables (zeros included, structural zeros excluded), with treatment contrasts (the
first category of each variable is the reference) and R's coefficient names (``(Intercept)``,
``ethnicityB``, ``ethnicityB:ageC``).  The design is a scipy.sparse matrix: a term with r variables
puts a single 1 in each row, so each row has as many non-zeros as the model has terms (+1).

Zero margins make some maximum-likelihood estimates infinite (the fitted cells under a zero
margin are 0).  Rather than iterating toward ``-inf`` (R's ``glm`` stops near -20 to -30 with huge
standard errors), the cells forced to zero are found first and the model is fitted on the rest;
parameters that are then not estimable are reported as infinite (``infinite`` is True, the estimate
is ``-inf`` when its own sufficient statistic is zero and NaN otherwise, the standard error NaN).
Columns that are linear combinations of earlier columns of the full design (structural zeros can
do that) are aliased (``aliased``), reported as NaN where R reports NA, their coefficient fixed
at 0 as R does.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg
import scipy.sparse as sp
from scipy.special import ndtr, ndtri

from .._blas import single_thread_blas
from .._results import Result, json_ready
from .._validation import check_integer, check_real
from ..exceptions import CellsafeWarning, ConvergenceWarning, InvalidArgumentError, TableTooLargeError
from ..formula import Formula, parse_formula
from ..table import CountTable, check_table, ravel, unravel

__all__ = ["LogLinearFit", "fit_loglinear", "loglinear_design", "MAX_PARAMS"]

#: Largest number of parameters :func:`fit_loglinear` accepts (a dense p x p matrix of 800 MB).
MAX_PARAMS = 10_000


@dataclass(frozen=True)
class LogLinearFit(Result):
    """A fitted Poisson log-linear model (see :func:`fit_loglinear`).

    Attributes
    ----------
    params : pandas.Series
        Estimates indexed by R's coefficient names (``-inf``/NaN for infinite, NaN for aliased).
    bse : pandas.Series
        Standard errors (NaN for infinite and aliased parameters).
    aliased : pandas.Series of bool
        Columns dependent on earlier columns of the design (R reports NA).
    infinite : pandas.Series of bool
        Estimable from the design but infinite because of zero margins.
    deviance : float
        ``2 sum(y log(y / mu) - (y - mu))`` over the cells.
    null_deviance : float
        Deviance of the intercept-only model.
    df_residual : int
        Number of cells minus the number of non-aliased parameters (as R counts it).
    fitted : CountTable
        Fitted values (float counts) over the formula's variables.
    converged : bool
    n_iter : int
    level : float
        Confidence level of :meth:`conf_int` (e.g. 0.95).
    formula : str
    n_cells : int
        Cells modelled (structural zeros excluded).
    """

    params: pd.Series
    bse: pd.Series
    aliased: pd.Series
    infinite: pd.Series
    deviance: float
    null_deviance: float
    df_residual: int
    fitted: CountTable
    converged: bool
    n_iter: int
    level: float
    formula: str
    n_cells: int
    total: float = field(default=float("nan"))

    @property
    def n_params(self) -> int:
        """Number of coefficients (aliased and infinite included)."""
        return int(self.params.shape[0])

    def conf_int(self, level: float | None = None) -> pd.DataFrame:
        """Wald intervals ``estimate -/+ z_((1 + level)/2) se`` (columns ``lower``, ``upper``).

        Parameters
        ----------
        level : float, optional
            Confidence level in (0, 1); the fit's :attr:`level` by default.
        """
        lev = self.level
        if level is not None:
            lev = check_real(level, "level", "LogLinearFit.conf_int", low=0.0, high=1.0, low_open=True, high_open=True)
        z = ndtri((1.0 + lev) / 2)  # the normal quantile z_((1 + level)/2)
        return pd.DataFrame({"lower": self.params - z * self.bse, "upper": self.params + z * self.bse})

    def to_frame(self) -> pd.DataFrame:
        """One row per coefficient: estimate, se, z, p-value, interval, aliased, infinite."""
        ci = self.conf_int()
        z = self.params / self.bse
        return pd.DataFrame(
            {
                "estimate": self.params,
                "se": self.bse,
                "z": z,
                "p_value": 2 * ndtr(-np.abs(z.to_numpy())),
                "lower": ci["lower"],
                "upper": ci["upper"],
                "aliased": self.aliased,
                "infinite": self.infinite,
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """The fit's settings and statistics, and one record per coefficient (the rows of :meth:`to_frame`)."""
        coefs = self.to_frame()
        return json_ready(
            {
                "formula": self.formula,
                "n_params": self.n_params,
                "n_cells": self.n_cells,
                "total": self.total,
                "deviance": self.deviance,
                "null_deviance": self.null_deviance,
                "df_residual": self.df_residual,
                "converged": self.converged,
                "n_iter": self.n_iter,
                "level": self.level,
                "n_aliased": int(self.aliased.sum()),
                "n_infinite": int(self.infinite.sum()),
                "coefficients": [{"term": str(t), **row} for t, row in coefs.to_dict(orient="index").items()],
            }
        )

    def summary(self) -> str:
        """The fit as text: model, deviance and convergence, then the coefficient table."""
        lines = [
            f"Log-linear model {self.formula}: {self.n_params} parameters on {self.n_cells:,} cells",
            f"deviance {self.deviance:.6g} on {self.df_residual} degrees of freedom (null {self.null_deviance:.6g}); "
            f"{'converged' if self.converged else 'NOT converged'} in {self.n_iter} iterations",
        ]
        if self.aliased.any() or self.infinite.any():
            lines.append(f"aliased {int(self.aliased.sum())}, infinite {int(self.infinite.sum())}")
        lines += ["", self.to_frame().to_string(float_format=lambda x: f"{x:.6g}")]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return f"<p><code>{self!r}</code></p>" + self.to_frame().to_html(float_format=lambda x: f"{x:.6g}")

    def __repr__(self) -> str:
        return (
            f"LogLinearFit(formula={self.formula!r}, n_params={self.n_params}, n_cells={self.n_cells}, "
            f"deviance={self.deviance:.6g}, df_residual={self.df_residual}, converged={self.converged}, "
            f"n_iter={self.n_iter}, infinite={int(self.infinite.sum())}, aliased={int(self.aliased.sum())})"
        )


def loglinear_design(
    table: CountTable, formula: str | Formula, cells: np.ndarray | None = None
) -> tuple[sp.csr_matrix, list[str]]:
    """The sparse treatment-contrast design of ``formula`` over ``table``'s cells.

    Parameters
    ----------
    table : CountTable
        Its variables define the categories; the formula's variables must be among them.
    formula : str or Formula
    cells : array of int, optional
        Flat indices of the rows (default: every cell of the table, structural zeros included).

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_rows, n_params)
    names : list of str
        R's coefficient names, in R's column order (within an interaction the first variable
        varies fastest).
    """
    f = parse_formula(formula, table.names)
    if cells is None:
        cells = np.arange(table.n_cells, dtype=np.int64)
    codes = unravel(cells, table.shape)
    n = codes.shape[0]
    rows_l, cols_l, names = [], [], []
    offset = 0
    if f.intercept:
        rows_l.append(np.arange(n))
        cols_l.append(np.zeros(n, dtype=np.int64))
        names.append("(Intercept)")
        offset = 1
    for term in f.terms:
        pos = [table.names.index(v) for v in term]
        sizes = [table.shape[p] - 1 for p in pos]
        ncol = math.prod(sizes)
        if ncol == 0:
            continue
        c = codes[:, pos] - 1
        on = np.all(c >= 0, axis=1)
        # R's column order: the first variable of the term varies fastest (Fortran order).
        col = ravel(c[on][:, ::-1], sizes[::-1])
        rows_l.append(np.flatnonzero(on))
        cols_l.append(offset + col)
        labels = [[f"{v}{cat}" for cat in table.variables[p].categories[1:]] for v, p in zip(term, pos)]
        grids = np.meshgrid(*[np.arange(s) for s in sizes[::-1]], indexing="ij")
        flat = [g.reshape(-1) for g in grids][::-1]
        names.extend(":".join(labels[k][flat[k][i]] for k in range(len(term))) for i in range(ncol))
        offset += ncol
    rows = np.concatenate(rows_l) if rows_l else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(cols_l) if cols_l else np.zeros(0, dtype=np.int64)
    X = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, offset))
    return X, names


def _independent_columns(X: sp.spmatrix, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Greedy (in column order) maximal independent set of columns, and the coefficients
    expressing each dependent column in terms of the kept ones (shape (n_kept, n_dropped))."""
    G = np.asarray((X.T @ X).todense(), dtype=np.float64)
    p = G.shape[0]
    if p == 0:
        return np.zeros(0, dtype=bool), np.zeros((0, 0))
    diag = np.diag(G).copy()
    keep = diag > 0
    try:  # fast path: every column independent
        c, _ = scipy.linalg.cho_factor(G, lower=False, check_finite=False)
        if np.all(np.diag(c) ** 2 > tol * np.maximum(diag, 1e-300)):
            return keep, np.zeros((p, 0))
    except np.linalg.LinAlgError:
        pass
    # Outer-product Cholesky that skips a column whose residual (after projection on the kept
    # earlier columns) is negligible: exactly "dependent on earlier columns", as R's QR decides.
    A = G.copy()
    for k in range(p):
        piv = A[k, k]
        if not keep[k] or piv <= tol * diag[k]:
            keep[k] = False
            continue
        col = A[k, k:] / math.sqrt(piv)
        A[k:, k:] -= np.outer(col, col)
    kept = np.flatnonzero(keep)
    dropped = np.flatnonzero(~keep)
    if dropped.size:
        coef = scipy.linalg.solve(G[np.ix_(kept, kept)], G[np.ix_(kept, dropped)], assume_a="pos")
    else:
        coef = np.zeros((kept.size, 0))
    return keep, coef


def _estimable(keep: np.ndarray, coef: np.ndarray, tol: float = 1e-7) -> np.ndarray:
    """Columns whose coefficient is identified: kept and not part of any dependency."""
    est = keep.copy()
    if coef.size:
        involved = np.any(np.abs(coef) > tol, axis=1)
        est[np.flatnonzero(keep)[involved]] = False
    return est


def fit_loglinear(
    table: CountTable,
    formula: str | Formula,
    *,
    level: float = 0.95,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> LogLinearFit:
    """Fit a Poisson log-linear model by iteratively reweighted least squares.

    Parameters
    ----------
    table : CountTable
        The data; the model is fitted to its margin over the formula's variables, every cell of
        that margin (zeros included) being one observation.
    formula : str or Formula
        R notation over the table's variables, e.g.
        ``'ethnicity*age + ethnicity*language + age*language'`` or ``'(a + b + c)^2'``.
    level : float, default 0.95
        Confidence level of the Wald intervals of :meth:`LogLinearFit.conf_int`.
    tol : float, default 1e-10
        Convergence when the relative change of deviance, ``|D - D_old| / (|D| + 0.1)``, is below
        ``tol`` (R's criterion).
    max_iter : int, default 100
        Iteration cap; reaching it gives a ConvergenceWarning.

    Returns
    -------
    LogLinearFit

    Notes
    -----
    IRLS for the canonical log link: working response ``z = eta + (y - mu)/mu``, weights ``mu``;
    each step solves ``(X' W X) beta = X' W z`` with a Cholesky factorization of the small
    ``p x p`` matrix, ``X`` sparse.  Start ``mu = y + 0.1`` as R does.  Standard errors are the
    square roots of the diagonal of ``(X' W X)^-1`` at the fitted values.  Cells in a zero margin of
    a generating-class term of a hierarchical model, or under a 0/1 column whose total is zero,
    have fitted value 0 and are set aside before iterating (Fienberg and Rinaldo's extended MLE);
    this is the source of the infinite estimates 003 section 4.4 mentions.  Used for specific utility
    (003 section 4.4; methods.md section 5).

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe.table import CountTable, Variable
    >>> v = [Variable("a", ["x", "y"]), Variable("b", ["u", "v"])]
    >>> t = CountTable.from_dense(np.array([[10, 20], [30, 40]]), v)
    >>> fit = fit_loglinear(t, "a + b")
    >>> fit.params.round(4).to_dict()
    {'(Intercept)': 2.4849, 'ay': 0.8473, 'bv': 0.4055}
    """
    check_table(table, "fit_loglinear")
    check_real(level, "level", "fit_loglinear", low=0.0, high=1.0, low_open=True, high_open=True)
    check_real(tol, "tol", "fit_loglinear", low=0.0, low_open=True)
    check_integer(max_iter, "max_iter", "fit_loglinear", low=1)
    f = parse_formula(formula, table.names)
    if not f.intercept:
        raise InvalidArgumentError(
            f"the model {f.text!r} drops the intercept; a Poisson log-linear model needs it (remove '- 1')."
        )
    if not f.is_hierarchical():
        raise InvalidArgumentError(
            f"the model {f.text!r} is not hierarchical (an interaction without all its lower-order terms); "
            "write it with '*' (for example 'a*b' rather than 'a:b') so that treatment contrasts apply."
        )
    keep_vars = [v for v in table.names if v in f.variables]
    if not keep_vars:
        raise InvalidArgumentError(
            f"the model {f.text!r} names no variable; a log-linear model needs at least one, e.g. 'a + b'."
        )
    tab = table.margin(keep_vars)
    cells = np.arange(tab.n_cells, dtype=np.int64)
    if tab.n_structural_zeros:
        cells = np.setdiff1d(cells, tab.structural_zeros, assume_unique=True)
    y = tab.lookup(cells).astype(np.float64)
    n_par = 1 + sum(math.prod(tab.shape[tab.names.index(v)] - 1 for v in t) for t in f.terms)
    if n_par > MAX_PARAMS:
        raise TableTooLargeError(
            f"the model {f.text!r} has {n_par} parameters, more than {MAX_PARAMS}: its p x p information matrix "
            "would not fit comfortably in memory. Fit fewer variables or interactions, or use cellsafe.fitting.ipf "
            "for the fitted values alone."
        )
    X, names = loglinear_design(tab, f, cells)
    n, p = X.shape

    # Cells forced to zero by a zero sufficient statistic.
    Xc = X.tocsc()
    col_tot = Xc.T @ y
    zero_cols = np.flatnonzero(col_tot <= 0)
    forced = np.zeros(n, dtype=bool)
    if zero_cols.size:
        forced |= (Xc[:, zero_cols] @ np.ones(zero_cols.size)) > 0
    codes = unravel(cells, tab.shape)
    for term in f.generating_class():  # the model is hierarchical (checked above)
        pos = [tab.names.index(v) for v in term]
        key = ravel(codes[:, pos], [tab.shape[q] for q in pos])
        msum = np.bincount(key, weights=y, minlength=math.prod(tab.shape[q] for q in pos))
        forced |= msum[key] == 0
    active = ~forced

    # Aliased columns (R's NA): dependent on earlier columns of the full design; their
    # coefficients are fixed at 0, as R does.
    with single_thread_blas(p <= 3000):  # threads pay off only for large p x p factorizations
        keep_full, _ = _independent_columns(X)
        aliased = ~keep_full
        full_cols = np.flatnonzero(keep_full)
        Xa = X[active][:, full_cols]
        keep_act, coef_act = _independent_columns(Xa)
        est_sub = _estimable(keep_act, coef_act)
        estimable = np.zeros(p, dtype=bool)
        estimable[full_cols[est_sub]] = True
        infinite = keep_full & ~estimable
        # columns used for fitting: an independent set spanning the active design
        use = full_cols[keep_act]
        Xu = X[active][:, use].tocsr()
        ya = y[active]

        beta_u, mu_a, n_iter, converged, cov_u = _irls(Xu, ya, tol, max_iter)
    if not converged:
        warnings.warn(
            f"the Poisson GLM {f.text!r} did not converge in {max_iter} iterations; raise max_iter.",
            ConvergenceWarning,
            stacklevel=2,
        )
    if mu_a.size and np.min(mu_a) < 1e-10:
        warnings.warn(
            "some fitted values are numerically zero although none of the margins that define them is: the "
            "maximum-likelihood estimate may not exist for this model and data; treat large estimates with care.",
            CellsafeWarning,
            stacklevel=2,
        )

    params = np.full(p, np.nan)
    bse = np.full(p, np.nan)
    pos_in_use = {c: k for k, c in enumerate(use)}
    for k in np.flatnonzero(estimable):
        params[k] = beta_u[pos_in_use[k]]
        bse[k] = math.sqrt(max(cov_u[pos_in_use[k], pos_in_use[k]], 0.0))
    params[infinite & (col_tot <= 0)] = -np.inf
    n_inf = int(infinite.sum())
    if n_inf:
        warnings.warn(
            f"{n_inf} of the {p} parameters of {f.text!r} are infinite because of zero margins; they are flagged "
            "in 'infinite' (estimate -inf or NaN, standard error NaN) and the fitted values under those margins are 0.",
            CellsafeWarning,
            stacklevel=2,
        )

    mu = np.zeros(n)
    mu[active] = mu_a
    deviance = _poisson_deviance(y, mu)
    null_deviance = _poisson_deviance(y, np.full(n, y.mean()))  # the intercept-only model
    nz = mu > 0
    fitted = tab.with_counts(cells[nz], mu[nz])
    idx = pd.Index(names, name="term")
    return LogLinearFit(
        params=pd.Series(params, index=idx, name="estimate"),
        bse=pd.Series(bse, index=idx, name="se"),
        aliased=pd.Series(aliased, index=idx, name="aliased"),
        infinite=pd.Series(infinite, index=idx, name="infinite"),
        deviance=deviance,
        null_deviance=null_deviance,
        df_residual=int(n - keep_full.sum()),
        fitted=fitted,
        converged=converged,
        n_iter=n_iter,
        level=float(level),
        formula=f.text,
        n_cells=int(n),
        total=float(y.sum()),
    )


def _poisson_deviance(y: np.ndarray, mu: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(y > 0, y * np.log(y / np.where(mu > 0, mu, 1.0)), 0.0)
    return float(2.0 * np.sum(term - (y - mu)))


def _irls(X: sp.csr_matrix, y: np.ndarray, tol: float, max_iter: int) -> Any:
    n, q = X.shape
    if q == 0:
        return np.zeros(0), np.zeros(n), 0, True, np.zeros((0, 0))
    mu = y + 0.1
    eta = np.log(mu)
    dev_old = _poisson_deviance(y, mu)
    converged = False
    beta = np.zeros(q)
    XT = X.T.tocsr()
    it = 0
    for it in range(1, max_iter + 1):
        z = eta + (y - mu) / mu
        A = (XT @ X.multiply(mu[:, None]).tocsc()).toarray()
        b = XT @ (mu * z)
        try:
            c = scipy.linalg.cho_factor(A, check_finite=False)
            beta = scipy.linalg.cho_solve(c, b, check_finite=False)
        except np.linalg.LinAlgError:  # pragma: no cover - numerically singular weights
            beta = scipy.linalg.lstsq(A, b)[0]
        eta = X @ beta
        mu = np.exp(eta)
        dev = _poisson_deviance(y, mu)
        if abs(dev - dev_old) / (abs(dev) + 0.1) < tol:
            converged = True
            break
        dev_old = dev
    A = (XT @ X.multiply(mu[:, None]).tocsc()).toarray()
    try:
        cov = scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, check_finite=False), np.eye(q), check_finite=False)
    except np.linalg.LinAlgError:  # pragma: no cover
        cov = np.linalg.pinv(A)
    return beta, mu, it, converged, cov
