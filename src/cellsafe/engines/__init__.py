"""Where the kernels run: the local engine (numpy, one process) or Spark (a cluster), same numbers.

The mechanisms define their sampling block by block (the flat-index blocks of the one block
scheme, each with its own random stream), so an engine only decides where blocks are computed:

- :mod:`cellsafe.engines.local`: DuckDB aggregation and numpy kernels in this process (the default);
- :mod:`cellsafe.engines.spark`: Spark SQL aggregation and the same kernels per partition of whole
  blocks (``pip install 'cellsafe[spark]'``; imported only when used).

For the same seed both give the same tables, cell for cell.  Both pair an original table with
released ones the same way (:class:`CellPairs`: the cells of each distinct (original, released)
pair), from which :mod:`cellsafe.metrics` computes every table metric.
"""

from typing import Any

ENGINES: tuple[str, ...] = ("local", "spark")

__all__ = ["ENGINES", "CellPairs", "cell_pairs", "pair_counts"]


def __getattr__(name: str) -> Any:  # PEP 562: the pairs load on first use; --engine needs only ENGINES
    if name in ("CellPairs", "cell_pairs", "pair_counts"):
        from . import _pairs

        value = getattr(_pairs, name)
        globals()[name] = value
        return value
    import importlib
    import importlib.util

    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # a submodule, e.g. cellsafe.engines.spark
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
