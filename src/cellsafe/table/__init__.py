"""The table layer: variables, sparse count tables, flat-index arithmetic."""

from ._keyed import KeyedTable, keyed_table
from ._checks import check_same_variables, check_table
from ._describe import TableDescription, describe
from ._flat import (
    INDEX_DTYPE,
    align_counts,
    group_sum,
    n_cells_checked,
    ravel,
    sorted_union,
    sorted_unique,
    strides,
    unravel,
)
from ._table import DEFAULT_MAX_DENSE_CELLS, CountTable, count_column_name, encode_cells
from ._variable import Variable
from ._public import OUTSIDE_CHOICES, Domain, public_table
from ._bins import Bins
from .hierarchy import Hierarchy

__all__ = [
    "Bins",
    "count_column_name",
    "CountTable",
    "Variable",
    "Domain",
    "public_table",
    "OUTSIDE_CHOICES",
    "Hierarchy",
    "check_table",
    "describe",
    "TableDescription",
    "check_same_variables",
    "DEFAULT_MAX_DENSE_CELLS",
    "encode_cells",
    "KeyedTable",
    "keyed_table",
    "INDEX_DTYPE",
    "align_counts",
    "group_sum",
    "n_cells_checked",
    "ravel",
    "sorted_union",
    "sorted_unique",
    "strides",
    "unravel",
]
