"""Randomized response (Warner 1965) and its generalization to k categories (002 section 6).

Each respondent reports the true category with probability p and each other category with
probability q = (1 - p) / (k - 1); with p = e^epsilon / (e^epsilon + k - 1) that is epsilon-local DP.
The number reporting category v has expectation n_v p + (n - n_v) q, so
(n_reported - n q) / (p - q) estimates n_v without bias.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._random import RNGLike, as_generator
from .._validation import check_integer, check_real
from ..exceptions import InvalidArgumentError

__all__ = [
    "randomized_response",
    "randomized_response_estimate",
    "randomized_response_probability",
    "randomized_response_epsilon",
]


def randomized_response_probability(epsilon: float, k: int = 2) -> float:
    """The truthful probability p = e^epsilon / (e^epsilon + k - 1) of epsilon-LDP randomized response."""
    eps = check_real(epsilon, "epsilon", "randomized_response_probability", low=0.0, low_open=True)
    k = check_integer(k, "k", "randomized_response_probability", low=2)
    return 1.0 / (1.0 + (k - 1) * math.exp(-eps))


def randomized_response_epsilon(p: float, k: int = 2) -> float:
    """The local privacy loss log(p / q) of truthful probability p with k categories."""
    p = _check_p(p, k, "randomized_response_epsilon")
    return math.log(p * (k - 1) / (1.0 - p))


def _check_p(p: Any, k: int, owner: str) -> float:
    k = check_integer(k, "k", owner, low=2)
    return check_real(p, "p", owner, low=1.0 / k, high=1.0, low_open=True, high_open=True)


def randomized_response(
    values: Any,
    *,
    epsilon: float | None = None,
    p: float | None = None,
    k: int | None = None,
    rng: RNGLike = None,
) -> np.ndarray:
    """Randomize each response: keep it with probability p, else report one of the k - 1 others.

    Parameters
    ----------
    values : array_like of bool or int
        True answers: booleans (binary) or category codes 0..k-1.
    epsilon : float, optional
        Local privacy loss; sets p = e^epsilon / (e^epsilon + k - 1).
    p : float, optional
        The truthful probability instead of epsilon (the course's coin: p = 0.6).
    k : int, optional
        Number of categories (2 for booleans; default max(values) + 1, at least 2).
    rng : None, int, SeedSequence, Generator

    Returns
    -------
    ndarray
        Reported answers, of the input's kind (bool or int64).
    """
    owner = "randomized_response"
    v = np.asarray(values)
    binary = v.dtype == bool
    if not (binary or np.issubdtype(v.dtype, np.integer)):
        try:
            f = v.astype(float)
        except (TypeError, ValueError):
            f = np.array([np.nan])
        if not np.all(np.isfinite(f) & (f == np.floor(f))):
            raise InvalidArgumentError(
                "randomized_response needs category codes 0..k-1 (whole numbers) or booleans; "
                f"got {v.dtype} values that are not all whole numbers."
            )
    codes = v.astype(np.int64)
    if codes.size and codes.min() < 0:
        raise InvalidArgumentError("randomized_response needs category codes 0..k-1 or booleans.")
    if k is None:
        k = 2 if binary or codes.size == 0 else max(2, int(codes.max()) + 1)
    k = check_integer(k, "k", owner, low=2)
    if codes.size and codes.max() >= k:
        raise InvalidArgumentError(f"category code {int(codes.max())} is outside 0..{k - 1}.")
    if (epsilon is None) == (p is None):
        raise InvalidArgumentError("randomized_response needs exactly one of epsilon and p.")
    prob = randomized_response_probability(epsilon, k) if epsilon is not None else _check_p(p, k, owner)
    gen = as_generator(rng)
    lie = gen.random(codes.shape) >= prob
    shift = gen.integers(1, k, size=codes.shape)
    out = np.where(lie, (codes + shift) % k, codes)
    return out.astype(bool) if binary else out


def randomized_response_estimate(n_reported: Any, n: Any, p: float, k: int = 2) -> Any:
    """Unbiased estimate of the true count of a category from randomized responses.

    Parameters
    ----------
    n_reported : int or array_like
        Number of respondents who reported the category (or each category).
    n : int
        Number of respondents.
    p : float
        Probability of a truthful report.
    k : int, default 2
        Number of categories; a false report picks each other one with q = (1 - p) / (k - 1).

    Returns
    -------
    float or ndarray
        (n_reported - n q) / (p - q) (002 section 6, binary randomized response).

    Examples
    --------
    >>> round(randomized_response_estimate(44_166, 100_000, 0.6))
    20830
    """
    p = _check_p(p, k, "randomized_response_estimate")
    q = (1.0 - p) / (k - 1)
    nr = np.asarray(n_reported, dtype=float)
    out = (nr - np.asarray(n, dtype=float) * q) / (p - q)
    return float(out) if out.ndim == 0 else out
