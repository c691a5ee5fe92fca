"""The one check that an argument is a CountTable, and the one check that two tables share their variables.

Every public function that takes tables calls these, so the messages read the same everywhere.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import DataError, InvalidArgumentError
from ._table import CountTable

__all__ = ["check_table", "check_same_variables"]


def check_table(table: Any, owner: str, name: str = "table") -> CountTable:
    """Return ``table`` if it is a :class:`CountTable`, else raise InvalidArgumentError.

    Parameters
    ----------
    table : object
        The argument to check.
    owner : str
        The function or method that received it, named in the message.
    name : str, default "table"
        The parameter's name, named in the message.

    Returns
    -------
    CountTable
        ``table`` itself.

    Raises
    ------
    InvalidArgumentError
        When ``table`` is anything else (a file name, a DataFrame, a list...).

    Examples
    --------
    >>> from cellsafe.table import CountTable, Variable
    >>> t = CountTable([Variable("a", ["x", "y"])], [0, 1], [3, 4])
    >>> check_table(t, "ipf") is t
    True
    >>> check_table("counts.csv", "ipf")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cellsafe.exceptions.InvalidArgumentError: The 'table' parameter of ipf must be a cellsafe CountTable. Got str ...
    """
    if not isinstance(table, CountTable):
        raise InvalidArgumentError(
            f"The {name!r} parameter of {owner} must be a cellsafe CountTable. Got {type(table).__name__} instead. "
            "Build one with CountTable.from_frame(df, variables, count=...) or cellsafe.io."
        )
    return table


def check_same_variables(table: CountTable, reference: CountTable, what: str, against: str = "the original") -> None:
    """Raise DataError unless ``table`` has the variables and categories of ``reference``, in the same order.

    Two tables can be compared cell by cell only when their flat indices mean the same cells, that
    is when their variables, the categories of each and their order all agree.

    Parameters
    ----------
    table : CountTable
        The table to check.
    reference : CountTable
        The table it must match.
    what : str
        How to name ``table`` in the message, e.g. ``"synthetic table 2"`` or ``"the population table"``.
    against : str, default "the original"
        How to name ``reference`` in the message.

    Raises
    ------
    DataError
        Naming the first difference: the variables, or the categories of one variable.

    Examples
    --------
    >>> from cellsafe.table import CountTable, Variable
    >>> a = CountTable([Variable("sex", ["F", "M"])], [0], [2])
    >>> b = CountTable([Variable("sex", ["M", "F"])], [0], [2])
    >>> check_same_variables(a, a, "synthetic table 0")
    >>> check_same_variables(b, a, "synthetic table 0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cellsafe.exceptions.DataError: synthetic table 0 ... the categories of 'sex' are ('M', 'F') against ('F', 'M')...
    """
    if table.variables == reference.variables:
        return
    if table.names != reference.names:
        diff = f"variables {table.names} against {reference.names}"
    else:
        got, want = next((g, w) for g, w in zip(table.variables, reference.variables) if g != w)
        diff = f"the categories of {got.name!r} are {_show(got.categories)} against {_show(want.categories)}"
    raise DataError(
        f"{what} does not have the variables and categories of {against}: {diff}. Build both tables on the "
        "same variables, e.g. CountTable.from_frame(df, list(original.variables), count=...)."
    )


def _show(categories: tuple) -> str:
    if len(categories) <= 8:
        return repr(categories)
    return f"({', '.join(map(repr, categories[:4]))}, ...) [{len(categories)}]"
