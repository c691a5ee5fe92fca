"""Is a file of records really a frequency table?  The count column a user forgot to name.

R's ``Titanic`` as a data frame has one row per cell and the counts in ``Freq``: read as records,
its 2,201 people become 32, each cell counted once.  A column named ``count`` is taken as the counts
(:func:`~cellsafe.io.count_column_for`); any other name is caught here, after the records are read:
when every row is a different combination of the variables and the file has other columns of whole
numbers (row numbers left out), the reader names them.
"""

from __future__ import annotations

import os
from typing import Sequence

from ._duckdb import _connect, _quote_ident, duckdb_error, file_columns, source_sql

__all__ = ["likely_count_columns", "count_column_hint"]

#: Names of row-number columns written by R and pandas (never counts).
_ROW_NAMES = ("", "rownames", "row.names", "index", "unnamed: 0")


def likely_count_columns(path: "str | os.PathLike[str]", variables: Sequence[str]) -> list[str]:
    """The columns of ``path`` besides ``variables`` that could hold counts: whole numbers >= 0, at least one
    above 1, not a row number (1..n or 0..n-1 in some order, or a column named like R's or pandas' row names)."""
    others = [c for c in file_columns(path) if c not in variables and c.strip().lower() not in _ROW_NAMES]
    if not others:
        return []
    con = _connect()
    try:
        src = source_sql(path, text=True)
        parts = []
        for c in others:
            q = f"CAST({_quote_ident(c)} AS VARCHAR)"
            parts += [
                f"bool_and(regexp_full_match(trim({q}), '[0-9]+'))",
                f"max(TRY_CAST(trim({q}) AS HUGEINT))",
                f"min(TRY_CAST(trim({q}) AS HUGEINT))",
                f"count(DISTINCT {q})",
            ]
        try:
            row = con.execute(f"SELECT count(*), {', '.join(parts)} FROM {src}").fetchone()
        except Exception as exc:  # noqa: BLE001
            raise duckdb_error(exc, path) from None
    finally:
        con.close()
    n = int(row[0])
    out = []
    for i, c in enumerate(others):
        whole, top, low, distinct = row[1 + 4 * i : 5 + 4 * i]
        if not whole or top is None or top <= 1:
            continue
        if distinct == n and ((low == 1 and top == n) or (low == 0 and top == n - 1)):
            continue  # a row number
        out.append(c)
    return out


def count_column_hint(path: "str | os.PathLike[str]", variables: Sequence[str], where: str = "INPUT") -> str | None:
    """A notice for a file read as records whose rows are all different combinations of ``variables`` and that
    has a column of whole numbers: ``is Freq the count? pass --count Freq``.  None when there is no such column.

    Call it when the records were read without a count column and every cell holds one record.
    """
    found = likely_count_columns(path, variables)
    if not found:
        return None
    which = " or ".join(repr(c) for c in found)
    first = found[0]
    return (
        f"every row of {where} {os.fspath(path)!r} is a different combination of {', '.join(variables)}, and its column "
        f"{which} holds whole numbers: is {first} the count? pass --count {first} (each row was read as one record; "
        "--count none says so and silences this note)."
    )
