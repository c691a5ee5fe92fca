"""Small ``check_*`` helpers used at every public boundary.

They raise :class:`~cellsafe.exceptions.InvalidArgumentError` with one message
template: which parameter of which object, the allowed range, and the value received.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

from .exceptions import InvalidArgumentError

__all__ = [
    "check_real",
    "check_integer",
    "check_probability",
    "check_in",
    "check_counts",
]

if TYPE_CHECKING:
    import numpy as np


def _fmt_interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    return f"{left}{low:g}, {high:g}{right}"


def check_real(
    value: Any,
    name: str,
    owner: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a float after checking it is a finite-or-allowed real in the range."""
    interval = _fmt_interval(low, high, low_open or low == -math.inf, high_open or high == math.inf)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(
            f"The {name!r} parameter of {owner} must be a float in {interval}. Got {value!r} instead."
        )
    x = float(value)
    bad = (
        math.isnan(x)
        or x < low
        or x > high
        or (low_open and x == low)
        or (high_open and x == high)
        or (math.isinf(x) and not (x == low or x == high))
    )
    if bad:
        raise InvalidArgumentError(
            f"The {name!r} parameter of {owner} must be a float in {interval}. Got {value!r} instead."
        )
    return x


def check_integer(value: Any, name: str, owner: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer within ``[low, high]``."""
    lo = "-inf" if low is None else str(low)
    hi = "inf" if high is None else str(high)
    msg = f"The {name!r} parameter of {owner} must be an int in [{lo}, {hi}]. Got {value!r} instead."
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):  # numpy's integers too
        raise InvalidArgumentError(msg)
    x = int(value)
    if (low is not None and x < low) or (high is not None and x > high):
        raise InvalidArgumentError(msg)
    return x


def check_probability(value: Any, name: str, owner: str) -> float:
    """A float in [0, 1]."""
    return check_real(value, name, owner, low=0.0, high=1.0)


def check_in(value: Any, name: str, owner: str, allowed: tuple[str, ...]) -> str:
    """A string among ``allowed`` (case-insensitive); returns the canonical lower-case spelling."""
    if isinstance(value, str) and value.lower() in allowed:
        return value.lower()
    raise InvalidArgumentError(
        f"The {name!r} parameter of {owner} must be one of {', '.join(map(repr, allowed))}. Got {value!r} instead."
    )


def check_counts(values: Any, name: str, owner: str, *, negative_ok: bool = False) -> "np.ndarray":
    """``values`` as an int64 array after checking they are whole numbers (>= 0 unless ``negative_ok``).

    Whole floats (``2.0``) are accepted; ``1.5``, NaN, infinities, booleans, text and negative counts
    are refused with the first offending value.
    """
    import numpy as np

    a = np.asarray(values)
    if a.dtype == object:
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"{owner}: {name} must be integer counts. Got {values!r}.") from None
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise InvalidArgumentError(f"{owner}: {name} must be integer counts. Got values of type {a.dtype}.")
    if np.issubdtype(a.dtype, np.floating):
        bad = ~np.isfinite(a) | (a != np.floor(a)) | (np.abs(a) > 2.0**62)
        if bad.any():
            raise InvalidArgumentError(f"{owner}: {name} must be integer counts. Got {float(a[bad].flat[0])!r}.")
        a = a.astype(np.int64)
    elif a.dtype == np.uint64 and a.size and int(a.max()) > np.iinfo(np.int64).max:
        raise InvalidArgumentError(f"{owner}: {name} must fit 64-bit integers. Got {int(a.max())}.")
    else:
        a = a.astype(np.int64, copy=False)
    if not negative_ok and a.size and int(a.min()) < 0:
        raise InvalidArgumentError(f"{owner}: {name} must be counts >= 0. Got {int(a.min())}.")
    return a
