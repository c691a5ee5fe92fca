"""Post-processing of differentially private releases (002 section 7.7.5: it costs no budget).

- :func:`clip_negative`: negative counts to zero.
- :func:`round_to_total`: integers that keep a given total (largest remainders).
- :func:`make_counts`: both, the usual finishing step for noisy counts.
- :func:`restore_additivity`: consistency with published margins by non-negative least squares,
  delegated to :func:`cellsafe.fitting.nnls.restore_additivity` (its one home).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InvalidArgumentError
from ..fitting.nnls import restore_additivity  # one home: re-exported for post-processing

__all__ = ["clip_negative", "round_to_total", "make_counts", "restore_additivity"]


def clip_negative(values: Any) -> np.ndarray:
    """Replace negative values by 0 (a copy)."""
    v = np.asarray(values)
    return np.maximum(v, 0).astype(v.dtype, copy=False)


def round_to_total(values: Any, total: int | None = None) -> np.ndarray:
    """Round non-negative values to integers summing to ``total`` (default: their rounded sum).

    Values are first scaled to ``total`` when their sum differs, then floored, and the units still
    missing go to the largest fractional parts (ties to the lower index).

    Examples
    --------
    >>> round_to_total([0.4, 1.4, 2.2]).tolist()
    [1, 1, 2]
    """
    v = np.asarray(values, dtype=float).ravel()
    if v.size and (np.any(v < 0) or not np.all(np.isfinite(v))):
        raise InvalidArgumentError("round_to_total needs finite non-negative values; clip negatives first.")
    s = float(v.sum())
    target = int(round(s)) if total is None else int(total)
    if target < 0:
        raise InvalidArgumentError(f"total must be non-negative. Got {total}.")
    if v.size == 0:
        if target:
            raise InvalidArgumentError("cannot distribute a positive total over no values.")
        return np.zeros(0, dtype=np.int64)
    if s > 0 and target != s:
        v = (v / s) * target  # v / s <= 1 first: no overflow for tiny sums
    elif s == 0 and target:
        v = np.full(v.size, target / v.size)
    fl = np.floor(v)
    missing = target - int(fl.sum())
    out = fl.astype(np.int64)
    if missing > 0:
        order = np.argsort(-(v - fl), kind="stable")[:missing]
        out[order] += 1
    elif missing < 0:  # only from rounding error of the scaling
        order = np.argsort(v - fl, kind="stable")
        order = order[out[order] > 0][:-missing]
        out[order] -= 1
    return out.reshape(np.shape(values))


def make_counts(values: Any, total: int | None = None) -> np.ndarray:
    """Non-negative integers from noisy counts: clip, then round keeping ``total`` if given."""
    return round_to_total(clip_negative(np.asarray(values, dtype=float)), total)


