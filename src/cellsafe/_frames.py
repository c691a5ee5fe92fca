"""Frame interchange: accept pandas, polars and pyarrow tables wherever a DataFrame is expected."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .exceptions import InvalidArgumentError

__all__ = ["as_pandas"]


def as_pandas(obj: Any, name: str = "data") -> pd.DataFrame:
    """Return ``obj`` as a pandas DataFrame (pandas unchanged; polars and pyarrow converted)."""
    if isinstance(obj, pd.DataFrame):
        return obj
    to_pandas = getattr(obj, "to_pandas", None)
    if callable(to_pandas):  # pyarrow.Table, polars.DataFrame
        out = to_pandas()
        if isinstance(out, pd.DataFrame):
            return out
    raise InvalidArgumentError(
        f"{name} must be a pandas DataFrame, a polars DataFrame or a pyarrow Table. Got {type(obj).__name__} instead."
    )
