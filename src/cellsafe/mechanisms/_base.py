"""Base classes of protection mechanisms.

A :class:`Mechanism` turns a table into protected tables (``sample(table, m=1, rng=None)``).
A :class:`CellwiseMechanism` applies the same random map to every cell independently, so it can
state its **transition probabilities** P(k | j): the probability that a cell of original count j
(0 meaning a random zero) is released as k.  Those probabilities are all the a priori metrics,
the tuning searches and the transition plots need; saturated synthesis and the cell key method
both provide them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .._random import RNGLike
from ..table import CountTable

__all__ = ["Mechanism", "CellwiseMechanism"]


class Mechanism(ABC):
    """A random map from an original table to protected tables."""

    @abstractmethod
    def sample(self, table: CountTable, m: int = 1, rng: RNGLike = None) -> list[CountTable]:
        """Draw ``m`` protected tables (implicates) from ``table``."""


class CellwiseMechanism(Mechanism):
    """A mechanism that maps each cell's count independently through P(k | j).

    Subclasses implement :meth:`transition_pmf` and :meth:`transition_sf`; the rest has
    generic, vectorized defaults that subclasses may override with closed forms.
    """

    @abstractmethod
    def transition_pmf(self, k: Any, j: Any) -> np.ndarray:
        """P(released = k | original = j), broadcasting ``k`` against ``j`` (non-negative ints)."""

    @abstractmethod
    def transition_sf(self, k: Any, j: Any) -> np.ndarray:
        """P(released > k | original = j), computed directly (never as 1 - cdf)."""

    def transition_support(self, j: Any, tol: float = 1e-12) -> np.ndarray:
        """For each j, the smallest k with P(released > k | j) <= tol (an int64 array)."""
        j = np.atleast_1d(np.asarray(j, dtype=np.int64))
        hi = np.maximum(2 * j + 8, 16)
        for _ in range(64):
            bad = self.transition_sf(hi, j) > tol
            if not bad.any():
                break
            hi = np.where(bad, hi * 2, hi)
        lo = np.zeros_like(hi)
        # bisection on the monotone sf: lo has sf > tol (or is 0), hi has sf <= tol
        while np.any(hi - lo > 1):
            mid = (lo + hi) // 2
            ok = self.transition_sf(mid, j) <= tol
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        ok0 = self.transition_sf(np.zeros_like(hi), j) <= tol
        return np.where(ok0, 0, hi)

    def transition_matrix(self, j: Any, k_max: int | None = None, tol: float = 1e-12) -> np.ndarray:
        """Rows P(k | j) for k = 0..k_max (``k_max`` defaults to the largest support over ``j``)."""
        j = np.atleast_1d(np.asarray(j, dtype=np.int64))
        if k_max is None:
            k_max = int(self.transition_support(j, tol).max())
        k = np.arange(k_max + 1)
        return self.transition_pmf(k[None, :], j[:, None])

    def transition_mean(self, j: Any, tol: float = 1e-12) -> np.ndarray:
        """E[released | original = j] by summation over the support."""
        p = self.transition_matrix(j, tol=tol)
        return p @ np.arange(p.shape[1])

    def transition_var(self, j: Any, tol: float = 1e-12) -> np.ndarray:
        """Var[released | original = j] by summation over the support."""
        p = self.transition_matrix(j, tol=tol)
        k = np.arange(p.shape[1])
        mean = p @ k
        return p @ (k.astype(float) ** 2) - mean**2
