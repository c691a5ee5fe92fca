"""Where a marginal release reads its exact marginals: a table, records in a file or a frame.

A marginal synthesizer touches the confidential data only through the exact counts of some
marginals on the public codes; :class:`MarginalSource` is that access.  :func:`marginal_source`
builds one from a :class:`~cellsafe.CountTable` (marginals summed from its non-zero cells) or from
records (a CSV or Parquet file or a data frame, counted by DuckDB: only the marginals reach Python).
A Spark source lives with the Spark engine and follows the same protocol.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..exceptions import DataError, InvalidArgumentError
from ..table import CountTable, Domain, unravel

__all__ = ["MarginalSource", "TableMarginals", "RecordMarginals", "marginal_source", "domain_codings"]


class MarginalSource:
    """Exact marginals of the confidential records on public codes (attribute i = ``names[i]``).

    Subclasses implement ``_compute(cliques)``; answers are kept, so a marginal asked twice is
    counted once.  ``n_outside`` is the number of records left out of the domain (for the data
    holder: it depends on the confidential data and is never part of a release).
    """

    names: tuple[str, ...] = ()
    sizes: tuple[int, ...] = ()
    n_outside: int = 0

    def __init__(self) -> None:
        self._cache: dict[tuple[int, ...], np.ndarray] = {}

    def marginals(self, cliques: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """Exact counts of each attribute set (sorted attribute indices), one dense array each."""
        wanted = [tuple(int(a) for a in c) for c in cliques]
        todo = sorted({c for c in wanted if c not in self._cache})
        if todo:
            for c, arr in zip(todo, self._compute(todo)):
                self._cache[c] = np.asarray(arr, dtype=np.int64).reshape([self.sizes[a] for a in c])
        return [self._cache[c] for c in wanted]

    def _compute(self, cliques: list[tuple[int, ...]]) -> list[np.ndarray]:
        raise NotImplementedError


class TableMarginals(MarginalSource):
    """Marginals summed from the non-zero cells of a :class:`CountTable` on the public domain."""

    def __init__(self, table: CountTable) -> None:
        super().__init__()
        if not table.is_integer:
            raise DataError("a marginal release needs integer counts; this table holds fractional (fitted) counts.")
        self.table = table
        self.names = tuple(table.names)
        self.sizes = tuple(int(s) for s in table.shape)
        self._codes = unravel(table.index, table.shape) if table.nnz else np.zeros((0, len(self.sizes)), np.int64)

    def _compute(self, cliques: list[tuple[int, ...]]) -> list[np.ndarray]:
        out = []
        counts = np.asarray(self.table.counts, dtype=np.int64)
        for c in cliques:
            n = math.prod(self.sizes[a] for a in c)
            if not c:
                out.append(np.array([counts.sum()], dtype=np.int64))
                continue
            flat = np.ravel_multi_index(tuple(self._codes[:, a] for a in c), [self.sizes[a] for a in c])
            out.append(np.bincount(flat, weights=counts, minlength=n).round().astype(np.int64))
        return out


def domain_codings(domain: Domain, names: Sequence[str]) -> list[Any]:
    """The public coding of each variable: its categories as text, or its bin edges."""
    from ..io import ColumnCoding

    bins = getattr(domain, "bins", {})
    out = []
    for n in names:
        if n in bins:
            out.append(ColumnCoding(n, edges=tuple(bins[n].edges)))
        else:
            out.append(ColumnCoding(n, categories=tuple(str(c) for c in domain[n].categories)))
    return out


class RecordMarginals(MarginalSource):
    """Marginals of records (a file or a frame) counted by DuckDB on the public codes."""

    def __init__(self, source: Any, domain: Domain, names: Sequence[str] | None = None, *,
                 count: str | None = None, outside: str = "error") -> None:
        super().__init__()
        dom = domain.select(list(names) if names is not None else domain.names)
        self.domain = dom
        self.names = tuple(dom.names)
        self.sizes = tuple(v.size for v in dom.variables)
        self._source, self._count, self._outside = source, count, outside
        self._codings = domain_codings(domain, self.names)

    def _compute(self, cliques: list[tuple[int, ...]]) -> list[np.ndarray]:
        from ..io import aggregate_marginals

        res = aggregate_marginals(self._source, self._codings, cliques, count=self._count, outside=self._outside)
        self.n_outside = res.n_outside
        return list(res.marginals)


def marginal_source(data: Any, domain: Domain | None = None, names: Sequence[str] | None = None, *,
                    count: str | None = None, outside: str = "error") -> MarginalSource:
    """A :class:`MarginalSource` for a CountTable, records (file or frame) or an existing source.

    Parameters
    ----------
    data : CountTable, path, DataFrame or MarginalSource
    domain : Domain
        The public categories (and bins) of every variable; required for records.  A table must
        already be on it (its categories equal the domain's).
    names : sequence of str, optional
        The variables released (default: all the domain's, or the table's).
    count : str, optional
        Frequency column of records.
    outside : {"error", "drop"}
        Records with a value outside the domain.
    """
    if isinstance(data, MarginalSource):
        return data
    if isinstance(data, CountTable):
        if domain is not None:
            domain.check_table(data)
        if names is not None and list(names) != list(data.names):
            raise InvalidArgumentError(f"the table's variables are {data.names}, not {list(names)}.")
        return TableMarginals(data)
    if domain is None:
        raise InvalidArgumentError(
            "a marginal release from records needs the public domain (domain=cellsafe.Domain({...})): categories "
            "and bins read from the records would disclose them."
        )
    return RecordMarginals(data, domain, names, count=count, outside=outside)
