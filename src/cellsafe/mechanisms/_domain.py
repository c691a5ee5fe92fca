"""The synthesis domain of the fixed-total DP synthesizers (multinomial-Dirichlet, Poisson-gamma).

A fixed-total synthesizer with a positive prior on every cell can put events in any
non-structural cell, so it has to visit all of them (block by block: see
:mod:`cellsafe.mechanisms._fixed_total`).  The functions here check such tables and parameters and
list or densify their non-structural cells.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .._validation import check_real
from ..exceptions import DataError, InvalidArgumentError, TableTooLargeError
from ..table import INDEX_DTYPE, CountTable, check_table

__all__ = [
    "DEFAULT_MAX_SYNTH_CELLS",
    "check_domain_size",
    "dense_block",
    "check_integer_table",
    "check_positive_values",
    "dense_outputs",
    "non_structural_index",
]

#: The largest number of non-structural cells a full-domain synthesizer accepts by default.
DEFAULT_MAX_SYNTH_CELLS = 50_000_000


def check_integer_table(table: CountTable, owner: str) -> None:
    """Refuse anything but a CountTable, fitted (fractional) tables and empty ones."""
    check_table(table, owner)
    if not table.is_integer:
        raise DataError(f"{owner} needs integer counts; this table holds fractional (fitted) counts.")
    if table.total <= 0:
        raise DataError(f"{owner} needs a table with a positive total; this one is empty.")


def check_positive_values(value: Any, name: str, owner: str, *, table_allowed: bool = False) -> None:
    """Accept one positive finite number or a non-empty 1-d array of them (a CountTable too, if allowed)."""
    if table_allowed and isinstance(value, CountTable):
        return
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        check_real(value, name, owner, low=0.0, low_open=True, high=math.inf, high_open=True)
        return
    try:
        arr = None if isinstance(value, str) else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 1 or arr.size == 0:
        array = "a one-dimensional array of positive floats (one per cell)"
        kinds = f"a positive float, {array} or a CountTable" if table_allowed else f"a positive float or {array}"
        raise InvalidArgumentError(f"The {name!r} parameter of {owner} must be {kinds}. Got {value!r} instead.")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise InvalidArgumentError(
            f"The {name!r} parameter of {owner} must hold positive finite values. Got {arr[j]!r} at position {j}."
        )


def check_domain_size(table: CountTable, max_cells: int, owner: str) -> int:
    """The number of non-structural cells, or TableTooLargeError above ``max_cells``."""
    k = table.n_cells - table.n_structural_zeros
    if k > max_cells:
        raise TableTooLargeError(
            f"{owner} draws a count for every non-structural cell (a positive prior makes every cell "
            f"possible), and this table has {float(k):.3g} of them, more than max_cells={max_cells:.3g}. "
            "Use fewer variables or merge categories, declare impossible cells as structural zeros, "
            "or raise max_cells if the time is acceptable."
        )
    return k


def dense_block(table: CountTable, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts of cells [lo, hi) as a dense float array, and a mask of the non-structural ones."""
    idx, cnt = table.index, table.counts
    p0, p1 = np.searchsorted(idx, [lo, hi])
    y = np.zeros(hi - lo, dtype=np.float64)
    y[idx[p0:p1] - lo] = cnt[p0:p1]
    ok = np.ones(hi - lo, dtype=bool)
    sz = table.structural_zeros
    if sz.size:
        s0, s1 = np.searchsorted(sz, [lo, hi])
        ok[sz[s0:s1] - lo] = False
    return y, ok


def dense_outputs(z: Any, table: CountTable, dtype: Any) -> np.ndarray:
    """Candidate outputs ``z`` as an array (..., K) of dense counts over the table's K cells (small tables only)."""
    if table.n_cells > 10**6:
        raise TableTooLargeError("log_pmf builds dense vectors over all K cells; use it on small tables.")
    z = np.asarray(z, dtype=dtype)
    if z.ndim == 0 or z.shape[-1] != table.n_cells:
        raise InvalidArgumentError(f"z must have {table.n_cells} counts in its last axis. Got shape {z.shape}.")
    return z


def non_structural_index(table: CountTable) -> np.ndarray:
    """Flat indices of every non-structural cell (call only after :func:`check_domain_size`)."""
    all_idx = np.arange(table.n_cells, dtype=INDEX_DTYPE)
    if table.n_structural_zeros:
        possible = np.ones(table.n_cells, dtype=bool)
        possible[table.structural_zeros] = False
        all_idx = all_idx[possible]
    return all_idx
