"""``scipy.special``, imported on first use: a command that only draws (``synthesize``) never pays its import."""

from __future__ import annotations

from typing import Any


class _Special:
    """The ``scipy.special`` module, imported when a function of it is first looked up."""

    def __getattr__(self, name: str) -> Any:
        from scipy import special

        return getattr(special, name)

    def __repr__(self) -> str:
        return "<scipy.special, imported on first use>"


special: Any = _Special()
