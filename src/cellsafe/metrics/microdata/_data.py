"""Shared input handling for the microdata metrics.

Every metric compares an original frame with one (or several) synthetic frames.  This module
checks that the frames have the columns asked for, decides which columns are categorical, and
encodes categories *jointly* over the frames so that equal values get equal integer codes in
both (a category seen only in the synthetic data gets its own code).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._frames import as_pandas
from ...exceptions import DataError, InvalidArgumentError

__all__ = [
    "as_frames",
    "as_frame_pair",
    "check_columns",
    "is_categorical",
    "joint_codes",
    "combined_key",
    "numeric_values",
    "parse_numeric",
    "mark_missing",
]


def as_frames(original: Any, synthetic: Any, owner: str) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """The original frame and a list of synthetic frames (one per implicate)."""
    orig = as_pandas(original, "original")
    if isinstance(synthetic, (list, tuple)):
        if len(synthetic) == 0:
            raise InvalidArgumentError(f"{owner} needs at least one synthetic data set; got an empty list.")
        syn = [as_pandas(s, f"synthetic[{i}]") for i, s in enumerate(synthetic)]
    else:
        syn = [as_pandas(synthetic, "synthetic")]
    if len(orig) == 0:
        raise DataError(f"{owner}: the original data have no rows.")
    for i, s in enumerate(syn):
        if len(s) == 0:
            raise DataError(f"{owner}: synthetic data set {i} has no rows.")
    return orig, syn


def as_frame_pair(original: Any, synthetic: Any, owner: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The original frame and one synthetic frame; a list of implicates is refused."""
    if isinstance(synthetic, (list, tuple)):
        raise InvalidArgumentError(f"{owner} takes one synthetic data set; call it once per implicate.")
    orig, (syn,) = as_frames(original, synthetic, owner)
    return orig, syn


def check_columns(frames: dict[str, pd.DataFrame], columns: Sequence[str] | None, owner: str) -> list[str]:
    """The columns to use: ``columns`` if given, else those common to every frame (original order).

    Raises a DataError naming the first frame that lacks a requested column.
    """
    first = next(iter(frames.values()))
    if columns is None:
        cols = [c for c in first.columns if all(c in f.columns for f in frames.values())]
        if not cols:
            raise DataError(f"{owner}: the data sets have no column in common.")
        return [str(c) for c in cols]
    if isinstance(columns, str):
        columns = [columns]
    cols = list(columns)
    if not cols:
        raise InvalidArgumentError(f"{owner} needs at least one column; got an empty list.")
    if len(set(cols)) != len(cols):
        dup = next(c for c in cols if cols.count(c) > 1)
        raise InvalidArgumentError(f"{owner}: column {dup!r} is listed twice.")
    for name, f in frames.items():
        for c in cols:
            if c not in f.columns:
                raise DataError(
                    f"{owner}: column {c!r} is missing from the {name} data, which has columns {list(map(str, f.columns))}."
                )
    return cols


def is_categorical(series: pd.Series, categorical: Sequence[str] | None = None) -> bool:
    """True for category, object, string and boolean columns, and for columns named in ``categorical``."""
    if categorical is not None and series.name in categorical:
        return True
    dt = series.dtype
    return bool(
        isinstance(dt, pd.CategoricalDtype)
        or pd.api.types.is_object_dtype(dt)
        or pd.api.types.is_string_dtype(dt)
        or pd.api.types.is_bool_dtype(dt)
    )


def _values(series: pd.Series) -> np.ndarray:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return np.asarray(series.astype(object))
    return series.to_numpy()


def joint_codes(series: Sequence[pd.Series]) -> tuple[list[np.ndarray], np.ndarray]:
    """Integer codes of the values of several series over their union of values.

    Missing values form their own category.  Returns one int64 array per series and the
    distinct values (in order of first appearance; ``len`` of it is the number of codes).
    """
    lengths = [len(s) for s in series]
    obj = _needs_object(series)
    values = np.concatenate([_values(s).astype(object) if obj else _values(s) for s in series])
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    codes = codes.astype(np.int64)
    out = np.split(codes, np.cumsum(lengths)[:-1])
    return out, np.asarray(uniques)


def _needs_object(series: Sequence[pd.Series]) -> bool:
    kinds = {np.asarray(_values(s)).dtype.kind for s in series}
    return len(kinds) > 1 or any(isinstance(s.dtype, pd.CategoricalDtype) for s in series)


