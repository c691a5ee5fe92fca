"""Built-in example tables.

- :func:`esc_like`: a stand-in for the ESC substitute of documents 003 and 000 (5 variables,
  3,468,640 cells, about 8.19 million pupils, the cell-size distribution of 003 Table 2),
  drawn from a log-linear model with two-way associations.
"""

from ._esc import esc_like, esc_like_expected, esc_like_variables

__all__ = ["esc_like", "esc_like_expected", "esc_like_variables"]
