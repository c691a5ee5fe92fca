"""Columns of microdata as the synthesizers see them: categories as codes, numbers as floats.

:func:`encode` turns each column of a frame into a :class:`Column` (its kind, labels, range,
whether it is whole-numbered, its pandas dtype) and one array: int64 codes ``0 .. K-1`` for a
categorical column (a missing value is code ``K``, a category of its own), float64 values for a
numeric column (NaN where missing).  :func:`decode` turns synthetic arrays back into a frame with
the original labels, category order and dtypes.

A column is numeric when its values are numbers in the frame (integer or float dtype) or when it
is listed in ``numeric`` (text is then parsed, and a value that is not a number is an error);
category, text, object and boolean columns are categorical, as are numeric columns listed in
``categorical``.  Nothing is guessed from the look of text: ``"0.50"`` stays the label ``"0.50"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError

__all__ = ["Column", "encode", "decode"]


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


def _encode_categorical(s: pd.Series) -> tuple[Column, np.ndarray]:
    missing = s.isna().to_numpy()
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
    return Column(s.name, "categorical", labels, has_missing, dtype=s.dtype), codes


def _encode_numeric(s: pd.Series, parse: bool) -> tuple[Column, np.ndarray]:
    if parse and not _is_number_dtype(s.dtype):
        text = s.to_numpy(dtype=object)
        values = pd.to_numeric(pd.Series(text), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(values) & ~pd.isna(text))
        if bad.size:
            raise DataError(
                f"column {s.name!r} was declared numeric but has a value that is not a number, "
                f"{text[bad[0]]!r} in data row {bad[0] + 1}; fix the value or treat the column as categorical."
            )
        dtype = None  # restored as int64 / float64 by its values
    else:
        values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        dtype = s.dtype
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


def encode(
    frame: pd.DataFrame,
    names: Sequence[str],
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
) -> tuple[dict[str, Column], dict[str, np.ndarray]]:
    """Encode the columns ``names`` of ``frame``; see the module notes for the typing rule."""
    columns: dict[str, Column] = {}
    arrays: dict[str, np.ndarray] = {}
    for name in names:
        s = frame[name]
        if name in categorical:
            col, arr = _encode_categorical(s)
        elif name in numeric or _is_number_dtype(s.dtype):
            col, arr = _encode_numeric(s, parse=name in numeric)
        else:
            col, arr = _encode_categorical(s)
        columns[name] = col
        arrays[name] = arr
    return columns, arrays


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
