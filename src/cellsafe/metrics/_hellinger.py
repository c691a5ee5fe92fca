"""Hellinger distance and utility between two vectors of counts (001 eqs. 3-4).

HD(f, g) = sqrt((1/2) sum_i (sqrt f_i - sqrt g_i)^2) and U = 1 - HD(f, g) / sqrt(sum_i f_i),
with f the original and g the protected counts over the same cells.  U = 1 for identical
tables; the normalization by sqrt(n) makes tables of different sizes comparable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import DataError

__all__ = ["hellinger_distance", "hellinger_utility"]


def _pair(f: Any, g: Any) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(f, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    if f.shape != g.shape:
        raise DataError(f"original and protected counts must cover the same cells; got shapes {f.shape} and {g.shape}.")
    if np.any(f < 0) or np.any(g < 0) or not (np.all(np.isfinite(f)) and np.all(np.isfinite(g))):
        raise DataError("Hellinger distance needs finite, non-negative counts.")
    return f, g


def hellinger_distance(f: Any, g: Any) -> float:
    """HD(f, g) = sqrt(0.5 * sum (sqrt f - sqrt g)^2) over aligned cells.

    Examples
    --------
    >>> round(hellinger_distance([4, 0, 9], [4, 1, 9]), 6)
    0.707107
    """
    f, g = _pair(f, g)
    return float(np.sqrt(0.5 * np.sum((np.sqrt(f) - np.sqrt(g)) ** 2)))


def hellinger_utility(f: Any, g: Any) -> float:
    """U = 1 - HD(f, g) / sqrt(sum f)  (001 eq. 4); f the original counts."""
    f, g = _pair(f, g)
    n = f.sum()
    if n <= 0:
        raise DataError("Hellinger utility needs an original table with a positive total.")
    return 1.0 - hellinger_distance(f, g) / float(np.sqrt(n))
