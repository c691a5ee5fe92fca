"""Cell-domain helpers shared by the fixed-total DP synthesizers.

A fixed-total synthesizer with a positive prior on every cell can put events in any
non-structural cell, so it has to visit all of them.  These helpers walk the non-structural
cells of a table in blocks of flat indices, so memory stays bounded by the block size.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..exceptions import DataError, TableTooLargeError
from ..table import INDEX_DTYPE, CountTable

__all__ = ["BLOCK", "DEFAULT_MAX_SYNTH_CELLS", "check_domain_size", "blocks", "dense_block", "check_integer_table"]

#: Number of flat indices handled at once (2**20).
BLOCK = 1 << 20

#: The largest number of non-structural cells a full-domain synthesizer accepts by default.
DEFAULT_MAX_SYNTH_CELLS = 50_000_000


def check_integer_table(table: CountTable, owner: str) -> None:
    """Refuse fitted (fractional) tables and empty ones."""
    if not isinstance(table, CountTable):
        raise DataError(f"{owner} needs a cellsafe CountTable. Got {type(table).__name__} instead.")
    if not table.is_integer:
        raise DataError(f"{owner} needs integer counts; this table holds fractional (fitted) counts.")
    if table.total <= 0:
        raise DataError(f"{owner} needs a table with a positive total; this one is empty.")


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


def blocks(n_cells: int, block: int = BLOCK) -> Iterator[tuple[int, int, int]]:
    """(block number, first flat index, end flat index) covering [0, n_cells)."""
    for b, lo in enumerate(range(0, n_cells, block)):
        yield b, lo, min(lo + block, n_cells)


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


def non_structural_index(table: CountTable) -> np.ndarray:
    """Flat indices of every non-structural cell (call only after :func:`check_domain_size`)."""
    all_idx = np.arange(table.n_cells, dtype=INDEX_DTYPE)
    if table.n_structural_zeros:
        all_idx = np.setdiff1d(all_idx, table.structural_zeros, assume_unique=True)
    return all_idx
