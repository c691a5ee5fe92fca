"""The table layer: variables, sparse count tables, flat-index arithmetic."""

from ._flat import INDEX_DTYPE, group_sum, n_cells_checked, ravel, strides, unravel
from ._table import DEFAULT_MAX_DENSE_CELLS, CountTable
from ._variable import Variable

__all__ = [
    "CountTable",
    "Variable",
    "DEFAULT_MAX_DENSE_CELLS",
    "INDEX_DTYPE",
    "group_sum",
    "n_cells_checked",
    "ravel",
    "strides",
    "unravel",
]
