"""Non-model methods: draws from the confidential marginal, and kept columns.

``"sample"``
    Each synthetic value is a confidential value drawn with replacement, so categories (and a
    missing value) appear with their confidential relative frequencies (course 002, section
    4.1.1).  It ignores predictors; it is the default for the first variable of a visit sequence.
``"keep"``
    The column is not synthesized: the released records carry its confidential values in their
    original order, and later variables are predicted from them (partial synthesis, 002 section
    2.9).  It needs as many synthetic records as confidential ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import InvalidArgumentError

__all__ = ["MarginalModel", "KeptColumn"]


@dataclass(frozen=True)
class MarginalModel:
    """Draws with replacement from the confidential values."""

    values: np.ndarray = field(repr=False)

    def draw(self, n: Any, gen: np.random.Generator) -> np.ndarray:
        size = n if isinstance(n, (int, np.integer)) else n.shape[0]  # a count, or a predictor matrix
        return self.values[gen.integers(0, self.values.size, size=size)]

    def proba(self, x: np.ndarray) -> np.ndarray:
        """The confidential shares of the codes (categorical values), the same for every record."""
        freq = np.bincount(self.values.astype(np.int64)) / self.values.size
        return np.broadcast_to(freq, (x.shape[0], freq.size)).copy()


@dataclass(frozen=True)
class KeptColumn:
    """The confidential values themselves, in record order."""

    name: str
    values: np.ndarray = field(repr=False)

    def draw(self, n: int, gen: np.random.Generator) -> np.ndarray:
        if n != self.values.size:
            raise InvalidArgumentError(
                f"column {self.name!r} is kept (partial synthesis), so the synthetic data must have as many "
                f"records as the confidential data ({self.values.size}). Got n={n}; leave n unset."
            )
        return self.values.copy()
