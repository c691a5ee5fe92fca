"""Frame interchange: accept pandas, polars and pyarrow tables wherever a DataFrame is expected,
and give the metric frames shared by empirical and a priori results one JSON shape."""

from __future__ import annotations

from typing import Any

from .exceptions import InvalidArgumentError

import sys
from dataclasses import dataclass
from functools import cached_property

__all__ = ["MetricGrid", "as_pandas", "is_pandas", "pd", "tau_dict", "within_dict"]


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


def is_pandas(obj: Any, kind: str = "Series") -> bool:
    """Whether ``obj`` is a pandas ``kind`` (Series, DataFrame), without importing pandas: an object can only be
    one when pandas is already imported."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(obj, getattr(pandas, kind))


@dataclass(frozen=True, eq=False)
class MetricGrid:
    """A small table of floats by one labelled index (tau by k, shares within p%), held as numpy arrays.

    Metric results keep their frames in this form so that computing and printing them as JSON or text
    does not import pandas; :meth:`frame` gives the pandas DataFrame (built once).
    """

    index_name: str
    index: Any  # 1-d numpy array of the labels
    columns: tuple[str, ...]
    values: Any  # 2-d numpy array, one column per name

    @cached_property
    def _frame(self) -> Any:
        return pd.DataFrame(
            {c: self.values[:, i] for i, c in enumerate(self.columns)}, index=pd.Index(self.index, name=self.index_name)
        )

    def frame(self) -> pd.DataFrame:
        """The pandas DataFrame (the same object on every call)."""
        return self._frame

    def to_string(self, fmt: Any) -> str:
        """``frame().to_string(float_format=fmt)``, without pandas for integer labels and for float labels of
        at most 6 decimals between 1e-6 and 1e6 (pandas' own layout: labels left-justified, a line with the
        index name, columns right-justified to their values or their name after a space, NaN as "NaN")."""
        labels = _labels(self.index)
        if labels is None:
            return self.frame().to_string(float_format=fmt)
        cells = [[("NaN" if v != v else fmt(float(v))) for v in col] for col in self.values.T.tolist()]
        left = max([len(self.index_name), *map(len, labels)])
        widths = [max([len(c) + 1, *map(len, col)]) for c, col in zip(self.columns, cells)]
        head = " " * left + "".join(" " + c.rjust(w) for c, w in zip(self.columns, widths))
        lines = [head, self.index_name.ljust(len(head))]
        for r, label in enumerate(labels):
            lines.append(label.ljust(left) + "".join(" " + col[r].rjust(w) for col, w in zip(cells, widths)))
        return "\n".join(lines)


def _labels(index: Any) -> list[str] | None:
    """pandas' text of index labels: integers as they are, floats with 6 decimals less the trailing zeros all
    labels share (one decimal kept); None where pandas would choose another layout."""
    kind = getattr(getattr(index, "dtype", None), "kind", "")
    if kind in "iu":
        return [str(int(x)) for x in index.tolist()]
    if kind != "f":
        return None
    xs = index.tolist()
    if any(x != x or abs(x) >= 1e6 or 0 < abs(x) < 1e-6 or round(x, 6) != x for x in xs):
        return None
    out = [f"{x:.6f}" for x in xs]
    while out and all(t.endswith("0") and not t.endswith(".0") for t in out):
        out = [t[:-1] for t in out]
    return out


def _by_column(frame: Any) -> tuple[list[Any], dict[str, list[float]]]:
    if isinstance(frame, MetricGrid):
        return frame.index.tolist(), {c: frame.values[:, i].tolist() for i, c in enumerate(frame.columns)}
    return list(frame.index), {c: frame[c].tolist() for c in frame.columns}


def tau_dict(frame: Any) -> dict[str, dict[str, float]]:
    """A tau frame indexed by k (DataFrame or MetricGrid) as JSON: {"k": {"tau1": ..., ...}}."""
    index, cols = _by_column(frame)
    return {str(int(k)): {c: float(v[r]) for c, v in cols.items()} for r, k in enumerate(index)}


def within_dict(frame: Any) -> dict[str, dict[str, float]]:
    """A 'within p%' frame indexed by p (DataFrame or MetricGrid) as JSON: {"all": {"50": ...}, "nonzero": {...}}."""
    index, cols = _by_column(frame)
    return {c: {f"{float(p):g}": float(x) for p, x in zip(index, v)} for c, v in cols.items()}
