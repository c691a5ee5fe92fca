"""Frame interchange: accept pandas, polars and pyarrow tables wherever a DataFrame is expected,
and give the metric frames shared by empirical and a priori results one JSON shape."""

from __future__ import annotations

from typing import Any

from .exceptions import InvalidArgumentError

__all__ = ["as_pandas", "pd", "tau_dict", "within_dict"]


class _Pandas:
    """The pandas module, imported on first use.

    Modules write ``from .._frames import pd`` instead of ``import pandas as pd``: a command that
    never builds a frame (``publish --method ckm`` from Parquet to CSV) never pays pandas' import,
    a third of a second.
    """

    def __getattr__(self, name: str) -> Any:
        import pandas

        return getattr(pandas, name)

    def __repr__(self) -> str:
        return "<pandas, imported on first use>"


pd: Any = _Pandas()


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


def tau_dict(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """A tau frame indexed by k as JSON: {"k": {"tau1": ..., ...}}."""
    return {str(int(k)): {c: float(frame.at[k, c]) for c in frame.columns} for k in frame.index}


def within_dict(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """A 'within p%' frame indexed by p as JSON: {"all": {"50": ...}, "nonzero": {...}}."""
    return {col: {f"{float(p):g}": float(v) for p, v in frame[col].items()} for col in frame.columns}
