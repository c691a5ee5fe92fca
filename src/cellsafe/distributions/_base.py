"""The shared interface of cellsafe's count distributions.

Every family is parameterized by its mean ``mu`` (per cell) and fixed shape parameters
(``sigma``, ``nu``) as in R's gamlss.dist.  Public methods broadcast ``k`` against ``mu`` and
return numpy arrays (or scalars for scalar input); subclasses implement the maths in log space.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .._random import RNGLike

__all__ = ["CountDistribution"]


class CountDistribution(ABC):
    """A family of distributions on {0, 1, 2, ...} indexed by the mean ``mu``.

    Subclasses are immutable value objects (frozen dataclasses) validated on construction.
    """

    #: Short lower-case name used by the CLI (``poisson``, ``nbi``, ``pig``, ``gaf``).
    name: str = ""

    @abstractmethod
    def logpmf(self, k: Any, mu: Any) -> Any:
        """log P(X = k | mu)."""

    def pmf(self, k: Any, mu: Any) -> Any:
        """P(X = k | mu)."""
        return np.exp(self.logpmf(k, mu))

    @abstractmethod
    def cdf(self, k: Any, mu: Any) -> Any:
        """P(X <= k | mu)."""

    @abstractmethod
    def sf(self, k: Any, mu: Any) -> Any:
        """P(X > k | mu), computed directly (never as 1 - cdf)."""

    @abstractmethod
    def sample(self, mu: Any, rng: RNGLike = None) -> np.ndarray:
        """One independent draw per element of ``mu`` (int64 array of mu's shape)."""

    @abstractmethod
    def mean(self, mu: Any) -> Any:
        """E[X | mu]."""

    @abstractmethod
    def var(self, mu: Any) -> Any:
        """Var[X | mu]."""

    def params(self) -> dict[str, float]:
        """The shape parameters as a dict (for reports and JSON)."""
        return {}
