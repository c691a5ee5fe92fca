"""What a table holds before anything is released: its size, its sparsity and its small cells.

Everything here is a function of the variables and the cell-size distribution (the number of
cells w_j with each count j), so a distributed engine that computes only that distribution
describes a table it never brings to one machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._frames import pd
from .._results import Result
from ..exceptions import InvalidArgumentError
from ._table import CountTable
from ._variable import Variable

__all__ = ["TableDescription", "describe"]


@dataclass(frozen=True)
class TableDescription(Result):
    """Size, sparsity and small cells of a table (the risk an intruder sees in the original).

    Attributes
    ----------
    n_cells : int
        K, the number of possible cells: the product of the numbers of categories.
    n_structural_zeros : int
        Impossible cells (never counted in the cells below).
    nnz : int
        Cells with a non-zero count.
    uniques : int
        Cells of count 1 (population or sample uniques).
    total : int
        The grand total (records).
    records_in_1, records_in_2, records_in_5 : int
        Records in cells of count 1, of count 2, and of count at most 5.
    categories : dict of str to int
        Number of categories of each variable, in table order.
    cell_sizes : pandas.Series
        Number of non-structural cells with each count (zeros included), indexed by the count.
    """

    n_cells: int
    n_structural_zeros: int
    nnz: int
    uniques: int
    total: int
    records_in_1: int
    records_in_2: int
    records_in_5: int
    categories: dict
    cell_sizes: pd.Series

    @classmethod
    def from_cell_sizes(
        cls, variables: Sequence[Variable], cell_sizes: pd.Series, n_structural_zeros: int = 0
    ) -> "TableDescription":
        """The description from the variables and a cell-size distribution (count -> cells, zeros optional).

        Random zeros are K - (non-zero cells) - (structural zeros) whatever the distribution says
        about count 0, so an engine may omit them.
        """
        variables = tuple(variables)
        if not all(isinstance(v, Variable) for v in variables) or not variables:
            raise InvalidArgumentError("TableDescription needs a non-empty sequence of cellsafe.Variable.")
        values = np.asarray(cell_sizes.index, dtype=np.int64)
        cells = np.asarray(cell_sizes.to_numpy(), dtype=np.int64)
        positive = values > 0
        values, cells = values[positive], cells[positive]
        order = np.argsort(values, kind="stable")
        values, cells = values[order], cells[order]
        n_cells = math.prod(v.size for v in variables)
        nnz = int(cells.sum())
        zeros = n_cells - nnz - int(n_structural_zeros)
        if zeros < 0:
            raise InvalidArgumentError(
                f"the cell-size distribution has {nnz} non-zero cells, more than the {n_cells} possible cells less "
                f"{n_structural_zeros} structural zeros."
            )
        records = values * cells

        def rec(mask: np.ndarray) -> int:
            return int(records[mask].sum())

        sizes = pd.Series(
            np.r_[np.array([zeros] if zeros else [], dtype=np.int64), cells],
            index=pd.Index(np.r_[np.array([0] if zeros else [], dtype=np.int64), values], name="count"),
            name="cells",
        )
        return cls(
            n_cells=int(n_cells),
            n_structural_zeros=int(n_structural_zeros),
            nnz=nnz,
            uniques=int(cells[values == 1].sum()),
            total=int(records.sum()),
            records_in_1=rec(values == 1),
            records_in_2=rec(values == 2),
            records_in_5=rec(values <= 5),
            categories={v.name: v.size for v in variables},
            cell_sizes=sizes,
        )

    @property
    def sparsity(self) -> float:
        """Share of the non-structural cells that are zero."""
        open_cells = self.n_cells - self.n_structural_zeros
        return 1.0 - self.nnz / open_cells if open_cells else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_cells": self.n_cells,
            "n_structural_zeros": self.n_structural_zeros,
            "nnz": self.nnz,
            "sparsity": self.sparsity,
            "uniques": self.uniques,
            "total": self.total,
            "records_in_cells_of_1": self.records_in_1,
            "records_in_cells_of_2": self.records_in_2,
            "records_in_cells_of_at_most_5": self.records_in_5,
            "categories": dict(self.categories),
            "cell_sizes": {str(int(k)): int(v) for k, v in self.cell_sizes.items()},
        }

    def to_frame(self) -> pd.DataFrame:
        """The cell-size distribution: count, cells, records, and the cumulative share of records."""
        cells = self.cell_sizes.to_numpy()
        values = self.cell_sizes.index.to_numpy()
        records = values * cells
        total = records.sum()
        return pd.DataFrame(
            {
                "count": values,
                "cells": cells,
                "records": records,
                "cumulative_share_of_records": np.cumsum(records) / total if total else np.full(values.size, math.nan),
            }
        )

    def _title(self) -> str:
        return "Table description"

    def summary(self) -> str:
        d = self.to_dict()
        cats = ", ".join(f"{k} {v}" for k, v in self.categories.items())
        sizes = self.cell_sizes
        shown = sizes[sizes.index <= 10]
        lines = [
            self._title(),
            "-" * len(self._title()),
            f"possible cells        {self.n_cells:,} ({cats})",
            f"structural zeros      {self.n_structural_zeros:,}",
            f"non-zero cells        {self.nnz:,} (sparsity {d['sparsity']:.4f})",
            f"records               {self.total:,}",
            f"uniques (count 1)     {self.uniques:,}",
            f"records in cells of 1 {self.records_in_1:,}; of 2 {self.records_in_2:,}; of <= 5 {self.records_in_5:,}",
            "cell sizes (count: cells) " + ", ".join(f"{int(k)}: {int(v):,}" for k, v in shown.items())
            + (f", ... ({int(sizes[sizes.index > 10].sum()):,} cells above 10)" if (sizes.index > 10).any() else ""),
        ]
        return "\n".join(lines)


def describe(table: CountTable) -> TableDescription:
    """Describe a table: its possible and non-zero cells, uniques, small cells and cell-size distribution.

    Parameters
    ----------
    table : CountTable
        A frequency table with integer counts.

    Returns
    -------
    TableDescription

    Notes
    -----
    The cell-size distribution w_j (003 section 3.3: tau2(j) = w_j / K) says how many cells an
    intruder could single out (uniques, j = 1) and how many records they hold; every number here
    follows from it and the variables.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["F", "M", "F"], "age": ["old", "young", "old"]})
    >>> d = describe(CountTable.from_frame(df, ["sex", "age"]))
    >>> d.n_cells, d.nnz, d.uniques, d.records_in_1, d.records_in_5
    (4, 2, 1, 1, 3)
    """
    if not isinstance(table, CountTable):
        raise InvalidArgumentError(f"describe needs a cellsafe.CountTable. Got {type(table).__name__} instead.")
    if not table.is_integer:
        raise InvalidArgumentError("describe needs a table of integer counts; this one holds fitted (fractional) counts.")
    return TableDescription.from_cell_sizes(table.variables, table.cell_sizes(), table.n_structural_zeros)
