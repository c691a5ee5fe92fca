"""cellsafe: statistical disclosure control for categorical data and frequency tables.

Synthesize contingency tables with saturated count models, perturb published tables,
release differentially private counts, and measure risk and utility before and after release.
"""

from . import exceptions
from .exceptions import CellsafeError, DataError, InvalidArgumentError, TableTooLargeError
from .table import CountTable, Variable

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "CountTable",
    "Variable",
    "CellsafeError",
    "DataError",
    "InvalidArgumentError",
    "TableTooLargeError",
    "exceptions",
]
