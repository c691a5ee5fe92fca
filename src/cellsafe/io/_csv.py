"""CSV files: the checks every CSV input passes first, and a writer of coded labels and integer counts.

:func:`check_csv` reads the start of a CSV input (64 KiB) and refuses, in one line naming the file,
the line and the fix, what a reader would otherwise take silently or report as something else: an
empty file, text that is not UTF-8, a header naming a column twice (DuckDB renames the second
``count`` to ``count_1``, and the count taken is then the first one), a column without a name, a
file separated by semicolons or tabs instead of commas (read as one column, which reported an
"unknown variable"), and early rows whose number of fields differs from the header's (where the
sniffer then guesses the wrong columns).  Rows past the sample are checked by the reader itself.

The writer:
a published table has few distinct labels per column (categories, ``Total``, crossing names) and
many rows.  Each distinct label is formatted once by Python's :mod:`csv` module with the dialect
``DataFrame.to_csv`` uses (comma, minimal quoting, doubled quotes, ``os.linesep`` between rows), and
the rows are assembled in numpy: one fixed-width byte matrix whose padding is dropped in one pass.
The file is the one ``to_csv(index=False)`` writes for the same frame (nullable integers, missing
values as empty fields), in a fraction of the time.
"""

from __future__ import annotations

import csv
import io
import os
from typing import Any, Sequence

import numpy as np

from ..exceptions import DataError

__all__ = ["CodedColumn", "write_coded_csv", "check_csv"]

_SAMPLE = 1 << 16
_OTHER_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def _open_binary(path: "str | os.PathLike[str]") -> Any:
    name = str(path).lower()
    if name.endswith(".gz"):
        import gzip

        return gzip.open(path, "rb")
    return open(path, "rb")


def check_csv(path: "str | os.PathLike[str]", delimiter: str = ",") -> list[str]:
    """Check the start of a CSV file; returns its header's column names.

    Raises :class:`~cellsafe.exceptions.DataError`, naming the file, the line and the fix, for an
    empty file, bytes that are not UTF-8, a column named twice (case aside: DuckDB's names ignore
    case) or not at all, a file whose one column name holds semicolons or tabs (another separator),
    and a row among the first 64 KiB with more or fewer fields than the header.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = f.write_text("sex,count,count\\nF,1,2\\n")
    >>> try:
    ...     check_csv(f)
    ... except DataError as exc:
    ...     print(str(exc).split(": ", 1)[1])
    the header names the column 'count' twice (columns 2 and 3); give every column its own name.
    """
    name = os.fspath(path)
    if str(path).lower().endswith(".zst"):
        return []  # read by DuckDB alone
    try:
        with _open_binary(path) as fh:
            raw = fh.read(_SAMPLE + 1)
    except OSError as exc:
        raise DataError(f"cannot read {name!r}: {exc.strerror or exc}.") from None
    cut = len(raw) > _SAMPLE
    raw = raw[:_SAMPLE]
    if not raw.strip():
        raise DataError(
            f"{name!r}, line 1: the file is empty; a CSV input needs a header line naming its columns, then one line "
            "per record (or cell)."
        )
    decoder = __import__("codecs").getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(raw, final=not cut)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(
            f"{name!r}, line {line}: the file is not UTF-8 text (byte 0x{raw[exc.start]:02x}); re-encode it, for example "
            f"iconv -f latin1 -t utf-8 {os.path.basename(name)} > utf8-{os.path.basename(name)}"
        ) from None
    text = text.lstrip("\ufeff")
    if cut:  # the last line may be incomplete: check whole lines only
        text = text[: text.rfind("\n") + 1] if "\n" in text else text
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        return []
    if len(header) == 1:
        for sep, words in _OTHER_SEPARATORS.items():
            if sep != delimiter and sep in header[0]:
                raise DataError(
                    f"{name!r}, line 1: the header {header[0]!r} is one column: the file is separated by {words}, not "
                    f"commas; save it as comma-separated CSV (for example with pandas: pd.read_csv(f, sep={sep!r})"
                    ".to_csv(g, index=False))."
                )
    seen: dict[str, int] = {}
    for i, col in enumerate(header, start=1):
        if not col.strip():
            raise DataError(f"{name!r}, line 1: column {i} of the header has no name; name every column.")
        key = col.strip().lower()
        if key in seen:
            first = header[seen[key] - 1]
            same = f"the column {col!r} twice" if first == col else f"the columns {first!r} and {col!r} (names ignore case)"
            raise DataError(
                f"{name!r}, line 1: the header names {same} (columns {seen[key]} and {i}); give every column its own name."
            )
        seen[key] = i
    try:
        for row in reader:
            if row and len(row) != len(header):
                raise DataError(
                    f"{name!r}, line {reader.line_num}: {len(row)} field(s) where the header has {len(header)}; every "
                    "line needs one field per header column (look for a stray or unquoted comma)."
                )
    except csv.Error as exc:
        raise DataError(f"{name!r}, line {reader.line_num}: {exc}; check the quotes on that line.") from None
    return header

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class CodedColumn:
    """A column of text labels given by codes: row i holds ``labels[codes[i]]``.

    Parameters
    ----------
    labels : sequence of str (or int, written as ``str`` writes it, as pandas does)
    codes : array_like of int
    """

    def __init__(self, labels: Sequence[str], codes: Any) -> None:
        self.labels = list(labels)
        self.codes = np.asarray(codes)


