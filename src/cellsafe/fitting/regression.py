"""Least squares and logistic regression with standard errors (numpy only).

:func:`fit_ols` solves the normal equations through a QR decomposition; :func:`fit_logistic`
runs Newton-Raphson (iteratively reweighted least squares).  Both return a frozen
:class:`GLMFit` with coefficients, their standard errors from the inverse information matrix
(OLS: ``sigma^2 (X'X)^-1`` with ``sigma^2 = RSS / (n - p)``), the residual degrees of freedom
and, for the logistic fit, ``converged`` and ``n_iter``.  An optional small ridge keeps logistic
coefficients finite under separation (used for propensity scores, never for inference).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._blas import single_thread_blas
from .._results import Result, json_ready
from ..exceptions import ConvergenceWarning, DataError

__all__ = ["GLMFit", "fit_ols", "fit_logistic", "weighted_gram"]


@dataclass(frozen=True)
class GLMFit(Result):
    """A fitted linear or logistic regression.

    Attributes
    ----------
    family : str
        ``"gaussian"`` or ``"binomial"``.
    coef, se : numpy.ndarray
        Estimates and standard errors, one per column of the design.
    df_resid : int
        ``n - p``.
    converged : bool
    n_iter : int
    fitted : numpy.ndarray
        Fitted means (probabilities for the logistic model).
    """

    family: str
    coef: np.ndarray
    se: np.ndarray
    df_resid: int
    converged: bool = True
    n_iter: int = 0
    fitted: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    def to_frame(self) -> Any:
        """One row per column of the design: ``estimate`` and ``se`` (a pandas DataFrame)."""
        import pandas as pd

        return pd.DataFrame({"estimate": self.coef, "se": self.se})

    def to_dict(self) -> dict[str, Any]:
        return json_ready(
            {
                "family": self.family,
                "coef": self.coef,
                "se": self.se,
                "df_resid": self.df_resid,
                "converged": self.converged,
                "n_iter": self.n_iter,
            }
        )


def _check(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.size:
        raise DataError(f"regression needs an (n, p) design and n responses; got {x.shape} and {y.shape}.")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DataError("regression data contain missing or infinite values; drop or impute them first.")
    return x, y


def fit_ols(x: np.ndarray, y: np.ndarray) -> GLMFit:
    """Ordinary least squares with classical standard errors.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.column_stack([np.ones(4), [0., 1, 2, 3]])
    >>> fit_ols(x, np.array([1., 3, 5, 7])).coef.round(6)
    array([1., 2.])
    """
    x, y = _check(x, y)
    n, p = x.shape
    q, r = np.linalg.qr(x)
    if np.any(np.abs(np.diag(r)) < 1e-10 * max(1.0, np.abs(r).max())):
        raise DataError("the regression design is rank deficient (collinear predictors); drop a predictor.")
    beta = np.linalg.solve(r, q.T @ y)
    fitted = x @ beta
    df = n - p
    sigma2 = float(np.sum((y - fitted) ** 2) / df) if df > 0 else np.nan
    rinv = np.linalg.solve(r, np.eye(p))
    cov = sigma2 * (rinv @ rinv.T)
    return GLMFit("gaussian", beta, np.sqrt(np.diag(cov)), df, True, 1, fitted)


def weighted_gram(x: np.ndarray, w: np.ndarray | None = None, block: int = 4096) -> np.ndarray:
    """``X' diag(w) X`` summed over row blocks (faster and lighter than one tall product)."""
    p = x.shape[1]
    g = np.zeros((p, p))
    with single_thread_blas():
        for i in range(0, x.shape[0], block):
            xb = x[i : i + block]
            g += xb.T @ (xb if w is None else xb * w[i : i + block, None])
    return g


