"""Which aggregated cells are published: the crossings of a formula and the dummy matrix X.

A *publication* is a list of **crossings** of a table's variables (``('party', 'age')``,
``('sex',)``, and the empty crossing ``()`` for the grand total).  Every cell of every crossing is
a published cell; the published counts are ``z = X^T y`` where ``y`` holds the inner cells (the
full cross-classification) and ``X`` is the sparse 0/1 matrix with one row per inner cell and one
column per published cell (001, eq. 1).

A formula names the crossings in R's notation: ``party*age + party*sex`` publishes party, age,
sex, party x age, party x sex and the grand total (``- 1`` drops the grand total).  Published cells
are written in long format: one column per variable holding a category, or ``'Total'`` where the
cell aggregates over that variable.

Hierarchies: ``hierarchies={"geo": h}`` gives variable ``geo`` the levels of a
:class:`~cellsafe.table.Hierarchy` (``region``, ``district``), which a formula names like variables.
Naming the variable publishes every level with it, as tau-Argus and SSBtools do: ``age*geo`` is
``age*region + age*district`` plus ``age`` crossed with the leaves (the inner categories).  Naming a
level picks that level alone: ``region*sex + district*age``.  A crossing with a level has one
published cell per aggregate code of that level (times the categories of the other terms), and
:meth:`Publication.cells` writes the aggregate's code.  Aggregates may
overlap: an inner cell then counts in several cells of the same crossing.  Everything downstream
sees only X, so it works the same on hierarchical publications.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .._frames import as_pandas, pd
from ..exceptions import DataError, InvalidArgumentError, TableTooLargeError
from ..formula import Formula, parse_formula
from ..table import INDEX_DTYPE, CountTable, Hierarchy, Variable, ravel, unravel

__all__ = ["Publication", "DEFAULT_MAX_INNER"]

#: Largest number of inner cells enumerated when every combination is included (1e7).
DEFAULT_MAX_INNER = 10_000_000


def check_crossing(crossing: Any, names: Sequence[str], what: str = "crossing") -> tuple[str, ...]:
    """``crossing`` (a variable name or a sequence of them) as a tuple of distinct known variables.

    ``what`` names it in the error (``'crossing'``, ``'margin'``).
    """
    c = (crossing,) if isinstance(crossing, str) else tuple(crossing)
    for v in c:
        if v not in names:
            raise InvalidArgumentError(
                f"{what} {list(c)} names unknown variable {v!r}; the table has variables {list(names)}."
            )
    if len(set(c)) != len(c):
        raise InvalidArgumentError(f"{what} {list(c)} repeats a variable.")
    return c


def _crossings_from(spec: Any, names: Sequence[str]) -> tuple[tuple[tuple[str, ...], ...], frozenset[frozenset[str]]]:
    """The crossings a formula (or a list of crossings) names, and the crossings its ``-`` removes."""
    removed: frozenset[frozenset[str]] = frozenset()
    if isinstance(spec, (str, Formula)):
        f = parse_formula(spec, names)
        out = ([()] if f.intercept else []) + [tuple(t) for t in f.terms]
        removed = frozenset(frozenset(t) for t in f.removed)
    else:
        if isinstance(spec, Mapping) or not isinstance(spec, Iterable):
            raise InvalidArgumentError(
                "a publication is a formula such as 'party*age + party*sex' or a list of crossings such as "
                f"[(), ('party',), ('party', 'age')]. Got {spec!r}."
            )
        out = [check_crossing(c, names) for c in spec]
    # drop duplicates (same set of variables), keep the first spelling
    seen: set[frozenset[str]] = set()
    uniq = []
    for c in out:
        key = frozenset(c)
        if key not in seen:
            seen.add(key)
            uniq.append(c)
    if not uniq:
        raise InvalidArgumentError("the publication has no crossings; name at least one, or keep the grand total.")
    return tuple(uniq), removed


@dataclass(frozen=True, eq=False)
class Publication:
    """The published cells of a table: crossings of its variables and the dummy matrix X.

    Build it with :meth:`from_formula` (or :meth:`from_crossings`); the constructor takes the
    finished arrays.

    Attributes
    ----------
    variables : tuple of Variable
        The inner table's variables (flat-index order).
    crossings : tuple of tuple of str
        The published crossings; ``()`` is the grand total.
    inner_index : ndarray of int64
        Flat indices of the inner cells (the rows of X), sorted.
    crossing : ndarray of int
        For each published cell, the position of its crossing in :attr:`crossings`.
    margin_index : ndarray of int64
        For each published cell, its flat index within its crossing's margin (row-major over the
        crossing's variables, in the crossing's order).
    incidence : tuple of two ndarrays of int64
        The non-zeros of X: for each (inner cell, published cell) pair where the inner cell counts
        in the published cell, its row and its column.
    X : scipy.sparse.csr_matrix
        ``n_inner x n_published`` 0/1 matrix (float64): ``X[i, c] = 1`` when inner cell i counts in
        published cell c.  Built from ``incidence`` on first use (scipy is not imported before).
    total_label : str
        The label of an aggregated variable in :meth:`cells` (default ``'Total'``).
    hierarchies : dict of str to Hierarchy
        The hierarchies of variables whose levels the crossings name (empty for flat publications).
    """

    variables: tuple[Variable, ...]
    crossings: tuple[tuple[str, ...], ...]
    inner_index: np.ndarray
    crossing: np.ndarray
    margin_index: np.ndarray
    incidence: tuple[np.ndarray, np.ndarray] = field(repr=False)
    total_label: str = "Total"
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_formula(
        cls,
        table: CountTable | Sequence[Variable],
        formula: str | Formula | Sequence[Sequence[str]],
        *,
        inner_index: Any = None,
        zeros: bool | None = None,
        total_label: str = "Total",
        max_inner: int = DEFAULT_MAX_INNER,
        hierarchies: Mapping[str, Hierarchy | Sequence[Hierarchy]] | None = None,
    ) -> "Publication":
        """The publication of a formula (or of an explicit list of crossings).

        Parameters
        ----------
        table : CountTable or sequence of Variable
            The inner table (or just its variables).
        formula : str or list of crossings
            ``'party*age + party*sex'`` (R's notation; the grand total is included unless the
            formula says ``- 1``), or crossings such as ``[(), ('party',), ('party', 'age')]``.
        inner_index : array of int, optional
            Flat indices of the inner cells to include (the rows of X); overrides ``zeros``.
        zeros : bool, optional
            Whether the inner cells include the zero-frequency combinations.  By default (None) a
            CountTable's non-zero cells only, and every combination for bare variables.  True adds
            every combination of categories except structural zeros ("adding the zero-frequency
            inner combinations", 001 section 7; R's ``extend0``), refused beyond ``max_inner``
            cells; False needs a CountTable.
        total_label : str, default 'Total'
            How an aggregated variable is written in :meth:`cells`.
        max_inner : int, default 1e7
            The most inner cells enumerated with the zero combinations.
        hierarchies : dict of str to Hierarchy (or list of them), optional
            Hierarchies of variables: a term naming such a variable stands for every level of its
            hierarchy and its leaves; a term naming a level, for that level (a list of hierarchies
            of one variable combines their levels).

        Examples
        --------
        >>> from cellsafe.table import Variable
        >>> vs = [Variable("a", ["x", "y"]), Variable("b", ["u", "v", "w"])]
        >>> pub = Publication.from_formula(vs, "a + b")
        >>> pub.n_inner, pub.n_published
        (6, 6)
        >>> pub.cells().values.tolist()[:3]
        [['Total', 'Total'], ['x', 'Total'], ['y', 'Total']]

        A hierarchy's levels are named in the formula; cells show the aggregate's code:

        >>> h = Hierarchy.from_groups({"xy": ["x", "y"]}, ["x", "y"], level="both")
        >>> Publication.from_formula(vs, "both*b", hierarchies={"a": h}).cells().values.tolist()[:2]
        [['Total', 'Total'], ['xy', 'Total']]

        Naming the variable publishes all of its levels:

        >>> Publication.from_formula(vs, "a*b", hierarchies={"a": h}).crossings
        ((), ('both',), ('a',), ('b',), ('both', 'b'), ('a', 'b'))

        A table publishes its non-zero cells unless the zero combinations are asked for:

        >>> t = CountTable.from_dense([[2, 0, 1], [0, 0, 3]], vs)
        >>> Publication.from_formula(t, "a*b").n_published, Publication.from_formula(t, "a*b", zeros=True).n_published
        (8, 12)

        Notes
        -----
        Only non-zero inner cells by default: zero cells change no published count, and for small
        count rounding they would only add cells to round (R's ``PLSrounding`` likewise leaves
        them out unless ``extend0 = TRUE``).  Post-processing to expected inner frequencies and
        the cell key method's ONS convention, which publish empty cells, ask for ``zeros=True``.
        """
        if isinstance(table, CountTable):
            variables = table.variables
            structural = table.structural_zeros
        else:
            variables = tuple(table)
            for v in variables:
                if not isinstance(v, Variable):
                    raise InvalidArgumentError(
                        f"a publication needs a CountTable or a list of cellsafe.Variable. Got {type(v).__name__}."
                    )
            structural = np.zeros(0, dtype=INDEX_DTYPE)
        names = [v.name for v in variables]
        if not isinstance(total_label, str) or not total_label:
            raise InvalidArgumentError(f"total_label must be a non-empty string. Got {total_label!r}.")
        for v in variables:
            if total_label in v.categories:
                raise InvalidArgumentError(
                    f"variable {v.name!r} has a category {total_label!r}, which is reserved: the published cells write "
                    f"{total_label!r} where a variable is aggregated, so the two would be one cell. Recode that category "
                    f"in the data (for example '{total_label} ({v.name})'), or from Python pass another total_label."
                )
        hier = _check_hierarchies(hierarchies, variables, total_label)
        terms = _terms(variables, hier)
        crossings = _with_every_level(*_crossings_from(formula, list(terms)), hier)
        for c in crossings:
            used = [terms[t][0] for t in c]
            if len(set(used)) != len(used):
                dup = next(v for v in used if used.count(v) > 1)
                raise InvalidArgumentError(
                    f"crossing {list(c)} names variable {dup!r} twice (through its levels); a crossing takes one level "
                    "of each variable."
                )
        shape = [v.size for v in variables]
        n_cells = math.prod(shape)
        if zeros is not None and not isinstance(zeros, (bool, np.bool_)):
            raise InvalidArgumentError(f"zeros must be True, False or None. Got {zeros!r}.")
        if inner_index is None:
            if zeros is None:
                zeros = not isinstance(table, CountTable)
            n_open = n_cells - structural.shape[0]
            if not zeros:
                if not isinstance(table, CountTable):
                    raise InvalidArgumentError("zeros=False needs a CountTable (its non-zero cells are the inner cells).")
                idx = np.asarray(table.index, dtype=INDEX_DTYPE)
            elif n_open <= max_inner:
                idx = np.arange(n_cells, dtype=INDEX_DTYPE)
                if structural.shape[0]:
                    # both sorted: drop the structural zeros by position, not by hashing
                    idx = np.delete(idx, structural)
            else:
                raise TableTooLargeError(
                    f"the inner table has {float(n_open):.3g} cells with its zero combinations, more than "
                    f"max_inner={max_inner:.3g}; pass inner_index (the cells that may be positive), or a CountTable "
                    "without zeros=True to use its non-zero cells."
                )
        else:
            idx = np.unique(np.asarray(inner_index, dtype=INDEX_DTYPE))
            if idx.size and (idx[0] < 0 or idx[-1] >= n_cells):
                raise DataError(f"inner_index must hold flat indices in [0, {n_cells}).")
        if idx.size == 0:
            raise DataError("the publication has no inner cells.")
        codes: np.ndarray | None = None
        rows, cols, crossing_of, margin_of = [], [], [], []
        offset = 0
        n = idx.shape[0]
        arange = np.arange(n, dtype=np.int64)
        for k, c in enumerate(crossings):
            if all(terms[t][2] is None for t in c):
                pos = [names.index(v) for v in c]
                if pos == list(range(len(names))):  # every variable in order: the keys are the flat indices
                    keys = idx
                elif pos:
                    codes = unravel(idx, shape) if codes is None else codes
                    keys = ravel(codes[:, pos], [shape[p] for p in pos])
                else:
                    keys = np.zeros(n, dtype=INDEX_DTYPE)
                r = arange
            else:
                codes = unravel(idx, shape) if codes is None else codes
                r, keys = _expand(codes, [(names.index(terms[t][0]), terms[t][1], terms[t][2]) for t in c])
            uniq, inv = _unique_inverse(keys)
            rows.append(r)
            cols.append(offset + inv.reshape(-1))
            crossing_of.append(np.full(uniq.shape[0], k, dtype=np.int64))
            margin_of.append(uniq)
            offset += uniq.shape[0]
        return cls(
            variables=tuple(variables),
            crossings=crossings,
            inner_index=_ro(idx),
            crossing=_ro(np.concatenate(crossing_of)),
            margin_index=_ro(np.concatenate(margin_of).astype(INDEX_DTYPE)),
            incidence=(_ro(np.concatenate(rows)), _ro(np.concatenate(cols).astype(np.int64, copy=False))),
            total_label=total_label,
            hierarchies=hier,
        )

    from_crossings = from_formula

    @functools.cached_property
    def X(self) -> Any:
        """The ``n_inner x n_published`` 0/1 dummy matrix (scipy.sparse CSR, float64)."""
        import scipy.sparse as sp

        rows, cols = self.incidence
        return sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(self.n_inner, self.n_published))

    @functools.cached_property
    def _by_cell(self) -> tuple[np.ndarray, np.ndarray]:
        """X in compressed-column form without scipy: inner rows grouped by published cell, and the group starts."""
        rows, cols = self.incidence
        starts = np.zeros(self.n_published + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=self.n_published), out=starts[1:])
        if cols.size < 2 or np.all(cols[1:] >= cols[:-1]):  # already by published cell (one crossing)
            return rows, _ro(starts)
        return _ro(rows[np.argsort(cols, kind="stable")]), _ro(starts)

    def sum_by_cell(self, inner: np.ndarray) -> np.ndarray:
        """For each published cell, the sum of ``inner`` over its inner cells, in the dtype of ``inner``.

        Integer sums are exact (and wrap around modulo 2^64 for unsigned integers, which modular
        key sums rely on).  Every published cell has at least one inner cell.
        """
        rows, starts = self._by_cell
        if rows.shape[0] == 0:
            return np.zeros(self.n_published, dtype=inner.dtype)
        if rows.shape[0] == self.n_published:  # one inner cell per published cell: nothing to add
            return inner[rows]
        return np.add.reduceat(inner[rows], starts[:-1])

    # ------------------------------------------------------------------ sizes
    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    @property
    def n_inner(self) -> int:
        """Number of inner cells (rows of X)."""
        return int(self.inner_index.shape[0])

    def inner_positions(self, index: np.ndarray) -> np.ndarray | None:
        """Each flat index's row among the inner cells (``index`` sorted, e.g. a table's non-zero cells), or None
        where one is not an inner cell.  Inner cells that are all of 0..n_inner - 1 (a crossing of every
        variable, zeros included) are their own rows: no search."""
        n, inner = self.n_inner, self.inner_index
        if not index.size:
            return np.zeros(0, dtype=np.intp)
        if not n:
            return None
        if inner[0] == 0 and inner[-1] == n - 1:  # sorted and distinct: exactly 0..n - 1
            return index if index[0] >= 0 and index[-1] < n else None
        # both sorted: a binary search, not a hash-based set difference
        pos = np.minimum(np.searchsorted(inner, index), n - 1)
        return pos if np.array_equal(inner[pos], index) else None

    @property
    def n_published(self) -> int:
        """Number of published cells (columns of X)."""
        return int(self.crossing.shape[0])

    def generating_crossings(self) -> tuple[tuple[str, ...], ...]:
        """The maximal crossings (not contained in another): the margins an IPF fit needs."""
        sets = [frozenset(c) for c in self.crossings]
        return tuple(c for c, s in zip(self.crossings, sets) if c and not any(s < o for o in sets))

    def __repr__(self) -> str:
        cr = " + ".join(":".join(c) if c else "1" for c in self.crossings)
        return f"Publication('{cr}', n_inner={self.n_inner:,}, n_published={self.n_published:,})"

    # ------------------------------------------------------------------ values
    def inner_counts(self, table: CountTable) -> np.ndarray:
        """The table's counts at the inner cells (zeros included), aligned with the rows of X."""
        self._check_table(table)
        return np.asarray(table.lookup(self.inner_index))

    def aggregate(self, values: CountTable | Any) -> np.ndarray:
        """Published counts ``X^T y`` of a table (or of inner values aligned with the rows of X).

        Integer tables give exact int64 sums; fitted tables give float64.
        """
        if isinstance(values, CountTable):
            self._check_table(values)
            if values.is_integer and (values.index is self.inner_index or np.array_equal(values.index, self.inner_index)):
                return self.sum_by_cell(np.asarray(values.counts, dtype=np.int64))  # a publication of this table's cells
            rows = self.inner_positions(values.index)
            if rows is None:
                pos = np.minimum(np.searchsorted(self.inner_index, values.index), max(self.n_inner - 1, 0))
                missing = values.index[self.inner_index[pos] != values.index] if self.n_inner else values.index
                raise DataError(
                    f"the table has {missing.size} non-zero cell(s) outside the publication's inner cells, for example "
                    f"({values.describe_cells(missing[:1])[0]}); build the publication from this table."
                )
            y = np.zeros(self.n_inner, dtype=values.counts.dtype)  # the table's counts at the inner cells
            y[rows] = values.counts
        else:
            y = np.asarray(values)
            if y.shape != (self.n_inner,):
                raise DataError(f"inner values must have length {self.n_inner} (the rows of X). Got shape {y.shape}.")
        if np.issubdtype(y.dtype, np.integer):
            return self.sum_by_cell(y.astype(np.int64, copy=False))
        return np.asarray(self.X.T @ y.astype(np.float64)).reshape(-1)

    @property
    def is_hierarchical(self) -> bool:
        """True when some crossing names a level of a hierarchy."""
        return bool(self.hierarchies)

    def term_labels(self, term: str) -> tuple[str, np.ndarray]:
        """The variable a crossing's term belongs to, and the labels of its cells (categories or codes)."""
        for v in self.variables:
            if term == v.name:
                return v.name, np.asarray(list(v.categories) + [None], dtype=object)[:-1]
        for var, h in self.hierarchies.items():
            if term in h.levels:
                return var, np.asarray(list(h.levels[term]) + [None], dtype=object)[:-1]
        raise InvalidArgumentError(f"{term!r} is neither a variable nor a hierarchy level of {self!r}.")

    def cell_codes(self) -> dict[str, tuple[list[Any], np.ndarray]]:
        """The published cells' labels in coded form: per variable, its labels and each cell's code.

        Label 0 is ``total_label`` (the variable is aggregated); then come the labels of each term
        of the variable (its categories, or a hierarchy level's codes).  :meth:`cells` is the same
        in long format; this form lets a writer format each distinct label once.
        """
        labels: dict[str, list[Any]] = {v.name: [self.total_label] for v in self.variables}
        codes = {v.name: np.zeros(self.n_published, dtype=INDEX_DTYPE) for v in self.variables}
        offsets: dict[str, tuple[str, int, int]] = {}
        for c in self.crossings:
            for t in c:
                if t not in offsets:
                    var, labs = self.term_labels(t)
                    offsets[t] = (var, len(labels[var]), labs.shape[0])
                    labels[var].extend(labs.tolist())
        for k, c in enumerate(self.crossings):
            if not c:
                continue
            sel = np.flatnonzero(self.crossing == k)
            sub = unravel(self.margin_index[sel], [offsets[t][2] for t in c])
            for i, t in enumerate(c):
                var, start, _ = offsets[t]
                codes[var][sel] = start + sub[:, i]
        return {name: (labels[name], codes[name]) for name in labels}

    def cells(self) -> pd.DataFrame:
        """The published cells in long format: one column per variable (a category, an aggregate's code, or ``Total``)."""
        data = {}
        for name, (labels, codes) in self.cell_codes().items():
            table = np.empty(len(labels), dtype=object)
            for i, label in enumerate(labels):  # one per label (never per cell); tuples stay whole
                table[i] = label
            data[name] = table[codes]
        return pd.DataFrame(data)

    def frame(self, values: Any, name: str = "count") -> pd.DataFrame:
        """:meth:`cells` with a column of values (aligned with the published cells)."""
        values = np.asarray(values)
        if values.shape != (self.n_published,):
            raise DataError(f"expected {self.n_published} published values. Got shape {values.shape}.")
        out = self.cells()
        out[name] = values
        return out

    def align(self, frame: Any, count: str = "count") -> np.ndarray:
        """Values of a long-format published frame, in the order of the published cells.

        The frame has one column per variable (a category, or ``Total``) and a ``count`` column;
        cells it does not list are NaN (a published cell missing from the file), rows that match no
        published cell are an error.
        """
        df = as_pandas(frame, "published")
        names = self.names
        missing = [c for c in names + [count] if c not in df.columns]
        if missing:
            raise DataError(
                f"the published table lacks column {missing[0]!r}; it needs one column per variable ({names}) and "
                f"{count!r}, with {self.total_label!r} where a cell aggregates."
            )
        mine = self.cells()
        key_mine = _keys(mine, names)
        key_theirs = _keys(df, names)
        lookup = pd.Series(np.arange(len(mine)), index=pd.Index(key_mine))
        pos = lookup.reindex(pd.Index(key_theirs)).to_numpy()
        bad = np.flatnonzero(pd.isna(pos))
        if bad.size:
            row = df.iloc[bad[0]]
            cell = ", ".join(f"{n}={row[n]!r}" for n in names)
            raise DataError(
                f"row {df.index[bad[0]]!r} of the published table ({cell}) is not a cell of the publication "
                f"{self!r}; check the formula and the categories."
            )
        pos = pos.astype(np.int64)
        if np.unique(pos).shape[0] != pos.shape[0]:
            raise DataError("the published table lists a cell more than once.")
        vals = _numbers(df, count)
        out = np.full(self.n_published, np.nan)
        out[pos] = vals
        return out

    def margin_table(self, values: Any, crossing: Sequence[str]) -> CountTable:
        """The published cells of one (non-empty) crossing as a CountTable (for IPF targets)."""
        if self.is_hierarchical:
            raise InvalidArgumentError("margin_table is defined for publications of variables only; use X for hierarchical ones.")
        c = tuple(crossing)
        k = [i for i, cc in enumerate(self.crossings) if frozenset(cc) == frozenset(c)]
        if not k or not c:
            raise InvalidArgumentError(f"{list(c)} is not a non-empty crossing of {self!r}.")
        cc = self.crossings[k[0]]
        sel = self.crossing == k[0]
        vals = np.asarray(values, dtype=np.float64)[sel]
        bad = ~np.isfinite(vals) | (vals < 0)
        if bad.any():
            raise DataError(
                f"published cells of crossing {list(cc)} must be finite and non-negative to be fitted; restore "
                "additivity first (restore_additivity) when cells are missing or negative."
            )
        vars_ = [self.variables[self.names.index(v)] for v in cc]
        return CountTable(vars_, self.margin_index[sel], vals)

    def additivity_error(self, values: Any) -> float:
        """Largest disagreement between crossings that share variables (0 for an additive table).

        Each crossing is compared with every maximal crossing that contains it, and maximal crossings
        are compared on the variables they share (by summing the larger one).
        """
        vals = np.asarray(values, dtype=np.float64)
        if vals.shape != (self.n_published,) or not np.all(np.isfinite(vals)):
            return math.inf
        if self.is_hierarchical:
            return _residual_of_best_fit(self.X, vals)
        gen = self.generating_crossings()
        names = self.names
        shape = {v.name: v.size for v in self.variables}

        def dense_of(k: int) -> np.ndarray:
            cc = self.crossings[k]
            sel = self.crossing == k
            arr = np.zeros(math.prod(shape[v] for v in cc) if cc else 1)
            arr[self.margin_index[sel]] = vals[sel]
            # put axes in table order
            arr = arr.reshape([shape[v] for v in cc]) if cc else arr.reshape(())
            order = sorted(range(len(cc)), key=lambda i: names.index(cc[i]))
            return np.transpose(arr, order) if cc else arr

        def reduce_to(arr: np.ndarray, have: tuple[str, ...], want: Iterable[str]) -> np.ndarray:
            have_sorted = sorted(have, key=names.index)
            want = set(want)
            axes = tuple(i for i, v in enumerate(have_sorted) if v not in want)
            return arr.sum(axis=axes) if axes else arr

        cache = {frozenset(c): dense_of(k) for k, c in enumerate(self.crossings)}
        err = 0.0
        for c in self.crossings:
            for g in gen:
                if frozenset(c) < frozenset(g):
                    d = reduce_to(cache[frozenset(g)], g, c) - cache[frozenset(c)]
                    err = max(err, float(np.max(np.abs(d))))
        for i, g in enumerate(gen):
            for h in gen[i + 1 :]:
                common = set(g) & set(h)
                a = reduce_to(cache[frozenset(g)], g, common)
                b = reduce_to(cache[frozenset(h)], h, common)
                err = max(err, float(np.max(np.abs(a - b))))
        return err

    def _check_table(self, table: CountTable) -> None:
        if tuple(table.variables) != tuple(self.variables):
            raise DataError(
                f"the table's variables {table.names} (or their categories) differ from the publication's {self.names}."
            )


