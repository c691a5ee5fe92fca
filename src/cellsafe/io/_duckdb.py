"""DuckDB as the embedded engine for CSV and Parquet inputs.

Files are aggregated in DuckDB (``GROUP BY`` the variables), so records never all pass through
pandas; only the table of distinct cells does.  Validation queries (missing values, negative,
fractional or non-finite counts) also run in DuckDB and report the first offending line.

Inputs are read as written: a CSV file's columns are text exactly as in the file (no type
guessing, so ``yes``/``no`` stay words and ``0.5`` and ``0.50`` stay two categories); Parquet
columns keep their stored types.  An input path is a literal file name: ``data[1].csv`` is that
file, never a pattern, unless ``glob=True`` asks for a pattern explicitly.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Sequence


import numpy as np

from .._frames import pd
from ..exceptions import DataError

__all__ = [
    "aggregate_file",
    "glob_files",
    "aggregate_file_codes",
    "value_scale",
    "read_frame",
    "read_records",
    "source_sql",
    "file_columns",
    "duckdb_error",
    "count_column_for",
    "MAX_COUNT",
]

_CSV = (".csv", ".csv.gz", ".tsv", ".txt", ".csv.zst")
_PARQUET = (".parquet", ".pq", ".parq")
_GLOB_CHARS = "*?[{"
MAX_COUNT = 2**63 - 1
"""The largest count a table holds (64-bit signed integers)."""

# A count as written: digits, optionally '.0...' (what floating-point exports write for whole numbers).
_WHOLE = r"^\s*\+?[0-9]+(\.0*)?\s*$"
_links: list[str] = []


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quote_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _literal(p: Path) -> str:
    """A name DuckDB reads as exactly this file: it expands glob characters even when the file exists."""
    text = str(p)
    if not any(ch in text for ch in _GLOB_CHARS):
        return text
    if not _links:
        _links.append(tempfile.mkdtemp(prefix="cellsafe-inputs-"))
        atexit.register(shutil.rmtree, _links[0], True)
    digest = hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:16]
    suffix = "".join(p.suffixes[-2:]) if p.name.lower().endswith((".csv.gz", ".csv.zst")) else p.suffix
    link = Path(_links[0]) / f"{digest}{suffix.lower()}"
    if not link.exists():
        os.symlink(p.resolve(), link)
    return str(link)


def source_sql(
    path: "str | os.PathLike[str]", *, text: bool = False, types: "dict[str, str] | None" = None, glob: bool = False
) -> str:
    """The DuckDB table function reading ``path`` (CSV or Parquet, by suffix).

    Parameters
    ----------
    path : str or PathLike
        A file name, taken literally (``data[1].csv`` is that file) unless ``glob``.
    text : bool, default False
        Read every CSV column as text exactly as written (DuckDB's ``all_varchar``), except the
        columns given in ``types``.  Parquet columns keep their stored types.
    types : dict, optional
        SQL types of named CSV columns (with ``text``).
    glob : bool, default False
        Treat ``path`` as a pattern (``*``, ``?``, ``[...]``) whose files are read as one.
    """
    p = Path(path)
    name = p.name.lower()
    if glob:
        # the matches as a shell finds them (no hidden names: a run's temporary files never match), as a list
        files = glob_files(p)
        where_sql = "[" + ", ".join(_quote_str(_literal(f)) for f in files) + "]"
    else:
        if not p.exists():
            raise DataError(f"input file {str(p)!r} does not exist.")
        if p.is_dir():
            raise DataError(f"input {str(p)!r} is a folder; give a CSV or Parquet file.")
        where_sql = _quote_str(_literal(p))
    if name.endswith(_PARQUET):
        return f"read_parquet({where_sql})"
    if name.endswith(_CSV):
        from ._csv import check_csv

        delimiter = "\t" if name.endswith(".tsv") else ","
        for f in files if glob else [p]:
            check_csv(f, delimiter)  # empty, not UTF-8, duplicate or missing names, another separator, ragged rows
        options = ["header = true", f"delim = {_quote_str(delimiter)}"]
        if text:
            options.append("all_varchar = true")
            if types:
                options.append(
                    "types = {" + ", ".join(f"{_quote_str(k)}: {_quote_str(v)}" for k, v in types.items()) + "}"
                )
        return f"read_csv({where_sql}, {', '.join(options)})"
    raise DataError(
        f"cannot tell the format of {str(p)!r} from its name; use a .csv, .csv.gz, .tsv or .parquet file."
    )


def glob_files(pattern: "str | os.PathLike[str]") -> list[Path]:
    """The files a pattern (``*``, ``?``, ``[...]``, ``**``) matches, sorted, as a shell would match them.

    Hidden names (starting with '.') are matched only by a pattern part that starts with '.', so
    ``kd/*.csv`` never reads a run's temporary files (``kd/.records.csv.partial/...``); folders are
    not matched.  No match is an error.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("a.csv", "b.csv", ".a.csv.partial-1.csv"):
    ...     _ = (d / name).write_text("x\\n1\\n")
    >>> [p.name for p in glob_files(d / "*.csv")]
    ['a.csv', 'b.csv']
    """
    import glob as _glob

    text = str(pattern)
    files = sorted(Path(f) for f in _glob.glob(text, recursive=True) if Path(f).is_file())
    if not files:
        raise DataError(f"no file matches the pattern {text!r}.")
    return files


def duckdb_error(exc: BaseException, path: Any, doing: str = "read") -> DataError:
    """One line for a DuckDB error: the file, the line and what to do.

    DuckDB's CSV errors run over many lines (the sniffer's settings, several possible fixes); a
    user needs the file, the line and one fix.
    """
    text = str(exc)
    where = f"{str(path)!r}"
    m = re.search(r"[Ll]ine:?\s*(\d+)", text)
    line = f", line {m.group(1)}" if m else ""
    if "unicode" in text.lower() or "utf-8" in text.lower() or "utf8" in text.lower():
        fix = "the file is not UTF-8 text; re-encode it (for example iconv -f latin1 -t utf-8)."
    elif "Expected Number of Columns" in text or "columns" in text.lower() and "found" in text.lower():
        cols = re.search(r"Expected Number of Columns:\s*(\d+)\s*Found:\s*(\d+)", text)
        got = f" ({cols.group(2)} fields where the header has {cols.group(1)})" if cols else ""
        fix = f"the row has the wrong number of fields{got}; every row needs one field per header column."
    elif "could not convert" in text.lower():  # before 'quote': the sniffer's settings listed in the text name it
        conv = re.search(r"Could not convert string \"([^\"]*)\" to '?(\w+)", text)
        col = re.search(r'converting column "([^"]*)"', text)
        what = f"{conv.group(1)!r} in column {col.group(1) if col else '?'!r} is not a {conv.group(2)}" if conv else "a value does not fit its column's type"
        fix = f"{what}; correct or drop that row."
    elif "quote" in text.lower():
        fix = "an unterminated or misplaced quote; close the quote or escape it."
    elif "No magic bytes" in text or "parquet" in text.lower() and "invalid" in text.lower():
        fix = "the file is not valid Parquet; write it again or use a .csv name for a CSV file."
    else:
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        fix = first.rstrip(".") + "."
    return DataError(f"cannot {doing} {where}{line}: {fix}")


_database: list[Any] = []


def _close_database() -> None:
    """Close the process's database before a fork: a child must never inherit DuckDB's threads and locks."""
    while _database:
        _database.pop().close()


os.register_at_fork(before=_close_database)


def _connect():  # type: ignore[no-untyped-def]
    """A connection of its own (temporary tables are private to it) to the process's one in-memory database."""
    import duckdb

    if not _database:
        _database.append(duckdb.connect(database=":memory:"))  # once: a database costs 15-25 ms to start
    con = _database[0].cursor()
    con.execute("SET enable_progress_bar = false")  # the CLI draws its own bars
    return con


def _columns(con, src: str, path: Any = None) -> list[str]:  # type: ignore[no-untyped-def]
    try:
        return [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
    except Exception as exc:  # duckdb raises its own exception hierarchy
        raise duckdb_error(exc, path if path is not None else src) from None


def file_columns(path: "str | os.PathLike[str]") -> list[str]:
    """The column names of a CSV or Parquet file (its header), read without the data.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = f.write_text("sex,count\\nF,3\\n")
    >>> file_columns(f)
    ['sex', 'count']
    """
    src = source_sql(path, text=True)
    from ._plain_csv import plain_csv_header

    names = plain_csv_header(path)  # a plain CSV file's header, as DuckDB would read it: no need to start DuckDB
    if names is not None:
        return names
    if Path(path).name.lower().endswith(_PARQUET):
        try:  # a Parquet file's footer names its columns: no need to start DuckDB
            from ._parquet import parquet_schema

            names = list(parquet_schema(path).names)
            if len(set(names)) == len(names):
                return names
        except Exception:  # noqa: BLE001  DuckDB reads it, or says why it cannot
            pass
    con = _connect()
    try:
        return _columns(con, src, path)
    finally:
        con.close()


def count_column_for(
    columns: Sequence[str], variables: Sequence[str], count: str | None, where: str = "the input", option: str = "--count"
) -> tuple[str | None, str | None]:
    """The one rule for count columns: which column of a file holds the counts, and a notice.

    Parameters
    ----------
    columns : sequence of str
        The file's columns.
    variables : sequence of str
        The variables crossed.
    count : str or None
        The count column the user named (``--count``), if any.
    where : str
        The file, for messages.
    option : str
        The command-line option that names this file's count column, for messages (``--count``,
        ``--synthetic-count``).

    Returns
    -------
    (count, notice)
        The count column (None: every row is one record) and a notice to show the user when the
        column was chosen without being named.

    Notes
    -----
    An explicit ``count`` must be a column and not one of the variables.  Without it, a column
    named ``count`` beside the variables is taken as the count, with a notice: a frequency table
    read as records would be silently wrong (each cell counted once).  A variable named ``count``
    keeps its meaning, and then the file is microdata unless ``count`` names another column.
    """
    if count is not None:
        if count in variables:
            raise DataError(
                f"the count column {count!r} is also among the variables; a column is either a variable or the count. "
                f"Drop it from --variables or name another {option}."
            )
        if count not in columns:
            raise DataError(f"count column {count!r} is not in {where} (columns {list(columns)}); check {option}.")
        return count, None
    if "count" in columns and "count" not in variables:
        return "count", (
            f"{where} has a column 'count' beside the variables: reading it as a frequency table with the counts in "
            f"'count' (give {option} count to silence this note, or {option} none if each row is one record)."
        )
    return None, None


def value_scale(path: "str | os.PathLike[str]", column: str) -> int | None:
    """The number of decimal places a numeric column is written with (its largest), or None when it has none.

    Sums of values written with 2 decimals are written with 2 decimals: a sum of binary doubles
    carries artefacts (6148191.839999999 for 6148191.84) that the exact decimal sum has not.
    CSV text and Parquet decimals give the scale as written, Parquet doubles their shortest
    round-trip form; a value in scientific notation gives None (no rounding).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = f.write_text("v\\n12.5\\n3.25\\n7\\n")
    >>> value_scale(f, "v")
    2
    """
    src = source_sql(path, text=True)
    con = _connect()
    try:
        types = {r[0]: str(r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()}
        kind = types.get(column)
        if kind is None:
            return None
        m = re.match(r"DECIMAL\((\d+),\s*(\d+)\)", kind)
        if m:
            return int(m.group(2))
        if any(t in kind for t in ("INT", "HUGEINT")):
            return 0
        text = f"trim(CAST({_quote_ident(column)} AS VARCHAR))"
        row = con.execute(
            f"SELECT bool_or(regexp_matches({text}, '[eEnN]')), "
            f"max(CASE WHEN position('.' IN {text}) > 0 THEN length(split_part({text}, '.', 2)) ELSE 0 END) FROM {src}"
        ).fetchone()
    except Exception:  # noqa: BLE001  the readers report a bad file; no scale here
        return None
    finally:
        con.close()
    if row is None or row[0] or row[1] is None:
        return None
    return int(row[1])


def _read_all(path: "str | os.PathLike[str]", text: bool) -> pd.DataFrame:
    src = source_sql(path, text=text)
    con = _connect()
    try:
        _columns(con, src, path)
        try:
            return con.execute(f"SELECT * FROM {src}").df()
        except Exception as exc:
            raise duckdb_error(exc, path) from None
    finally:
        con.close()


def read_frame(path: "str | os.PathLike[str]") -> pd.DataFrame:
    """Read a whole CSV or Parquet file into pandas through DuckDB (for small inputs), typed by DuckDB's sniffer."""
    return _read_all(path, text=False)


def read_records(path: "str | os.PathLike[str]") -> pd.DataFrame:
    """Read microdata records from CSV or Parquet without guessing the types of text.

    A CSV file's columns are read as text exactly as written (``"yes"`` stays ``"yes"``,
    ``"0.50"`` stays ``"0.50"``; an empty field is missing); a Parquet file's columns keep
    the types stored in it.
    """
    return _read_all(path, text=True)


def _count_check(con, numbered: str, count: str, path: Any) -> None:  # type: ignore[no-untyped-def]
    """Refuse the first count that is not a whole number in [0, 2^63 - 1], naming its line."""
    c = f"CAST({_quote_ident(count)} AS VARCHAR)"
    exact = f"regexp_full_match({c}, {_quote_str(_WHOLE)})"
    value = f"TRY_CAST({c} AS HUGEINT)"
    try:
        bad = con.execute(
            f"SELECT __line, {c} FROM {numbered} WHERE {c} IS NULL OR NOT {exact} OR {value} > {MAX_COUNT} "
            "ORDER BY __line LIMIT 1"
        ).fetchone()
    except Exception as exc:
        raise duckdb_error(exc, path) from None
    if bad is None:
        return
    raw = bad[1]
    if str(path).lower().endswith(_PARQUET):
        where = f"row {int(bad[0])} of {str(path)!r}"
    else:
        where = f"data row {int(bad[0])} (line {int(bad[0]) + 1}) of {str(path)!r}"  # line 1 is the header
    if raw is None or not str(raw).strip():
        raise DataError(f"count column {count!r} has a missing value at {where}; fill it (0 for an empty cell) or drop the row.")
    try:
        x = float(raw)
    except ValueError:
        x = None
    if x is None:
        why = "is not a number"
    elif x != x or x in (float("inf"), float("-inf")):
        why = "is not a finite number (NaN and infinity are not counts)"
    elif x < 0:
        why = "is negative"
    elif x != int(x):
        why = "is not a whole number"
    elif x > MAX_COUNT:
        why = f"exceeds the largest count a table holds (2^63 - 1 = {MAX_COUNT})"
    else:
        why = "is not written as a plain whole number (write 1000, not 1e3)"
    raise DataError(f"count column {count!r} has an invalid value {str(raw)!r} at {where}: it {why}; counts must be "
                    "non-negative whole numbers of records.")


def aggregate_file(
    path: "str | os.PathLike[str]", variables: Sequence[str], count: str | None = None, *, glob: bool = False
) -> tuple[pd.DataFrame, str]:
    """Aggregate a microdata (or frequency) file to one row per distinct cell.

    The variables are read as written (text in CSV files); counts are exact 64-bit integers.
    Returns the frame of distinct cells and the name of its frequency column.
    """
    con = _connect()
    try:
        _group_file(con, path, variables, count, glob)
        out_name = "count" if "count" not in variables else "__count"
        groups = ", ".join(_quote_ident(v) for v in variables)
        frame = con.execute(f"SELECT {groups}, __n AS {_quote_ident(out_name)} FROM __cells").df()
        return frame, out_name
    finally:
        con.close()


def aggregate_file_codes(
    path: "str | os.PathLike[str]", variables: Sequence[str], count: str | None = None, *, glob: bool = False
) -> Any:
    """:func:`aggregate_file` as coded cells (:class:`cellsafe.io.CodedCells`), without a pandas frame.

    A plain CSV file (:mod:`cellsafe.io._plain_csv`) is read by Arrow's CSV reader, exactly as DuckDB
    would read it.  Otherwise DuckDB reads the records (CSV as written) and parses each count
    exactly in one scan; its Arrow batches are crossed from category codes as a frame's are
    (:mod:`cellsafe.io._coded`).  Anything
    that scan does not settle (a missing value, a count that is not a plain whole number, totals
    beyond 2^53, a type the codes do not hold, too many cells) goes through :func:`aggregate_file`'s
    ``GROUP BY``, whose checks name the offending row; where a variable's type would not come back
    as that frame gives it (dates, decimals), the frame is returned instead, as ``(frame, name)``.
    """
    from ._coded import _BATCH, _cross, _view, coded_rows
    from ._plain_csv import aggregate_plain_csv

    if count is not None and count in variables:
        raise DataError(
            f"the count column {count!r} is also among the variables; a column is either a variable or the count."
        )
    if not glob:
        coded = aggregate_plain_csv(path, variables, count)
        if coded is not None:
            return coded
    con = _connect()
    try:
        src = source_sql(path, text=True, glob=glob)
        select = [_quote_ident(v) for v in variables]  # an unknown column fails here: the GROUP BY path names it
        if count is not None:
            select.append(f"{_exact_count(count)} AS __n")
        try:
            reader = con.sql(f"SELECT {', '.join(select)} FROM {src}").to_arrow_reader(_BATCH)
            coded = _cross(iter(reader), list(variables), None, None, None, "__n" if count else None,
                           [False] * len(variables), 0)
        except Exception:  # noqa: BLE001  the GROUP BY below reads the same records and says what is wrong
            coded = None
        if coded is not None and coded.index.size:
            return coded
        con.close()
        con = _connect()
        _group_file(con, path, variables, count, glob)
        groups = ", ".join(_quote_ident(v) for v in variables)
        table = con.sql(f"SELECT {groups}, __n FROM __cells").to_arrow_table()
        counts = np.concatenate([_view(c) for c in table.column("__n").chunks] or [np.zeros(0, np.int64)])
        coded = coded_rows(table, variables, counts.astype(np.int64, copy=False))
        if coded is not None:
            return coded
        out_name = "count" if "count" not in variables else "__count"
        frame = con.execute(f"SELECT {groups}, __n AS {_quote_ident(out_name)} FROM __cells").df()
        return frame, out_name
    finally:
        con.close()


def _exact_count(count: str) -> str:
    """A count column's value as BIGINT, exactly as written, or -1 where it is not a plain whole number.

    Most counts are their own canonical spelling (``CAST(CAST(c AS BIGINT) AS VARCHAR) = c``); the
    others ('+5', ' 5', '5.0') are matched by :data:`_WHOLE` and parsed from their digits.  DuckDB's
    own cast alone would read '5.5' as 6 and '1e3' as 1000.
    """
    c = f"CAST({_quote_ident(count)} AS VARCHAR)"
    exact = f"TRY_CAST(TRY_CAST(regexp_replace(trim({c}), '\\.0*$', '') AS HUGEINT) AS BIGINT)"
    return (f"COALESCE(CASE WHEN CAST(TRY_CAST({c} AS BIGINT) AS VARCHAR) = {c} THEN TRY_CAST({c} AS BIGINT) "
            f"WHEN regexp_full_match({c}, {_quote_str(_WHOLE)}) THEN {exact} ELSE -1 END, -1)")


def _group_file(con: Any, path: Any, variables: Sequence[str], count: str | None, glob: bool) -> None:
    """The distinct cells of a file in the temporary table ``__cells`` (the variables and ``__n``, BIGINT).

    One scan of the records computes, per cell, the number of records, the exact sum of the count
    column and the number of counts that are not whole numbers; the records are scanned again only
    to name the first offending row in an error message.
    """
    if count is not None and count in variables:
        raise DataError(
            f"the count column {count!r} is also among the variables; a column is either a variable or the count."
        )
    src = source_sql(path, text=True, glob=glob)
    cols = _columns(con, src, path)
    for v in list(variables) + ([count] if count else []):
        if v not in cols:
            raise DataError(
                f"unknown variable {v!r}: {str(path)!r} has columns {cols}. Check the spelling of --variables / --count."
            )
    groups = ", ".join(_quote_ident(v) for v in variables)
    aggs = ["COUNT(*) AS __rows"]
    if count is not None:
        c = f"CAST({_quote_ident(count)} AS VARCHAR)"
        # exact: HUGEINT from the text, never through a double; values that are not whole numbers are counted
        aggs += [f"SUM(TRY_CAST(regexp_replace(trim({c}), '\\.0*$', '') AS HUGEINT)) AS __sum",
                 f"COUNT(*) FILTER (WHERE {c} IS NULL OR NOT regexp_full_match({c}, {_quote_str(_WHOLE)}) "
                 f"OR TRY_CAST({c} AS HUGEINT) > {MAX_COUNT}) AS __bad"]
    nulls = ", ".join(f"COUNT(*) FILTER (WHERE {_quote_ident(v)} IS NULL)" for v in variables)
    try:
        con.execute(f"CREATE TEMP TABLE __groups AS SELECT {groups}, {', '.join(aggs)} FROM {src} GROUP BY {groups}")
        stats = con.execute(
            f"SELECT COUNT(*), {nulls}"
            + (", SUM(__bad), MAX(__sum), SUM(__sum)" if count is not None else "")
            + " FROM __groups"
        ).fetchone()
    except Exception as exc:
        raise duckdb_error(exc, path) from None
    if stats[0] == 0:
        raise DataError(f"the input {str(path)!r} has no rows; a table needs at least one record or cell.")
    numbered = f"(SELECT row_number() OVER () AS __line, * FROM {src})"
    for v, null_groups in zip(variables, stats[1:1 + len(variables)]):
        if null_groups:
            try:
                row = con.execute(
                    f"SELECT __line, COUNT(*) OVER () FROM {numbered} WHERE {_quote_ident(v)} IS NULL LIMIT 1"
                ).fetchone()
            except Exception as exc:
                raise duckdb_error(exc, path) from None
            raise DataError(
                f"variable {v!r} has {row[1]} missing value(s) in {str(path)!r}, the first in data row {row[0]}; "
                "recode missing values as a category (for example 'Unknown') or drop those rows."
            )
    if count is None:
        total = "__rows"
    else:
        bad, biggest, overall = stats[1 + len(variables):]
        if bad:
            _count_check(con, numbered, count, path)
        if biggest is not None and int(biggest) > MAX_COUNT:
            raise DataError(
                f"a cell of {str(path)!r} sums to {int(biggest)}, beyond the largest count a table holds (2^63 - 1); "
                "split the table."
            )
        if overall is not None and int(overall) > MAX_COUNT:
            raise DataError(
                f"the counts of {str(path)!r} total {int(overall)}, beyond the largest total a table holds (2^63 - 1); "
                "split the table."
            )
        total = "__sum"
    con.execute(f"CREATE TEMP TABLE __cells AS SELECT {groups}, CAST({total} AS BIGINT) AS __n FROM __groups")