def _field(text: str) -> bytes:
    """One field as the csv module (hence pandas) writes it, without separator."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator=os.linesep, quoting=csv.QUOTE_MINIMAL).writerow([text, ""])
    return buf.getvalue()[: -1 - len(os.linesep)].encode("utf-8")  # drop the empty second field and the line end


def _escape(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def _fields(fields: list[bytes]) -> np.ndarray:
    """Fields as one fixed-width bytes array (NUL-padded)."""
    return np.array(fields, dtype=f"S{max(1, max(map(len, fields)))}")


def _count_column(values: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Integers (NaN for missing) as text: a table of fields and each value's row in it (an empty field where
    missing), or the values' own fields and None."""
    missing = np.isnan(values)
    return _int_column(np.where(missing, 0, values).astype(np.int64), missing)


def _int_column(ints: np.ndarray, missing: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """int64 values as text (an empty field where ``missing``): a table of fields and each value's row in it,
    or the values' own fields and None."""
    lo, hi = (int(ints.min()), int(ints.max())) if ints.size else (0, 0)
    if lo >= 0 and hi < 1 << 20:  # small counts: format each value once
        fields = [str(i).encode() for i in range(hi + 1)] + [b""]
        return _fields(fields), (ints if missing is None else np.where(missing, hi + 1, ints)).astype(np.intp, copy=False)
    text = ints.astype("S21")
    if missing is not None:
        text[missing] = b""
    return text, None


# Rows assembled at once: their bytes stay in the cache, and no array holds the whole file twice.
_ROWS = 1 << 14


def write_coded_csv(
    path: "str | os.PathLike[str]",
    header: Sequence[str],
    columns: Sequence["CodedColumn | np.ndarray"],
    *,
    escape_formulas: bool = False,
) -> bool:
    """Write coded text columns and integer count columns as CSV, as ``DataFrame.to_csv`` would.

    Parameters
    ----------
    path : path
    header : sequence of str
        The column names.
    columns : sequence of CodedColumn or ndarray
        Text columns as :class:`CodedColumn`; count columns as integer arrays, or float arrays holding
        integers or NaN (written as integers, NaN as an empty field, as pandas writes a nullable
        integer column).
    escape_formulas : bool, default False
        Prefix an apostrophe to text cells and names starting with = + - @ tab or CR
        (:func:`cellsafe.io.neutralise_formulas`).

    Returns
    -------
    bool
        False, writing nothing, when a label holds a NUL character or a count is not an integer
        (write the frame with pandas instead).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> write_coded_csv(f, ["sex", "count"], [CodedColumn(["F", "M, X"], [0, 1]), np.array([3.0, np.nan])])
    True
    >>> f.read_text()
    'sex,count\\nF,3\\n"M, X",\\n'
    """
    n = None
    sources: list[tuple[np.ndarray, np.ndarray | None]] = []  # per column: fields, and each row's field (or None)
    source: tuple[np.ndarray, np.ndarray | None]
    for col in columns:
        if isinstance(col, CodedColumn):
            # integer (and boolean) labels as pandas writes them in a column of objects: str(x)
            # (never escaped as formulas: neutralise_formulas leaves numbers alone)
            labels = [_escape(x) if escape_formulas and isinstance(x, str) else
                      str(x) if isinstance(x, (int, np.integer)) else x for x in col.labels]
            if any(not isinstance(x, str) or "\x00" in x for x in labels):
                return False
            source = (_fields([_field(x) for x in labels] or [b""]), col.codes.astype(np.intp, copy=False))
        elif np.issubdtype(np.asarray(col).dtype, np.integer):  # integers as they are, exact at any size
            source = _int_column(np.asarray(col).astype(np.int64, copy=False))
        else:
            values = np.asarray(col, dtype=np.float64)
            finite = values[~np.isnan(values)]
            if not np.all(np.isfinite(finite)) or np.any(finite != np.floor(finite)) or np.any(np.abs(finite) >= 2.0**63):
                return False
            source = _count_column(values)
        rows = source[0].shape[0] if source[1] is None else source[1].shape[0]
        if n is not None and rows != n:
            raise ValueError("columns of different lengths")
        n = rows
        sources.append(source)
    names = [_escape(h) for h in header] if escape_formulas else list(header)
    text = io.StringIO(newline="")
    csv.writer(text, lineterminator=os.linesep, quoting=csv.QUOTE_MINIMAL).writerow(names)
    head = text.getvalue().encode("utf-8")
    n = n or 0
    sep = np.full((min(n, _ROWS), 1), ord(","), dtype=np.uint8)
    end = np.frombuffer(os.linesep.encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        fh.write(head)
        for lo in range(0, n, _ROWS):
            hi = min(n, lo + _ROWS)
            parts: list[np.ndarray] = []
            for k, (fields, rows_field) in enumerate(sources):
                if k:
                    parts.append(sep[: hi - lo])
                block = fields[lo:hi] if rows_field is None else fields[rows_field[lo:hi]]
                parts.append(block.view(np.uint8).reshape(hi - lo, fields.dtype.itemsize))
            parts.append(np.broadcast_to(end, (hi - lo, end.size)))
            rows_bytes = np.concatenate(parts, axis=1)
            # padding of the fixed-width fields is NUL, which no field holds: dropping it leaves the rows
            fh.write(rows_bytes[rows_bytes != 0].tobytes())
    return True