def check_publication_spec(value: Any, owner: str, *, none_ok: bool = False) -> Any:
    """``value`` if it can describe a publication (a formula, a list of crossings or a Publication).

    The shape is checked when a mechanism is configured; the names are checked against a table
    when it is used (:func:`publication_for`).
    """
    if (value is None and none_ok) or isinstance(value, (str, Publication, list, tuple)):
        return value
    raise InvalidArgumentError(
        f"The 'publication' parameter of {owner} must be a formula such as 'a*b + c', a list of crossings or a "
        f"Publication. Got {type(value).__name__} instead."
    )


def publication_for(table: CountTable, spec: Any, *, zeros: bool | None = None) -> Publication:
    """``spec`` (a Publication, a formula or a list of crossings) as a publication of ``table``'s cells.

    A given Publication must be on the table's variables and categories (DataError otherwise); a
    formula is built with :meth:`Publication.from_formula` and ``zeros``.
    """
    if isinstance(spec, Publication):
        spec._check_table(table)
        return spec
    return Publication.from_formula(table, spec, zeros=zeros)


def _with_every_level(
    crossings: tuple[tuple[str, ...], ...], removed: frozenset[frozenset[str]], hier: Mapping[str, Hierarchy]
) -> tuple[tuple[str, ...], ...]:
    """Each crossing that names a variable with a hierarchy, once per level of it (top first) and once with its leaves.

    tau-Argus's meaning (and SSBtools' with hierarchies): a hierarchical variable in a table brings every level
    of its hierarchy; a level named in the formula stands for itself alone.  A crossing the formula removes
    (``- k_group``) is not brought back by a variable's levels.  Crossings already present keep their place
    (the first spelling wins).
    """
    if not hier:
        return crossings
    out: list[tuple[str, ...]] = []
    seen: set[frozenset[str]] = set()
    for c in crossings:
        choices = [[*hier[t].levels, t] if t in hier else [t] for t in c]
        for combo in itertools.product(*choices):
            key = frozenset(combo)
            if combo != c and key in removed:
                continue
            if key not in seen:
                seen.add(key)
                out.append(tuple(combo))
    return tuple(out)


