"""Published tables: which aggregated cells are released, the dummy matrix X behind them, and
the one result shape of every protection of them (:class:`PublishedTable`)."""

from ._magnitude import MagnitudeTable, magnitude_table, top_contributions
from ._result import PublishedTable
from ._spec import DEFAULT_MAX_INNER, Publication, check_crossing, check_publication_spec, publication_for

__all__ = [
    "MagnitudeTable",
    "magnitude_table",
    "top_contributions",
    "Publication",
    "PublishedTable",
    "DEFAULT_MAX_INNER",
    "check_crossing",
    "check_publication_spec",
    "publication_for",
]
