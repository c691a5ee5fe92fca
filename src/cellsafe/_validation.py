"""Small ``check_*`` helpers used at every public boundary.

They raise :class:`~cellsafe.exceptions.InvalidArgumentError` with one message
template: which parameter of which object, the allowed range, and the value received.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .exceptions import InvalidArgumentError

__all__ = [
    "check_real",
    "check_integer",
    "check_probability",
    "check_in",
]


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
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
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