def _check_hierarchies(hierarchies: Any, variables: Sequence[Variable], total_label: str = "Total") -> dict[str, Hierarchy]:
    if hierarchies is None:
        return {}
    if not isinstance(hierarchies, Mapping):
        raise InvalidArgumentError(f"hierarchies must be a dict such as {{'geo': Hierarchy}}. Got {type(hierarchies).__name__}.")
    names = [v.name for v in variables]
    out: dict[str, Hierarchy] = {}
    for var, h in hierarchies.items():
        if var not in names:
            raise InvalidArgumentError(f"hierarchies names unknown variable {var!r}; the table has variables {names}.")
        hs = [h] if isinstance(h, Hierarchy) else list(h)
        if not hs or not all(isinstance(x, Hierarchy) for x in hs):
            raise InvalidArgumentError(f"the hierarchy of {var!r} must be a cellsafe.Hierarchy (or a list of them).")
        out[var] = hs[0] if len(hs) == 1 else Hierarchy.combine(*hs)
        if total_label in out[var].groups:
            raise InvalidArgumentError(
                f"the hierarchy of {var!r} has an aggregate coded {total_label!r}, the label of the grand total in the "
                "published cells; the grand total is published anyway: drop that code (a root row coded 'Total' is "
                "dropped when read), or pass another total_label."
            )
    return out


