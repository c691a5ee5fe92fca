"""The result protocol: every result object has ``to_dict()``, ``summary()`` (text),
``_repr_html_()`` for notebooks, and ``to_frame()`` where it is tabular.

:class:`Result` gives the last three from ``to_dict()`` (and ``to_frame()`` when the class has
one), so a result class writes only what is its own: its fields and how they read as a dict.
"""

from __future__ import annotations

import html
import math
import numbers
from typing import Any

import numpy as np

__all__ = ["Result", "json_ready"]


def json_ready(value: Any, *, finite: bool = False) -> Any:
    """``value`` with numpy scalars and arrays turned into Python numbers and lists (NaN -> None).

    With ``finite``, infinities become None too, so that the JSON is standard.
    """
    if isinstance(value, dict):
        return {str(k): json_ready(v, finite=finite) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v, finite=finite) for v in value]
    if isinstance(value, np.ndarray):
        return [json_ready(v, finite=finite) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        x = float(value)
        return None if math.isnan(x) or (finite and math.isinf(x)) else x
    return value


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}=({_fmt(v)})" if isinstance(v, dict) else f"{k}={_fmt(v)}" for k, v in value.items())
    if isinstance(value, list):
        more = f", ... ({len(value)} values)" if len(value) > 8 else ""
        return f"[{', '.join(_fmt(v) for v in value[:8])}{more}]"
    return str(value)


def _shown(value: Any) -> bool:
    """Whether an entry of ``to_dict()`` reads on one line: long lists and records (rows of
    ``to_frame()``, shown as a table) are left out of the text and HTML views."""
    if not isinstance(value, list):
        return True
    return len(value) <= 64 and not any(isinstance(v, dict) for v in value)


class Result:
    """Mixin of result objects (frozen dataclasses): text and HTML views from ``to_dict()``."""

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every result overrides it
        raise NotImplementedError

    def _title(self) -> str:
        return type(self).__name__

    def summary(self) -> str:
        """A plain-text summary: one line per entry of :meth:`to_dict`."""
        d = json_ready(self.to_dict())
        width = max((len(k) for k in d), default=0)
        lines = [self._title(), "-" * len(self._title())]
        lines += [f"{k:<{width}}  {_fmt(v)}" for k, v in d.items() if _shown(v)]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        d = json_ready(self.to_dict())
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td>{html.escape(_fmt(v))}</td></tr>"
            for k, v in d.items()
            if _shown(v)
        )
        out = f"<div><strong>{html.escape(self._title())}</strong><table>{rows}</table>"
        to_frame = getattr(self, "to_frame", None)
        if callable(to_frame):
            try:
                frame = to_frame()
            except Exception:  # a view must never fail the notebook's display
                frame = None
            if frame is not None:
                out += frame.head(20)._repr_html_()
        return out + "</div>"
