"""Public bins of a numeric variable: the cut points a data holder gives, never read from the records.

A numeric column (age, income, hours) enters a table or a marginal release through intervals
whose edges are public.  :class:`Bins` holds the edges and names the intervals; a value x falls in
interval i when edges[i] <= x < edges[i + 1], and the last interval is closed on the right, so the
bins cover [edges[0], edges[-1]] exactly.  A value outside them is outside the public domain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..exceptions import InvalidArgumentError

__all__ = ["Bins"]


def _num(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class Bins:
    """Intervals of a numeric variable from public edges.

    Parameters
    ----------
    edges : sequence of float
        At least two finite, strictly increasing numbers.
    labels : sequence of str, optional
        One name per interval; default ``"[a, b)"`` (``"[a, b]"`` for the last).

    Examples
    --------
    >>> b = Bins([0, 18, 65, 120])
    >>> b.labels
    ('[0, 18)', '[18, 65)', '[65, 120]')
    >>> b.codes([17, 18, 120, 121, float("nan")]).tolist()
    [0, 1, 2, -1, -1]
    """

    edges: tuple[float, ...]
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        try:
            edges = tuple(float(e) for e in self.edges)
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"Bins takes a sequence of numbers as edges. Got {self.edges!r}.") from None
        if len(edges) < 2 or not all(math.isfinite(e) for e in edges):
            raise InvalidArgumentError(f"Bins needs at least two finite edges. Got {self.edges!r}.")
        if any(b <= a for a, b in zip(edges, edges[1:])):
            raise InvalidArgumentError(f"the edges of Bins must increase strictly. Got {list(self.edges)!r}.")
        labels = tuple(str(lab) for lab in self.labels) if self.labels else tuple(
            f"[{_num(a)}, {_num(b)}{']' if i == len(edges) - 2 else ')'}" for i, (a, b) in enumerate(zip(edges, edges[1:]))
        )
        if len(labels) != len(edges) - 1 or len(set(labels)) != len(labels):
            raise InvalidArgumentError(f"Bins needs one distinct label per interval ({len(edges) - 1}). Got {list(self.labels)!r}.")
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "labels", labels)

    @property
    def size(self) -> int:
        """The number of intervals."""
        return len(self.edges) - 1

    def codes(self, values: Sequence[Any]) -> np.ndarray:
        """The interval of each value (0 .. size-1), -1 outside the bins or not a number."""
        x = np.asarray(_as_numbers(values), dtype=np.float64)
        e = np.asarray(self.edges)
        code = np.searchsorted(e, x, side="right") - 1
        code = np.where(x == e[-1], self.size - 1, code)
        bad = ~np.isfinite(x) | (x < e[0]) | (x > e[-1])
        return np.where(bad, -1, code).astype(np.int64)

    def to_json(self) -> dict[str, Any]:
        """``{"bins": edges}`` (and ``"labels"`` when not the default), as a domain file writes it."""
        out: dict[str, Any] = {"bins": [int(e) if e == int(e) else e for e in self.edges]}
        if self.labels != Bins(self.edges).labels:
            out["labels"] = list(self.labels)
        return out


def _as_numbers(values: Sequence[Any]) -> list[float]:
    out = []
    for v in values:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(math.nan)
    return out
