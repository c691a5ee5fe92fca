"""Exact verification of a synthesizer's epsilon by enumeration on small tables.

For a table with a handful of cells and a small total, every input y with that total, every
neighbour x (one event moved from one cell to another, total fixed) and every output z are
enumerated, and the exact privacy loss max |log p(z | y) - log p(z | x)| is compared with the
epsilon the mechanism claims.  The mechanism needs ``log_pmf(z, table)`` (exact log probability of
dense outputs) and ``epsilon(table)``; both fixed-total synthesizers of cellsafe provide them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._results import Result, json_ready
from ..exceptions import InvalidArgumentError, TableTooLargeError
from ..table import CountTable

__all__ = ["verify_epsilon", "EpsilonVerification", "compositions"]

#: Refuse enumerations with more inputs than this (each costs one pass over all outputs).
MAX_INPUTS = 20_000


@dataclass(frozen=True)
class EpsilonVerification(Result):
    """The outcome of :func:`verify_epsilon`.

    Attributes
    ----------
    epsilon : float
        The exact privacy loss over all enumerated neighbours and outputs.
    claimed : float
        The epsilon compared against.
    holds : bool
        ``epsilon <= claimed`` (up to 1e-9).
    worst_y, worst_x, worst_z : ndarray
        Where the loss is largest (counts over the synthesized cells).
    n_inputs, n_outputs : int
        Numbers of enumerated tables.
    """

    epsilon: float
    claimed: float
    holds: bool
    worst_y: np.ndarray
    worst_x: np.ndarray
    worst_z: np.ndarray
    n_inputs: int
    n_outputs: int

    def to_dict(self) -> dict[str, Any]:
        return json_ready(
            {
                "epsilon": self.epsilon,
                "claimed": self.claimed,
                "holds": self.holds,
                "worst_y": self.worst_y,
                "worst_x": self.worst_x,
                "worst_z": self.worst_z,
                "n_inputs": self.n_inputs,
                "n_outputs": self.n_outputs,
            }
        )

    def __repr__(self) -> str:
        verdict = "holds" if self.holds else "VIOLATED"
        return (
            f"EpsilonVerification(exact={self.epsilon:.6g}, claimed={self.claimed:.6g}, {verdict}, "
            f"worst y={self.worst_y.tolist()} x={self.worst_x.tolist()} z={self.worst_z.tolist()})"
        )


def compositions(total: int, parts: int) -> np.ndarray:
    """All vectors of ``parts`` non-negative integers summing to ``total`` (stars and bars)."""
    rows = []
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = (-1,) + bars + (total + parts - 1,)
        rows.append([edges[k + 1] - edges[k] - 1 for k in range(parts)])
    return np.array(rows, dtype=np.int64).reshape(-1, parts)


def verify_epsilon(mechanism: Any, table: CountTable, epsilon: float | None = None) -> EpsilonVerification:
    """Compute a fixed-total synthesizer's exact privacy loss on a small table by enumeration.

    Parameters
    ----------
    mechanism : MultinomialDirichletSynthesizer, PoissonGammaSynthesizer or alike
        Anything with ``log_pmf(z, table)``, ``epsilon(table)`` and ``_support_cells(table)``.
    table : CountTable
        A small table: its variables (and population, for the mechanism) define the cells, its
        total the fixed total; its counts are not used.
    epsilon : float, optional
        The claim to check; default ``mechanism.epsilon(table)``.

    Returns
    -------
    EpsilonVerification

    Notes
    -----
    Neighbours move one event between two cells with the total fixed (004 section 1, eq. 1).
    The number of inputs is C(total + I - 1, I - 1) for I cells; keep it to a few thousand.

    Examples
    --------
    >>> from cellsafe import CountTable, Variable
    >>> from cellsafe.mechanisms.dirichlet import MultinomialDirichletSynthesizer
    >>> t = CountTable([Variable("v", ("a", "b", "c"))], [0], [4])
    >>> res = verify_epsilon(MultinomialDirichletSynthesizer.for_epsilon(1.0, 4), t)
    >>> res.holds, round(res.epsilon, 6)
    (True, 1.0)
    """
    cells = np.asarray(mechanism._support_cells(table))
    total = int(table.total)
    n_in = math.comb(total + cells.size - 1, cells.size - 1) if cells.size else 0
    if cells.size < 2:
        raise InvalidArgumentError("verification needs at least two cells that can hold events.")
    if n_in > MAX_INPUTS:
        raise TableTooLargeError(
            f"enumeration would visit {n_in:,} inputs (more than {MAX_INPUTS:,}); use fewer cells or a smaller total."
        )
    claimed = float(mechanism.epsilon(table) if epsilon is None else epsilon)
    comp = compositions(total, cells.size)
    dense = np.zeros((comp.shape[0], table.n_cells), dtype=np.int64)
    dense[:, cells] = comp
    logp = np.empty((comp.shape[0], comp.shape[0]))
    for a, y in enumerate(comp):
        nz = np.flatnonzero(y)
        logp[a] = mechanism.log_pmf(dense, table.with_counts(cells[nz], y[nz]))
    row = {tuple(y): a for a, y in enumerate(comp)}
    best, where = -1.0, (0, 0, 0)
    for a, y in enumerate(comp):
        for i in np.flatnonzero(y):
            for j in range(cells.size):
                if j == i:
                    continue
                x = y.copy()
                x[i] -= 1
                x[j] += 1
                b = row[tuple(x)]
                la, lb = logp[a], logp[b]
                with np.errstate(invalid="ignore"):
                    d = np.abs(la - lb)
                d = np.where(np.isneginf(la) & np.isneginf(lb), 0.0, d)
                k = int(np.argmax(d))
                if d[k] > best:
                    best, where = float(d[k]), (a, b, k)
    a, b, k = where
    return EpsilonVerification(
        epsilon=best,
        claimed=claimed,
        holds=bool(best <= claimed + 1e-9),
        worst_y=comp[a],
        worst_x=comp[b],
        worst_z=comp[k],
        n_inputs=comp.shape[0],
        n_outputs=comp.shape[0],
    )
