"""Ordered categories: the proportional-odds (cumulative logit) model, R's ``MASS::polr``.

``P(Y <= k | x) = 1 / (1 + exp(-(zeta_k - x' beta)))`` for ``k = 1 .. K-1``, with increasing cut
points ``zeta`` and one slope vector ``beta`` shared by every cut (no intercept: the cut points
take its place).  Maximum likelihood by L-BFGS over ``beta`` and the cut points written as
``zeta_1`` and log differences (so they stay ordered), then Newton steps on the same scale;
standard errors from the observed information in ``(beta, zeta)``, as ``polr(..., Hess = TRUE)``
reports them.  Checked against ``MASS::polr`` (tests/reference/ordinal).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

from ..exceptions import DataError

__all__ = ["PolrModel", "fit_polr"]


@dataclass(frozen=True)
class PolrModel:
    """A fitted proportional-odds model.

    Attributes
    ----------
    coef : numpy.ndarray
        Slopes ``beta`` of the design columns (no intercept).
    zeta : numpy.ndarray
        The ``K' - 1`` increasing cut points of the observed categories.
    codes : numpy.ndarray
        The ``K'`` category codes present in the data, in order (``zeta`` separates them).
    vcov : numpy.ndarray
        Covariance of ``(beta, zeta)`` (inverse observed information).
    n_codes : int
        Codes of the target (the width of :meth:`proba`).
    loglik : float
    converged : bool
    """

    coef: np.ndarray
    zeta: np.ndarray
    codes: np.ndarray
    vcov: np.ndarray = field(repr=False)
    n_codes: int
    loglik: float = np.nan
    converged: bool = True

    @property
    def se(self) -> np.ndarray:
        """Standard errors of ``(beta, zeta)``."""
        return np.sqrt(np.clip(np.diag(self.vcov), 0, None))

    def proba(self, x: np.ndarray) -> np.ndarray:
        eta = x @ self.coef
        cum = special.expit(self.zeta[None, :] - eta[:, None])
        cum = np.concatenate([np.zeros((eta.size, 1)), cum, np.ones((eta.size, 1))], axis=1)
        p = np.diff(cum, axis=1)
        out = np.zeros((eta.size, self.n_codes))
        out[:, self.codes] = np.clip(p, 0, None)
        return out

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        p = self.proba(x)
        cum = np.cumsum(p, axis=1)
        u = gen.random(x.shape[0]) * cum[:, -1]
        return np.minimum((cum < u[:, None]).sum(axis=1), p.shape[1] - 1).astype(np.int64)


def _negloglik(beta: np.ndarray, zeta: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Negative log-likelihood and its gradients in beta and zeta (y: 0 .. K'-1)."""
    k = zeta.size + 1
    eta = x @ beta
    cuts = np.concatenate([[-np.inf], zeta, [np.inf]])
    a, b = cuts[y + 1] - eta, cuts[y] - eta
    fa, fb = special.expit(a), special.expit(b)
    # P = F(a) - F(b), computed from the side that keeps precision
    p = np.where(b > 0, special.expit(-b) - special.expit(-a), fa - fb)
    p = np.maximum(p, 1e-300)
    da, db = fa * (1 - fa), fb * (1 - fb)
    nll = -float(np.sum(np.log(p)))
    g_beta = x.T @ ((da - db) / p)
    g_zeta = np.zeros(k + 1)
    np.add.at(g_zeta, y + 1, -da / p)
    np.add.at(g_zeta, y, db / p)
    return nll, g_beta, g_zeta[1:k]


def _hessian(beta: np.ndarray, zeta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Observed information in (beta, zeta) by central differences of the analytic gradient."""
    theta = np.concatenate([beta, zeta])
    p = beta.size
    h = np.empty((theta.size, theta.size))
    for j in range(theta.size):
        step = 1e-5 * max(1.0, abs(theta[j]))
        up, dn = theta.copy(), theta.copy()
        up[j] += step
        dn[j] -= step
        gu = np.concatenate(_negloglik(up[:p], up[p:], x, y)[1:])
        gd = np.concatenate(_negloglik(dn[:p], dn[p:], x, y)[1:])
        h[:, j] = (gu - gd) / (2 * step)
    return 0.5 * (h + h.T)


def fit_polr(codes: np.ndarray, n_codes: int, x: np.ndarray, *, max_iter: int = 1000) -> PolrModel:
    """Maximum-likelihood proportional-odds model of ordered ``codes`` on ``x`` (no intercept column).

    Categories that do not occur are left out of the cut points (their probability is 0).

    Examples
    --------
    >>> import numpy as np
    >>> m = fit_polr(np.array([0, 0, 1, 1, 1, 2]), 3, np.zeros((6, 0)))
    >>> np.round(m.zeta, 4)          # logits of the cumulative shares 2/6 and 5/6
    array([-0.6931,  1.6094])
    """
    from scipy.optimize import minimize

    present = np.unique(codes)
    if present.size < 2:
        raise DataError("an ordered category needs at least two observed categories for 'polr'.")
    y = np.searchsorted(present, codes)
    n, p = x.shape
    k = present.size
    scale = np.sqrt(np.mean(x**2, axis=0)) if p else np.ones(0)
    scale[scale == 0] = 1.0
    xs = x / scale
    shares = np.cumsum(np.bincount(y, minlength=k))[:-1] / n
    zeta0 = special.logit(shares)

    def unpack(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        steps = np.exp(t[p + 1 :])
        return t[:p], t[p] + np.concatenate([[0.0], np.cumsum(steps)])

    def objective(t: np.ndarray) -> tuple[float, np.ndarray]:
        beta, zeta = unpack(t)
        nll, gb, gz = _negloglik(beta, zeta, xs, y)
        # chain rule: zeta_j = t_p + sum_{i<=j} exp(t_{p+i})
        steps = np.exp(t[p + 1 :])
        tail = np.cumsum(gz[::-1])[::-1]  # sum of gz over j >= i
        return nll, np.concatenate([gb, [gz.sum()], tail[1:] * steps])

    t0 = np.concatenate([np.zeros(p), [zeta0[0]], np.log(np.diff(zeta0))])
    res = minimize(objective, t0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "ftol": 1e-14, "gtol": 1e-10})
    beta, zeta = unpack(res.x)
    nll = float(res.fun)
    # Newton steps in (beta, zeta) reach the maximum itself (L-BFGS stops on relative change)
    converged = bool(res.success)
    for _ in range(20):
        h = _hessian(beta, zeta, xs, y)
        g = np.concatenate(_negloglik(beta, zeta, xs, y)[1:])
        try:
            step = np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            break
        nb, nz = beta - step[:p], zeta - step[p:]
        if np.any(np.diff(nz) <= 0):
            break
        cand = _negloglik(nb, nz, xs, y)[0]
        if not np.isfinite(cand) or cand > nll + 1e-12 * abs(nll):
            break
        done = nll - cand <= 1e-13 * (abs(nll) + 1.0)
        beta, zeta, nll = nb, nz, cand
        converged = True
        if done:
            break
    h = _hessian(beta, zeta, xs, y)
    try:
        vcov = np.linalg.inv(h)
    except np.linalg.LinAlgError:
        vcov = np.linalg.pinv(h)
    unscale = np.concatenate([1.0 / scale, np.ones(k - 1)])
    vcov = vcov * unscale[:, None] * unscale[None, :]
    return PolrModel(beta / scale, zeta, present.astype(np.int64), vcov, int(n_codes), -nll, converged)