def _expit(eta: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * eta))


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray,
    *,
    ridge: float = 0.0,
    penalize_first: bool = False,
    max_iter: int = 50,
    tol: float = 1e-10,
    warn: bool = True,
    start: np.ndarray | None = None,
    standard_errors: bool = True,
) -> GLMFit:
    """Logistic regression by Newton-Raphson (IRLS), standard errors from the information matrix.

    Parameters
    ----------
    x : (n, p) array
        Design matrix (include a column of ones for an intercept).
    y : (n,) array of 0/1
    ridge : float
        Penalty ``ridge / 2 * |beta|^2`` (0 for maximum likelihood).
    penalize_first : bool
        Whether the first column (the intercept) is penalized.
    max_iter, tol : int, float
        Stop when the relative change of the deviance falls below ``tol``.
    warn : bool
        Emit a :class:`~cellsafe.exceptions.ConvergenceWarning` when ``max_iter`` is reached.
    start : (p,) array, optional
        Coefficients to start from (a fit of similar data converges in a few steps from its
        coefficients); by default the intercept-only fit.
    standard_errors : bool
        Compute the standard errors (one more weighted Gram matrix, the cost of an iteration);
        NaN when False.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.column_stack([np.ones(6), [0., 0, 1, 1, 2, 2]])
    >>> f = fit_logistic(x, np.array([0., 0, 0, 1, 1, 1]))
    >>> f.converged
    True
    """
    with single_thread_blas():
        return _fit_logistic(x, y, ridge, penalize_first, max_iter, tol, warn, start, standard_errors)


def _fit_logistic(
    x: np.ndarray, y: np.ndarray, ridge: float, penalize_first: bool, max_iter: int, tol: float, warn: bool,
    start: np.ndarray | None = None, standard_errors: bool = True,
) -> GLMFit:
    x, y = _check(x, y)
    n, p = x.shape
    pen = np.full(p, float(ridge))
    if not penalize_first and p > 0:
        pen[0] = 0.0
    beta = np.zeros(p)
    if start is not None:
        beta = np.array(start, dtype=np.float64).reshape(p)
    elif p > 0 and np.all(x[:, 0] == 1.0):
        ybar = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
        beta[0] = np.log(ybar / (1 - ybar))  # start at the intercept-only fit
    dev_old = np.inf
    ll = _loglik(x, y, beta, pen)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        eta = x @ beta
        mu = _expit(eta)
        w = np.clip(mu * (1 - mu), 1e-12, None)
        grad = x.T @ (y - mu) - pen * beta
        hess = weighted_gram(x, w) + np.diag(pen)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        # step halving keeps the penalized log-likelihood increasing
        t = 1.0
        for _ in range(30):
            cand = beta + t * step
            ll_cand = _loglik(x, y, cand, pen)
            if ll_cand >= ll - 1e-12 * abs(ll):
                break
            t *= 0.5
        beta, ll = cand, ll_cand
        dev = -2 * ll
        if abs(dev_old - dev) <= tol * (abs(dev) + 0.1):
            converged = True
            break
        dev_old = dev
    mu = _expit(x @ beta)
    se = np.full(p, np.nan)
    if standard_errors:
        w = np.clip(mu * (1 - mu), 1e-12, None)
        info = weighted_gram(x, w) + np.diag(pen)
        try:
            cov = np.linalg.inv(info)
            se = np.sqrt(np.clip(np.diag(cov), 0, None))
        except np.linalg.LinAlgError:
            pass
    if not converged and warn:
        warnings.warn(
            f"logistic regression stopped after {max_iter} iterations before converging "
            "(possibly separated data); estimates may be unreliable.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return GLMFit("binomial", beta, se, n - p, converged, it, mu)


def _loglik(x: np.ndarray, y: np.ndarray, beta: np.ndarray, pen: np.ndarray) -> float:
    eta = x @ beta
    # log(1 + e^eta) computed stably
    ll = float(np.sum(y * eta - np.logaddexp(0.0, eta)))
    return ll - 0.5 * float(np.sum(pen * beta**2))
