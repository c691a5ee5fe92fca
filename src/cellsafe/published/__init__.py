"""Published tables: which aggregated cells are released, and the dummy matrix X behind them."""

from ._spec import DEFAULT_MAX_INNER, Publication

__all__ = ["Publication", "DEFAULT_MAX_INNER"]
