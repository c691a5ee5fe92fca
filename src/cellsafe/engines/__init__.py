"""Where the kernels run: the local engine (numpy, one process) or Spark (a cluster), same numbers.

The mechanisms define their sampling block by block (the flat-index blocks of the one block
scheme, each with its own random stream), so an engine only decides where blocks are computed:

- :mod:`cellsafe.engines.local`: DuckDB aggregation and numpy kernels in this process (the default);
- :mod:`cellsafe.engines.spark`: Spark SQL aggregation and the same kernels per partition of whole
  blocks (``pip install 'cellsafe[spark]'``; imported only when used).

For the same seed both give the same tables, cell for cell.
"""

from ._pairs import PairMetrics, pair_metrics

ENGINES: tuple[str, ...] = ("local", "spark")

__all__ = ["ENGINES", "PairMetrics", "pair_metrics"]