def _terms(variables: Sequence[Variable], hier: Mapping[str, Hierarchy]) -> dict[str, tuple[str, int, Any]]:
    """Every name a formula may use: variable -> (variable, size, None); level -> (variable, n codes, membership)."""
    terms: dict[str, tuple[str, int, Any]] = {v.name: (v.name, v.size, None) for v in variables}
    by_name = {v.name: v for v in variables}
    for var, h in hier.items():
        for level in h.levels:
            if level in terms:
                raise InvalidArgumentError(
                    f"level {level!r} of the hierarchy of {var!r} has the name of a variable or of another level; rename it."
                )
            M = h.membership(level, by_name[var].categories).tocsr()
            terms[level] = (var, M.shape[1], M)
    return terms


def _expand(codes: np.ndarray, parts: list[tuple[int, int, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """(inner row, cell key) pairs of a crossing whose terms may be hierarchy levels.

    ``parts`` holds, per term, the variable's column in ``codes``, the term's number of cells and
    its membership matrix (None for the variable itself).  An inner cell counts once per aggregate
    of each level that holds its category (none, one, or several when aggregates overlap): the
    pairs are repeated accordingly, without a Python loop over cells.
    """
    n = codes.shape[0]
    r = np.arange(n, dtype=np.int64)
    key = np.zeros(n, dtype=INDEX_DTYPE)
    for p, size, M in parts:
        col = codes[r, p]
        if M is None:
            key = key * size + col
            continue
        cnt = np.diff(M.indptr)[col]
        first = M.indptr[col]
        r = np.repeat(r, cnt)
        key = np.repeat(key, cnt)
        within = np.arange(r.shape[0]) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        key = key * size + M.indices[np.repeat(first, cnt) + within]
    return r, key


def _unique_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and the position of each key among them (``np.unique(keys, return_inverse=True)``).

    By a stable sort, or none for keys already in order (numpy's unique hashes int64 keys, several
    times slower).
    """
    keys = np.asarray(keys)
    if keys.size == 0:
        return keys, np.zeros(0, dtype=np.int64)
    if np.all(keys[1:] >= keys[:-1]):
        first = np.empty(keys.size, dtype=bool)
        first[0] = True
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        return keys[first], np.cumsum(first) - 1
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    first = np.empty(sk.size, dtype=bool)
    first[0] = True
    np.not_equal(sk[1:], sk[:-1], out=first[1:])
    inv = np.empty(keys.size, dtype=np.int64)
    inv[order] = np.cumsum(first) - 1
    return sk[first], inv


def _residual_of_best_fit(X: Any, z: np.ndarray) -> float:
    """Largest |z - X^T y| at the least-squares y: 0 (to rounding) exactly when z is additive."""
    from scipy.sparse.linalg import lsqr

    scale = max(1.0, float(np.max(np.abs(z)))) if z.size else 1.0
    y = lsqr(X.T.tocsr(), z / scale, atol=1e-14, btol=1e-14, iter_lim=20 * X.shape[0] + 100)[0]
    return float(np.max(np.abs(X.T @ y - z / scale))) * scale if z.size else 0.0


def _numbers(df: pd.DataFrame, column: str) -> np.ndarray:
    """A published value column as numbers: empty (missing) where a cell is withheld, anything else a number.

    A value that is neither (``'seven'``, ``'NA'``) is refused with its row, never read as a withheld cell.
    """
    raw = df[column]
    vals = pd.to_numeric(raw, errors="coerce")
    bad = np.flatnonzero((vals.isna() & raw.notna() & (raw.astype(str).str.strip() != "")).to_numpy())
    if bad.size:
        raise DataError(
            f"row {df.index[bad[0]]!r} of the published table has {column!r} = {raw.iloc[bad[0]]!r}, which is not a "
            "number; a withheld cell is left empty."
        )
    return vals.to_numpy(dtype=np.float64)


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _keys(df: pd.DataFrame, names: list[str]) -> list[tuple[str, ...]]:
    cols = [df[n].astype(str).to_numpy() for n in names]
    return list(zip(*cols))
