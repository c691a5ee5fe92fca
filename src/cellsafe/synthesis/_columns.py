"""Columns of microdata as the synthesizers see them: categories as codes, numbers as floats.

:func:`encode` turns each column of a frame into a :class:`Column` (its kind, labels, range,
whether it is whole-numbered, its pandas dtype) and one array: int64 codes ``0 .. K-1`` for a
categorical column (a missing value is code ``K``, a category of its own), float64 values for a
numeric column (NaN where missing).  :func:`decode` turns synthetic arrays back into a frame with
the original labels, category order and dtypes.

Types.  A column is numeric when its values are numbers in the frame (integer or float dtype), when
it is listed in ``numeric``, or when it is text whose every value (missing values aside) is a
number written plainly (no leading zero, as in ``"01"``) and it has at least
:data:`MIN_NUMERIC_DISTINCT` distinct values: such inferred columns are named, with their distinct
counts, in a notice.  Numeric columns listed in ``categorical`` and text, category and boolean
columns are categorical; a categorical column with more than ``max_levels`` categories gets a
notice with what to do.  Number-like text with fewer distinct values stays categorical
(``"0.50"`` stays the label ``"0.50"``), and the notice says so.

Missing values.  An empty field is missing in every column.  In a numeric column ``"NA"``,
``"NaN"`` and blanks are missing too (:data:`NUMERIC_MISSING`).  Other markers (``"-9"``, ``"."``,
or ``"NA"`` in a text column) are declared in ``missing_values``: a list for every column or
``{column: [markers]}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import re
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError

__all__ = ["Column", "encode", "decode", "missing_markers", "NUMERIC_MISSING", "MIN_NUMERIC_DISTINCT", "MAX_LEVELS", "reorder"]

#: Text read as missing in every numeric column (after stripping blanks).
NUMERIC_MISSING: tuple[str, ...] = ("", "NA", "NaN", "nan", "N/A")
#: Number-like text columns with fewer distinct values than this stay categorical.
MIN_NUMERIC_DISTINCT = 10
#: A categorical column with more categories than this gets a notice (synthpop's ``maxfaclevels``).
MAX_LEVELS = 60
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


@dataclass(frozen=True)
class Column:
    """How one column is synthesized and restored.

    Attributes
    ----------
    name : str
    kind : {"categorical", "numeric"}
    labels : numpy.ndarray
        Categories in their order (categorical columns; empty for numeric ones).  Code ``K =
        len(labels)`` stands for a missing value.
    has_missing : bool
        Whether the confidential column has missing values.
    integer : bool
        Numeric column whose observed values are all whole numbers (synthetic values are rounded).
    low, high : float
        Observed range of a numeric column.
    mean : float
        Mean of the observed values (fills missing predictor values in regression designs).
    dtype : object
        The column's pandas dtype, restored on output.
    """

    name: str
    kind: str
    labels: np.ndarray = field(repr=False)
    has_missing: bool
    integer: bool = False
    low: float = np.nan
    high: float = np.nan
    mean: float = np.nan
    dtype: Any = field(default=None, repr=False)

    @property
    def n_codes(self) -> int:
        """Number of codes of a categorical column, counting 'missing' when it occurs."""
        return len(self.labels) + int(self.has_missing)

    @property
    def missing_code(self) -> int:
        return len(self.labels)

    def describe(self) -> str:
        """Short description for error messages: ``"categorical (3 categories: 'a', 'b', ...)"``."""
        if self.kind == "numeric":
            return f"numeric (range {self.low:g} to {self.high:g})"
        shown = ", ".join(repr(_plain(v)) for v in self.labels[:3]) + (", ..." if len(self.labels) > 3 else "")
        return f"categorical ({len(self.labels)} categories: {shown})"


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _is_number_dtype(dt: Any) -> bool:
    return bool(
        pd.api.types.is_numeric_dtype(dt)
        and not pd.api.types.is_bool_dtype(dt)
        and not isinstance(dt, pd.CategoricalDtype)
    )


def _sorted_labels(values: np.ndarray) -> np.ndarray:
    """Distinct labels in a natural order: by value when every label is a number, else as text."""
    uniq = pd.unique(values)
    try:
        as_num = pd.to_numeric(pd.Series(uniq, dtype=object), errors="raise").to_numpy(dtype=np.float64)
        order = np.argsort(as_num, kind="stable")
    except (TypeError, ValueError):
        order = np.argsort(np.array([str(v) for v in uniq], dtype=object), kind="stable")
    out = np.empty(len(uniq), dtype=object)
    out[:] = [uniq[i] for i in order]
    return out


def _encode_categorical(s: pd.Series, markers: frozenset[str] = frozenset()) -> tuple[Column, np.ndarray]:
    missing = s.isna().to_numpy()
    dtype = s.dtype
    if markers:
        if _is_number_dtype(s.dtype):
            numbers = [float(m) for m in markers if _PLAIN_NUMBER.match(m)]
            missing = missing | np.isin(s.to_numpy(dtype=np.float64, na_value=np.nan), numbers)
        else:
            missing = missing | s.astype(object).map(lambda v: str(v).strip() in markers).to_numpy(dtype=bool)
        if isinstance(s.dtype, pd.CategoricalDtype):
            s = s.cat.remove_categories([c for c in s.cat.categories if str(c).strip() in markers])
            dtype = s.dtype
        else:
            s = s.where(~missing)
    has_missing = bool(missing.any())
    if isinstance(s.dtype, pd.CategoricalDtype):
        labels = np.asarray(s.cat.categories, dtype=object)
        codes = s.cat.codes.to_numpy().astype(np.int64)
    else:
        observed = s.to_numpy(dtype=object)[~missing]
        if pd.api.types.is_bool_dtype(s.dtype) or (len(observed) and all(isinstance(v, (bool, np.bool_)) for v in observed)):
            labels = np.array([False, True], dtype=object)
            labels = labels[np.isin([False, True], observed.astype(bool))]
        else:
            labels = _sorted_labels(observed)
        index = pd.Index(labels)
        codes = np.full(len(s), -1, dtype=np.int64)
        codes[~missing] = index.get_indexer(observed)
    codes[codes < 0] = len(labels)
    return Column(s.name, "categorical", labels, has_missing, dtype=dtype), codes


def _numbers_from_text(s: pd.Series, markers: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
    """Values of a text column as float64 (NaN where missing) and the positions that are not numbers."""
    text = s.to_numpy(dtype=object)
    stripped = pd.Series(text, dtype=object).map(lambda v: None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else str(v).strip())
    missing = stripped.isna().to_numpy() | stripped.isin(tuple(markers | set(NUMERIC_MISSING))).to_numpy()
    values = pd.to_numeric(stripped.where(~missing), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(np.isnan(values) & ~missing)
    return values, bad


def _encode_numeric(s: pd.Series, parse: bool, markers: frozenset[str] = frozenset()) -> tuple[Column, np.ndarray]:
    if parse and not _is_number_dtype(s.dtype):
        values, bad = _numbers_from_text(s, markers)
        if bad.size:
            value = s.to_numpy(dtype=object)[bad[0]]
            raise DataError(
                f"column {s.name!r} was declared numeric but has a value that is not a number, {value!r} in data row "
                f"{bad[0] + 1}; fix the value, treat the column as categorical, or, if {value!r} marks a missing value, "
                f"declare it: missing_values={{{s.name!r}: [{str(value).strip()!r}]}} (--missing-values {s.name}={str(value).strip()})."
            )
        dtype = None  # restored as int64 / float64 by its values
    else:
        values = s.to_numpy(dtype=np.float64, na_value=np.nan).copy()
        dtype = s.dtype
        numbers = [float(m) for m in markers if _PLAIN_NUMBER.match(m)]
        if numbers:
            values[np.isin(values, numbers)] = np.nan
    missing = np.isnan(values)
    if np.isinf(values).any():
        raise DataError(f"column {s.name!r} has infinite values; recode them or drop those records.")
    obs = values[~missing]
    if obs.size == 0:
        raise DataError(f"column {s.name!r} has only missing values; drop it from the visit sequence.")
    integer = bool(np.all(obs == np.round(obs)))
    col = Column(
        s.name,
        "numeric",
        np.empty(0, dtype=object),
        bool(missing.any()),
        integer=integer,
        low=float(obs.min()),
        high=float(obs.max()),
        mean=float(obs.mean()),
        dtype=dtype,
    )
    return col, values


def missing_markers(missing_values: Any, names: Sequence[str]) -> dict[str, frozenset[str]]:
    """``{column: markers}`` from ``missing_values``: a list for every column, or ``{column: [markers]}``."""
    if missing_values is None:
        return {}
    if isinstance(missing_values, str):
        raise DataError(
            f"missing_values must be a list of markers such as ['NA', '-9'] or a dict {{column: [markers]}}. Got {missing_values!r}."
        )
    if isinstance(missing_values, Mapping):
        out = {}
        for col, markers in missing_values.items():
            if col not in names:
                raise DataError(f"missing_values names column {col!r}, which is not among the columns {list(names)}.")
            if isinstance(markers, str):
                markers = [markers]
            out[col] = frozenset(str(m).strip() for m in markers)
        return out
    every = frozenset(str(m).strip() for m in missing_values)
    return {name: every for name in names}


def _infer(s: pd.Series, markers: frozenset[str]) -> tuple[bool, int]:
    """Whether a text column reads as numbers (every value a plain number), and its distinct count."""
    observed = s.dropna()
    text = pd.unique(observed.astype(str).str.strip().to_numpy(dtype=object))
    text = np.array([t for t in text if t not in markers and t not in NUMERIC_MISSING], dtype=object)
    if text.size == 0 or not all(_PLAIN_NUMBER.match(t) for t in text):
        return False, int(text.size)
    distinct = np.unique(text.astype(np.float64)).size
    return distinct >= MIN_NUMERIC_DISTINCT, int(distinct)


def encode(
    frame: pd.DataFrame,
    names: Sequence[str],
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
    missing_values: Any = None,
    max_levels: int = MAX_LEVELS,
) -> tuple[dict[str, Column], dict[str, np.ndarray], list[str]]:
    """Encode the columns ``names`` of ``frame``; see the module notes for the typing rule.

    Returns the columns, their arrays and the notices about types (inferred numbers, number-like
    text kept as categories, categorical columns with many levels).
    """
    markers = missing_markers(missing_values, list(frame.columns))
    columns: dict[str, Column] = {}
    arrays: dict[str, np.ndarray] = {}
    inferred: list[str] = []
    kept_text: list[str] = []
    for name in names:
        s = frame[name]
        mk = markers.get(name, frozenset())
        if name in categorical:
            col, arr = _encode_categorical(s, mk)
        elif name in numeric or _is_number_dtype(s.dtype):
            col, arr = _encode_numeric(s, parse=name in numeric, markers=mk)
        elif _is_text(s):
            looks, distinct = _infer(s, mk)
            if looks:
                col, arr = _encode_numeric(s, parse=True, markers=mk)
                inferred.append(f"{name} ({distinct:,} distinct values)")
            else:
                col, arr = _encode_categorical(s, mk)
                if distinct and all(_PLAIN_NUMBER.match(str(v)) for v in col.labels):
                    kept_text.append(f"{name} ({distinct:,})")
        else:
            col, arr = _encode_categorical(s, mk)
        columns[name] = col
        arrays[name] = arr
    notices = []
    if inferred:
        notices.append(
            "read as numbers (every value is a number): " + ", ".join(inferred)
            + "; list a column in categorical (--categorical) to keep it as categories."
        )
    if kept_text:
        notices.append(
            f"number-like columns kept as categories (fewer than {MIN_NUMERIC_DISTINCT} distinct values): "
            + ", ".join(kept_text) + "; list a column in numeric (--numeric) to read it as numbers."
        )
    for name, col in columns.items():
        if col.kind == "categorical" and len(col.labels) > max_levels:
            notices.append(
                f"column {name!r} is categorical with {len(col.labels):,} categories (more than {max_levels}): models "
                "grow with the categories and rare ones are copied from few records. Declare it numeric if its values "
                f"are numbers (--numeric {name}), group its categories, or synthesize it last with 'sample' or 'cart'."
            )
    return columns, arrays, notices


def _is_text(s: pd.Series) -> bool:
    return bool(pd.api.types.is_object_dtype(s.dtype) or pd.api.types.is_string_dtype(s.dtype)) and not isinstance(
        s.dtype, pd.CategoricalDtype
    )


def reorder(col: Column, codes: np.ndarray, order: Sequence[Any]) -> tuple[Column, np.ndarray]:
    """``col`` with its categories in ``order`` (every category once), and its codes recoded."""
    if col.kind != "categorical":
        raise DataError(f"levels are given for {col.name!r}, which is numeric; levels order categories.")
    labels = [str(v) for v in col.labels]
    wanted = [str(v) for v in order]
    if sorted(wanted) != sorted(labels) or len(set(wanted)) != len(wanted):
        raise DataError(
            f"the levels of {col.name!r} must list each of its categories once; it has {labels}, the levels are {wanted}."
        )
    new_of_old = np.array([wanted.index(v) for v in labels] + [len(labels)], dtype=np.int64)
    new_labels = np.empty(len(labels), dtype=object)
    new_labels[new_of_old[:-1]] = col.labels
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = pd.CategoricalDtype(list(new_labels), ordered=dtype.ordered)
    return replace(col, labels=new_labels, dtype=dtype), new_of_old[codes]


def _restore_categorical(col: Column, codes: np.ndarray) -> pd.Series:
    dt = col.dtype
    missing = codes == col.missing_code
    if isinstance(dt, pd.CategoricalDtype):
        return pd.Series(pd.Categorical.from_codes(np.where(missing, -1, codes), dtype=dt), name=col.name)
    values = np.empty(len(codes), dtype=object)
    if len(col.labels):
        values[~missing] = col.labels[codes[~missing]]
    values[missing] = None
    if missing.any():
        if pd.api.types.is_bool_dtype(dt):
            return pd.Series(values, dtype="boolean", name=col.name)
        if dt is not None and _is_number_dtype(dt):  # integer-coded categories: nullable integers or floats
            target = "Int64" if pd.api.types.is_integer_dtype(dt) else dt
            return pd.Series(values, name=col.name).astype(target)
    try:
        return pd.Series(values, name=col.name).astype(dt)
    except (TypeError, ValueError):
        return pd.Series(values, name=col.name)


def _restore_numeric(col: Column, values: np.ndarray) -> pd.Series:
    if col.integer:
        values = np.round(values)
    missing = np.isnan(values)
    dt = col.dtype
    if dt is None:  # parsed from text
        if col.integer:
            return pd.Series(values, name=col.name).astype("Int64" if missing.any() else "int64")
        return pd.Series(values, name=col.name)
    if pd.api.types.is_integer_dtype(dt):
        if missing.any():
            return pd.Series(values, name=col.name).astype("Int64")
        return pd.Series(values, name=col.name).astype(dt)
    return pd.Series(values, name=col.name).astype(dt)


def decode(columns: dict[str, Column], arrays: dict[str, np.ndarray], order: Sequence[str]) -> pd.DataFrame:
    """The synthetic frame: columns in ``order`` with their labels and dtypes restored."""
    parts = {}
    for name in order:
        col = columns[name]
        if col.kind == "categorical":
            parts[name] = _restore_categorical(col, arrays[name])
        else:
            parts[name] = _restore_numeric(col, arrays[name])
    return pd.DataFrame(parts)
