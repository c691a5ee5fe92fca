"""Progress bars on standard error, drawn only when asked (library functions default to none)."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar"]


class _NoBar:
    """Stands in for a bar when none is wanted: the same calls, no output."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def set_description(self, desc: str, refresh: bool = True) -> None:
        pass

    def set_postfix(self, refresh: bool = True, **values: Any) -> None:
        pass

    def __enter__(self) -> "_NoBar":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def progress_bar(total: int | None, enabled: bool, desc: str, unit: str = "it") -> Any:
    """A tqdm bar on standard error when ``enabled``, else an object that draws nothing.

    The bar is cleared when it closes (``leave=False``) so that results printed afterwards stand
    alone, Callers ask for one only around loops that can take over a second.
    """
    if not enabled:
        return _NoBar()
    from tqdm import tqdm  # imported here: only runs that draw a bar pay for it

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)