def combined_key(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> tuple[list[np.ndarray], int]:
    """One integer code per record for the combination of ``columns``, comparable across frames.

    Codes are dense (0 .. n_distinct - 1) over the union of combinations seen in any frame.
    """
    lengths = [len(f) for f in frames]
    flat = np.zeros(sum(lengths), dtype=np.int64)
    radix = 1
    for c in columns:
        codes, uniq = joint_codes([f[c] for f in frames])
        n = len(uniq)
        col = np.concatenate(codes)
        if radix * max(n, 1) >= 2**62:
            # re-densify before the mixed-radix code overflows
            flat, _ = _densify(flat)
            radix = int(flat.max()) + 1
        flat = flat * max(n, 1) + col
        radix *= max(n, 1)
    dense, n_distinct = _densify(flat)
    return list(np.split(dense, np.cumsum(lengths)[:-1])), n_distinct


def _densify(flat: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(flat, return_inverse=True)
    return inv.astype(np.int64).reshape(-1), len(uniq)


def numeric_values(series: pd.Series, owner: str) -> np.ndarray:
    """A numeric column as float64; a DataError names the column if it cannot be converted."""
    try:
        return pd.to_numeric(series, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise DataError(
            f"{owner}: column {series.name!r} is not numeric; list it as categorical or recode it."
        ) from None


# Text read as missing in a numeric column (as synthesis reads it).
_NUMERIC_MISSING = ("", "NA", "NaN", "nan", "N/A")


def mark_missing(frame: pd.DataFrame, missing_values: Any, where: str = "the data") -> pd.DataFrame:
    """``frame`` with the markers of ``missing_values`` (a list for every column, or ``{column: [markers]}``) made missing.

    Examples
    --------
    >>> import pandas as pd
    >>> mark_missing(pd.DataFrame({"sex": ["F", "NA"], "n": [1, -9]}), {"sex": ["NA"], "n": ["-9"]}).isna().sum().tolist()
    [1, 1]
    """
    if not missing_values:
        return frame
    if isinstance(missing_values, dict):
        per = {c: [str(v).strip() for v in (m if not isinstance(m, str) else [m])] for c, m in missing_values.items()}
    else:
        per = {c: [str(v).strip() for v in missing_values] for c in frame.columns}
    out = frame.copy()
    for col, markers in per.items():
        if col not in out.columns:
            if isinstance(missing_values, dict):
                raise InvalidArgumentError(f"missing values are declared for {col!r}, which is not a column of {where}.")
            continue
        s = out[col]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            numbers = pd.to_numeric(pd.Series(markers), errors="coerce").dropna().to_numpy()
            out[col] = s.mask(s.isin(numbers))
        else:
            out[col] = s.mask(s.astype(object).map(lambda v, markers=markers: v is not None and str(v).strip() in markers).astype(bool))
    return out


def parse_numeric(
    frame: pd.DataFrame, numeric: Sequence[str] | None, where: str = "the data", first_line: int | None = None
) -> pd.DataFrame:
    """``frame`` with the columns in ``numeric`` parsed as numbers; the others untouched.

    Records read as written (:func:`cellsafe.io.read_records`) hold text; only the columns declared
    continuous become numbers, so categories such as "0.50" and "0.5" stay apart.  A missing
    value stays missing.  ``first_line`` is the line of the first record in the file (2 for a CSV
    with a header): errors then name the line, else the row (counted from 1).

    Raises
    ------
    InvalidArgumentError
        A name in ``numeric`` that is not a column of ``frame``.
    DataError
        A value that is not a number, with its column and line.

    Examples
    --------
    >>> import pandas as pd
    >>> f = parse_numeric(pd.DataFrame({"age": ["39", "4.5"], "x": ["0.50", "0.5"]}), ["age"])
    >>> f["age"].tolist(), f["x"].tolist()
    ([39.0, 4.5], ['0.50', '0.5'])
    """
    if not numeric:
        return frame
    missing = [c for c in numeric if c not in frame.columns]
    if missing:
        raise InvalidArgumentError(
            f"numeric names {missing[0]!r}, which is not a column of {where}; its columns are "
            f"{', '.join(map(repr, map(str, frame.columns)))}."
        )
    out = frame.copy()
    for col in dict.fromkeys(numeric):
        s = out[col]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            continue
        text = s.astype("string").str.strip()
        text = text.mask(text.isin(_NUMERIC_MISSING))  # R's NA and blanks are missing values, not errors
        values = pd.to_numeric(text, errors="coerce")
        bad = np.flatnonzero(values.isna().to_numpy() & text.notna().to_numpy() & (text != "").fillna(False).to_numpy())
        if bad.size:
            i = int(bad[0])
            at = f"line {first_line + i}" if first_line is not None else f"row {i + 1}"
            raise DataError(
                f"column {col!r} of {where} is declared numeric but holds {s.iloc[i]!r} at {at}, which is not a "
                "number; correct the value or leave the column out of the numeric columns."
            )
        out[col] = values.astype(np.float64)
    return out
