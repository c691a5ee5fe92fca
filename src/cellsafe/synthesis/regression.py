"""Parametric methods: linear regression with normal draws, logistic and multinomial logit.

Each model is fitted on the confidential values of the target and of its predictors, and draws
synthetic values from the predictors' synthetic values (course 002, section 2.4 and exercise 2.7):

``"normal"``
    ``y = X beta + e`` by least squares; a synthetic value is ``x' beta + sigma z`` with ``z``
    standard normal and ``sigma`` the residual standard error (002, section 4.1.3, "method 2").
``"logistic"``
    A category with two codes: ``P(code 1 | x) = 1 / (1 + exp(-x' beta))``, drawn as a Bernoulli.
``"multinomial"``
    ``P(code k | x) = exp(x' beta_k) / sum_j exp(x' beta_j)`` with ``beta_0 = 0`` (the first
    category is the reference, as R's ``nnet::multinom``), maximum likelihood by L-BFGS.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..exceptions import DataError
from ..fitting import fit_logistic, fit_ols

__all__ = [
    "NormalModel",
    "LogisticModel",
    "MultinomialModel",
    "fit_normal",
    "fit_logistic_model",
    "fit_multinomial",
]

# Out-of-range normal draws are drawn again this many times, then clipped.
_REDRAWS = 50


@dataclass(frozen=True)
class NormalModel:
    """A fitted linear regression with normal residuals.

    Attributes
    ----------
    coef, se : numpy.ndarray
        Least-squares estimates and standard errors, one per design column.
    sigma : float
        Residual standard error ``sqrt(RSS / df_resid)``.
    df_resid : int
    low, high : float
        Range synthetic values are kept in (``-inf, inf`` when unbounded).
    names : tuple of str
        The design columns' names, as R prints them (``"(Intercept)"``, ``"sexmale"``).
    """

    coef: np.ndarray
    se: np.ndarray
    sigma: float
    df_resid: int
    low: float = -np.inf
    high: float = np.inf
    names: tuple[str, ...] = ()

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        mu = x @ self.coef
        y = mu + self.sigma * gen.standard_normal(mu.size)
        if np.isfinite(self.low) or np.isfinite(self.high):
            # draws outside the observed range are redrawn (a truncated normal), then clipped
            for _ in range(_REDRAWS):
                out = np.flatnonzero((y < self.low) | (y > self.high))
                if out.size == 0:
                    break
                y[out] = mu[out] + self.sigma * gen.standard_normal(out.size)
            np.clip(y, self.low, self.high, out=y)
        return y


def fit_normal(
    y: np.ndarray, x: np.ndarray, low: float = -np.inf, high: float = np.inf, names: tuple[str, ...] = ()
) -> NormalModel:
    """Least squares of ``y`` on the design ``x`` (with its intercept column).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.column_stack([np.ones(4), [0.0, 0, 1, 1]])
    >>> m = fit_normal(np.array([1.0, 3, 4, 6]), x)
    >>> m.coef.round(3), round(m.sigma, 4)
    (array([2., 3.]), 1.4142)
    """
    if y.size <= x.shape[1]:
        raise DataError(f"{y.size} records cannot fit a linear regression with {x.shape[1]} coefficients.")
    fit = fit_ols(x, y)
    sigma = float(np.sqrt(np.sum((y - fit.fitted) ** 2) / fit.df_resid))
    return NormalModel(fit.coef, fit.se, sigma, fit.df_resid, low, high, tuple(names))


@dataclass(frozen=True)
class LogisticModel:
    """A fitted logistic regression for a category with two codes (0 and 1)."""

    coef: np.ndarray
    se: np.ndarray
    converged: bool = True

    def proba(self, x: np.ndarray) -> np.ndarray:
        p = 0.5 * (1.0 + np.tanh(0.5 * (x @ self.coef)))
        return np.column_stack([1.0 - p, p])

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        p = 0.5 * (1.0 + np.tanh(0.5 * (x @ self.coef)))
        return (gen.random(p.size) < p).astype(np.int64)


def fit_logistic_model(codes: np.ndarray, x: np.ndarray) -> LogisticModel:
    """Logistic regression of ``codes == 1`` on ``x``.

    A very small ridge (1e-6) keeps coefficients finite when a predictor separates the two
    categories; the fit is otherwise maximum likelihood.
    """
    fit = fit_logistic(x, (codes == 1).astype(np.float64), ridge=1e-6, warn=False)
    return LogisticModel(fit.coef, fit.se, fit.converged)


@dataclass(frozen=True)
class MultinomialModel:
    """A fitted multinomial logit.

    Attributes
    ----------
    coef : numpy.ndarray
        ``(p, K)`` coefficients; column 0 (the reference category) is zero.
    converged : bool
    n_iter : int
    """

    coef: np.ndarray
    converged: bool = True
    n_iter: int = 0
    loglik: float = field(default=np.nan, compare=False)
    vcov: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def se(self) -> np.ndarray | None:
        """Standard errors shaped as ``coef`` (0 for the reference column), or None when not computed."""
        if self.vcov is None:
            return None
        p, k = self.coef.shape
        out = np.zeros((p, k))
        out[:, 1:] = np.sqrt(np.clip(np.diag(self.vcov), 0, None)).reshape(k - 1, p).T
        return out

    def proba(self, x: np.ndarray) -> np.ndarray:
        return _softmax(x @ self.coef)

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        p = _softmax(x @ self.coef)
        cum = np.cumsum(p, axis=1)
        u = gen.random(x.shape[0]) * cum[:, -1]
        return np.minimum((cum < u[:, None]).sum(axis=1), p.shape[1] - 1).astype(np.int64)


def _softmax(eta: np.ndarray) -> np.ndarray:
    eta = eta - eta.max(axis=1, keepdims=True)
    e = np.exp(eta)
    return e / e.sum(axis=1, keepdims=True)


def fit_multinomial(codes: np.ndarray, n_codes: int, x: np.ndarray, *, tol: float = 1e-10, max_iter: int = 2000) -> MultinomialModel:
    """Maximum-likelihood multinomial logit of ``codes`` (``0 .. n_codes - 1``) on ``x``.

    Notes
    -----
    The negative log-likelihood ``-sum_i log p_{i, y_i}`` and its gradient ``X'(P - Y)`` are
    minimized by L-BFGS over ``beta_1 .. beta_{K-1}`` after scaling each design column to unit
    root mean square (the fit is equivariant, so coefficients are scaled back).  Checked against
    R's ``nnet::multinom`` (tests/reference/multinomial).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.ones((6, 1))
    >>> m = fit_multinomial(np.array([0, 1, 1, 2, 2, 2]), 3, x)
    >>> np.exp(m.coef[0]).round(3)     # odds against the first category: 2 and 3
    array([1., 2., 3.])
    """
    from scipy.optimize import minimize

    n, p = x.shape
    k = int(n_codes)
    if k < 2:
        return MultinomialModel(np.zeros((p, max(k, 1))))
    scale = np.sqrt(np.mean(x**2, axis=0))
    scale[scale == 0] = 1.0
    xs = x / scale
    y = np.zeros((n, k))
    y[np.arange(n), codes] = 1.0

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        b = np.zeros((p, k))
        b[:, 1:] = theta.reshape(p, k - 1)
        eta = xs @ b
        m = eta.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(eta - m).sum(axis=1))
        nll = float(np.sum(lse) - np.sum(eta * y))
        prob = np.exp(eta - lse[:, None])
        grad = xs.T @ (prob - y)
        return nll, grad[:, 1:].ravel()

    res = minimize(
        objective,
        np.zeros(p * (k - 1)),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "ftol": tol, "gtol": 1e-9 * n},
    )
    theta, nll, n_iter = res.x, float(res.fun), int(res.nit)
    if p * (k - 1) <= _NEWTON_MAX:
        # L-BFGS stops on relative change; a few Newton steps reach the maximum itself
        for _ in range(10):
            step = _newton_step(xs, y, theta, p, k)
            cand = theta - step
            nll_cand = objective(cand)[0]
            if not np.isfinite(nll_cand) or nll_cand > nll:
                break
            theta, n_iter = cand, n_iter + 1
            done = nll - nll_cand <= 1e-13 * (abs(nll) + 1.0)
            nll = nll_cand
            if done:
                break
    b = np.zeros((p, k))
    b[:, 1:] = theta.reshape(p, k - 1) / scale[:, None]
    vcov = None
    if p * (k - 1) <= _NEWTON_MAX:
        # covariance of the coefficients, category by category (beta_1 first, as R's multinom lists them)
        hess = _information(x, b, p, k)
        try:
            vcov = np.linalg.inv(hess)
        except np.linalg.LinAlgError:
            vcov = np.linalg.pinv(hess)
    return MultinomialModel(b, bool(res.success), n_iter, -nll, vcov)


def _information(x: np.ndarray, b: np.ndarray, p: int, k: int) -> np.ndarray:
    """Observed information of ``beta_1 .. beta_{K-1}``, ordered category by category."""
    prob = _softmax(x @ b)[:, 1:]
    info = np.empty((k - 1, p, k - 1, p))
    for a in range(k - 1):
        for c in range(a, k - 1):
            w = prob[:, a] * ((a == c) - prob[:, c])
            block = x.T @ (x * w[:, None])
            info[a, :, c, :] = block
            info[c, :, a, :] = block.T
    return info.reshape((k - 1) * p, (k - 1) * p)


# Newton polishing of the multinomial fit up to this many free coefficients.
_NEWTON_MAX = 300


def _newton_step(x: np.ndarray, y: np.ndarray, theta: np.ndarray, p: int, k: int) -> np.ndarray:
    """Newton step ``H^-1 g`` of the multinomial negative log-likelihood in ``beta_1 .. beta_{K-1}``."""
    b = np.zeros((p, k))
    b[:, 1:] = theta.reshape(p, k - 1)
    prob = _softmax(x @ b)[:, 1:]
    grad = (x.T @ (prob - y[:, 1:])).ravel()
    hess = np.empty((p, k - 1, p, k - 1))
    for a in range(k - 1):
        for c in range(a, k - 1):
            w = prob[:, a] * ((a == c) - prob[:, c])
            block = x.T @ (x * w[:, None])
            hess[:, a, :, c] = block
            hess[:, c, :, a] = block.T
    square: np.ndarray = hess.reshape(p * (k - 1), p * (k - 1))
    try:
        return np.linalg.solve(square, grad)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(square, grad, rcond=None)[0]
