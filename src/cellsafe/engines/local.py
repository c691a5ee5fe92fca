"""The local engine: DuckDB aggregates, numpy runs the per-block kernels in this process.

A thin layer over the public API with the Spark engine's signatures, so a caller can switch
engines without changing its calls; the numbers are those of :meth:`CountTable.from_microdata`
and ``mechanism.sample``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from .._random import RNGLike
from ..io import ensure_writable_dir, write_frame
from ..mechanisms import CellwiseMechanism
from ..table import CountTable, TableDescription, describe

__all__ = ["aggregate", "synthesize", "cell_sizes", "describe_table"]


def aggregate(source: Any, variables: Any, *, count: str | None = None, structural_zeros: Any = None) -> CountTable:
    """The table of a CSV/Parquet file (aggregated by DuckDB) or of a frame of records."""
    return CountTable.from_microdata(source, variables, count=count, structural_zeros=structural_zeros)


def synthesize(
    table: CountTable, mechanism: CellwiseMechanism, m: int, rng: RNGLike, output: str | os.PathLike[str],
    *, fmt: str = "parquet", progress: bool = False,
) -> list[str]:
    """Write ``m`` implicates as ``output/synthetic_1.<fmt>`` ... (variables and ``count``, non-zero cells)."""
    out = ensure_writable_dir(output)
    paths = []
    for i, syn in enumerate(mechanism.sample(table, m=m, rng=rng, progress=progress), start=1):
        paths.append(str(write_frame(syn.to_frame(), Path(out) / f"synthetic_{i}.{fmt}", fmt)))
    return paths


def cell_sizes(table: CountTable) -> pd.Series:
    """The cell-size distribution (count -> number of non-structural cells, zeros included)."""
    return table.cell_sizes()


def describe_table(table: CountTable) -> TableDescription:
    """:func:`cellsafe.table.describe`."""
    return describe(table)
