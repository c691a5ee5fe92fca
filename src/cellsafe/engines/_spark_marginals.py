"""Marginals of records on Spark for the marginal synthesizers: the same counts DuckDB gives, computed in the cluster.

:class:`SparkMarginals` codes each record on the public domain with Spark SQL expressions (a
category's position in its public list, a number's interval among public bin edges), counts the
distinct codes once, and returns the requested marginals from one ``GROUPING SETS`` query: only the
marginals reach the driver.  Pass it to :meth:`cellsafe.MarginalSynthesizer.release` as the data.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..exceptions import DataError, InvalidArgumentError
from ..mechanisms import MarginalSource
from ..table import Domain

__all__ = ["SparkMarginals"]


class SparkMarginals(MarginalSource):
    """Exact marginals of records held by Spark (a DataFrame, or Parquet/CSV paths), on a public domain.

    Parameters
    ----------
    source : Spark DataFrame, path or list of paths
    domain : Domain
        The public categories and bins.
    names : sequence of str, optional
        The variables (default all of the domain's).
    count : str, optional
        A frequency column.
    outside : {"error", "drop"}
        Records with a value outside the domain: refused (naming the first) or left out.
    spark : SparkSession, optional

    Examples
    --------
    >>> from cellsafe.engines.spark import SparkMarginals                     # doctest: +SKIP
    >>> source = SparkMarginals("census/*.parquet", domain)                    # doctest: +SKIP
    >>> release = cellsafe.MarginalSynthesizer(1.0, selection="aim").release(source)  # doctest: +SKIP
    """

    def __init__(self, source: Any, domain: Domain, names: Sequence[str] | None = None, *, count: str | None = None,
                 outside: str = "error", spark: Any = None) -> None:
        super().__init__()
        if outside not in ("error", "drop"):
            raise InvalidArgumentError(f"'outside' must be 'error' or 'drop'. Got {outside!r} instead.")
        dom = domain.select(list(names) if names is not None else domain.names)
        self.domain = dom
        self.names = tuple(dom.names)
        self.sizes = tuple(v.size for v in dom.variables)
        self._source, self._count, self._outside, self._spark = source, count, outside, spark
        self._cells = None

    def _code(self, F: Any, name: str) -> Any:
        bins = getattr(self.domain, "bins", {}).get(name)
        if bins is None:
            cats = [str(c) for c in self.domain[name].categories]
            mapping = F.create_map(*[x for i, c in enumerate(cats) for x in (F.lit(c), F.lit(i))])
            return mapping[F.col(f"`{name}`").cast("string")]
        x = F.col(f"`{name}`").cast("double")
        edges = [float(e) for e in bins.edges]
        expr = F.when(x.isNull() | F.isnan(x) | (x < edges[0]) | (x > edges[-1]), F.lit(None))
        for i, e in enumerate(edges[1:-1]):
            expr = expr.when(x < e, F.lit(i))
        return expr.otherwise(F.lit(len(edges) - 2))

    def _coded_cells(self) -> Any:
        if self._cells is not None:
            return self._cells
        from pyspark.sql import functions as F

        from .spark import read_records

        df = read_records(self._source, self._spark)
        missing = [n for n in list(self.names) + ([self._count] if self._count else []) if n not in df.columns]
        if missing:
            raise DataError(f"unknown variable {missing[0]!r}: the records have columns {df.columns}.")
        weight = F.col(f"`{self._count}`").cast("long") if self._count else F.lit(1).cast("long")
        coded = df.select(*[self._code(F, n).alias(f"c{i}") for i, n in enumerate(self.names)], weight.alias("w"))
        cells = coded.groupBy(*[f"c{i}" for i in range(len(self.names))]).agg(F.sum("w").alias("n")).cache()
        outside_rows = cells.filter(" OR ".join(f"c{i} IS NULL" for i in range(len(self.names))))
        n_out = outside_rows.agg(F.sum("n")).first()[0] or 0
        if n_out and self._outside == "error":
            for i, n in enumerate(self.names):
                row = df.filter(self._code(F, n).isNull()).select(F.col(f"`{n}`").cast("string")).first()
                if row is not None:
                    value = "a missing value" if row[0] is None else f"value {row[0]!r}"
                    raise DataError(f"variable {n!r} has {value} outside the public domain; add it to the domain if "
                                    "it is public, or leave such records out (outside='drop').")
        self.n_outside = int(n_out)
        if n_out:
            cells = cells.filter(" AND ".join(f"c{i} IS NOT NULL" for i in range(len(self.names))))
        self._cells = cells
        return cells

    def _compute(self, cliques: list[tuple[int, ...]]) -> list[np.ndarray]:
        cells = self._coded_cells()
        spark = cells.sparkSession
        view = f"cellsafe_marginal_cells_{id(self)}"
        cells.createOrReplaceTempView(view)
        used = sorted({a for c in cliques for a in c})
        out = {c: np.zeros([self.sizes[a] for a in c], dtype=np.int64) for c in cliques}
        if () in out:
            out[()] = np.array(int(cells.agg({"n": "sum"}).first()[0] or 0), dtype=np.int64)
        sets = [c for c in cliques if c]
        if sets:
            flags = ", ".join(f"grouping(c{a}) AS g{a}" for a in used)
            groups = ", ".join("(" + ", ".join(f"c{a}" for a in c) + ")" for c in sets)
            cols = ", ".join(f"c{a}" for a in used)
            rows = spark.sql(f"SELECT {flags}, {cols}, SUM(n) AS n FROM {view} GROUP BY GROUPING SETS ({groups})").toPandas()
            key = {tuple(sorted(c)): c for c in sets}
            grouped = rows[[f"g{a}" for a in used]].to_numpy() == 0
            for pattern in np.unique(grouped, axis=0):
                c = tuple(a for a, g in zip(used, pattern) if g)
                if c not in key:
                    continue
                sel = rows[(grouped == pattern).all(axis=1)]
                dims = [self.sizes[a] for a in c]
                flat = np.ravel_multi_index(tuple(sel[f"c{a}"].to_numpy().astype(np.int64) for a in c), dims)
                out[key[c]] = np.bincount(flat, weights=sel["n"].to_numpy(np.float64),
                                          minlength=math.prod(dims)).round().astype(np.int64).reshape(dims)
        return [out[c] for c in cliques]
