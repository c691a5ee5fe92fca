"""Exceptions and warnings raised by cellsafe.

Every error a user can trigger is a :class:`CellsafeError`.  Errors about an
argument's value are also :class:`ValueError` so that generic code catching
``ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "CellsafeError",
    "InvalidArgumentError",
    "DataError",
    "TableTooLargeError",
    "ConvergenceError",
    "BudgetExceededError",
    "OutputBusyError",
    "WorkTooLongError",
    "CellsafeWarning",
    "ConvergenceWarning",
]


class CellsafeError(Exception):
    """Base class of every error raised on purpose by cellsafe."""


class InvalidArgumentError(CellsafeError, ValueError):
    """A parameter is out of range or of the wrong kind."""


class DataError(CellsafeError, ValueError):
    """Input data are malformed: unknown variables, negative counts, missing values..."""


class OutputBusyError(DataError):
    """Another run is writing the same output: refused at once, never waited for."""


class WorkTooLongError(CellsafeError):
    """A run's work is estimated beyond the limit its caller set (the command line: ten minutes unless --allow-long)."""


class TableTooLargeError(CellsafeError, MemoryError):
    """A table has too many cells for the requested operation (dense view, flat index)."""


class ConvergenceError(CellsafeError, RuntimeError):
    """An iterative algorithm failed to reach its tolerance and the caller asked for strictness."""


class BudgetExceededError(CellsafeError):
    """A release would take the total privacy loss beyond the budget of a privacy accountant."""


class CellsafeWarning(UserWarning):
    """Base class of cellsafe's warnings."""


class ConvergenceWarning(CellsafeWarning):
    """An iterative algorithm stopped at its iteration cap before reaching its tolerance."""
