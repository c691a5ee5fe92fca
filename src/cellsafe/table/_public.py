"""The public domain of a release: the categories of each variable, given by the data holder.

A differentially private release may treat as known only what is public.  The categories of the
variables are part of the output (every cell of the domain can appear in a synthetic table), so
they must not be read from the confidential records: one record with a category nobody else has
would otherwise add a category, and its mere presence would be disclosed with an unbounded privacy
loss.  :class:`Domain` holds the categories the caller gives (``Variable`` objects, a mapping, or a
file), builds tables on exactly those categories, and either refuses records outside them or drops
them, as the caller chooses; it never adds a category.  Its :attr:`Domain.sha256` identifies it in
manifests: the same categories in the same order give the same hash, whatever file held them.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError
from .._catalog import OUTSIDE_CHOICES  # what to do with records outside the domain (also read by the CLI)
from ._bins import Bins
from ._flat import ravel, unravel
from ._table import CountTable, _trusted_table
from ._variable import Variable

__all__ = ["Domain", "OUTSIDE_CHOICES", "public_table"]


class Domain:
    """The public categories of each variable (the domain of a release).

    Parameters
    ----------
    variables : sequence of Variable, or mapping of name to categories or Bins
        The variables and their categories, in the order given.  A numeric variable given as
        :class:`Bins` (public cut points) has the intervals' labels as its categories, and its
        records' numbers are read through the bins (:attr:`bins`).

    Examples
    --------
    >>> import pandas as pd
    >>> d = Domain({"sex": ["F", "M"], "region": ["N", "S", "W"]})
    >>> records = pd.DataFrame({"sex": ["F", "M", "X"], "region": ["N", "S", "N"]})
    >>> table, dropped = d.table(records, outside="drop")
    >>> table.n_cells, int(table.total), dropped
    (6, 2, 1)
    """

    def __init__(self, variables: "Sequence[Variable] | Mapping[str, Iterable[Hashable] | Bins]") -> None:
        labelled, self.bins = _split_bins(variables)
        if isinstance(labelled, Mapping):
            vs = [Variable(str(name), tuple(cats), public=True) for name, cats in labelled.items()]
        else:
            vs = list(labelled)
            if not all(isinstance(v, Variable) for v in vs):
                raise InvalidArgumentError(
                    "A Domain takes cellsafe.Variable objects or a mapping of variable name to categories. "
                    f"Got {variables!r} instead."
                )
            vs = [v if v.public else Variable(v.name, v.categories, public=True) for v in vs]
        if not vs:
            raise InvalidArgumentError("A Domain needs at least one variable with its categories.")
        names = [v.name for v in vs]
        if len(set(names)) != len(names):
            raise InvalidArgumentError(f"A Domain names each variable once. Got {names}.")
        self.variables: tuple[Variable, ...] = tuple(vs)

    # ------------------------------------------------------------------ construction from a file
    @classmethod
    def read(cls, path: "str | Path") -> "Domain":
        """Read a domain file: JSON mapping each variable to its list of categories, or a CSV of variable,category.

        In JSON a numeric variable may map to ``{"bins": [edges]}`` (optionally ``"labels"``): its
        public bins (:class:`Bins`).

        Categories are read as text (as CSV records are); JSON numbers are written as text too,
        so ``1`` and ``"1"`` name the same category.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise DataError(f"no domain file at {str(p)!r}.") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"cannot read the domain file {str(p)!r}: {exc}.") from None
        if p.suffix.lower() == ".json":
            return cls(_json_mapping(text, p))
        if p.suffix.lower() == ".csv":
            return cls(_csv_mapping(text, p))
        raise InvalidArgumentError(
            f"the domain file {str(p)!r} must end in .json (variable -> list of categories) or .csv "
            "(columns variable,category)."
        )

    # ------------------------------------------------------------------ views
    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    def __getitem__(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise DataError(
            f"variable {name!r} is not in the domain (variables {self.names}); add it with its public categories."
        )

    def select(self, names: Sequence[str]) -> "Domain":
        """The domain of these variables, in this order (a name outside the domain is an error)."""
        out = Domain([self[n] for n in names])
        out.bins = {n: self.bins[n] for n in names if n in self.bins}
        return out

    @property
    def n_cells(self) -> int:
        return int(np.prod([v.size for v in self.variables], dtype=object))

    def to_dict(self) -> dict[str, Any]:
        """Variable name -> list of categories (JSON-ready when the categories are); a binned one -> its edges."""
        return {v.name: self.bins[v.name].to_json() if v.name in self.bins else [_plain(c) for c in v.categories]
                for v in self.variables}

    @property
    def sha256(self) -> str:
        """The sha256 of the canonical JSON of :meth:`to_dict` (variables and categories in order)."""
        canon = json.dumps([[k, v] for k, v in self.to_dict().items()], separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canon.encode("utf-8")).hexdigest()

    def check_table(self, table: CountTable) -> None:
        """Refuse a table whose variables or categories differ from the domain's."""
        mine = self.select(table.names).variables
        for v, w in zip(table.variables, mine):
            if tuple(v.categories) != tuple(w.categories):
                raise DataError(
                    f"variable {v.name!r} of the table has categories {_shown(v.categories)}, not the domain's "
                    f"{_shown(w.categories)}; build the table on the domain (Domain.table)."
                )

    # ------------------------------------------------------------------ tables on the domain
    def table(
        self,
        source: Any,
        names: Sequence[str] | None = None,
        *,
        count: str | None = None,
        outside: str = "error",
        structural_zeros: Any = None,
    ) -> tuple[CountTable, int]:
        """Count records (or sum a frequency column) on the domain's categories.

        Parameters
        ----------
        source : DataFrame, or path to a CSV or Parquet file
            Records, or a frequency table with ``count``.
        names : sequence of str, optional
            The variables to cross (default: all the domain's, in its order).
        count : str, optional
            The frequency column.
        outside : {"error", "drop"}
            Records with a value outside the domain: a :class:`DataError` naming the first, or
            dropped.  They never add a category.
        structural_zeros : optional
            As for :meth:`CountTable.from_frame`.

        Returns
        -------
        (CountTable, int)
            The table, with exactly the domain's categories, and the number of records dropped
            (the sum of their counts with ``count``).  The number dropped depends on the
            confidential data: report it to the data holder, never with the release.
        """
        if outside not in OUTSIDE_CHOICES:
            raise InvalidArgumentError(f"'outside' must be one of {OUTSIDE_CHOICES}. Got {outside!r} instead.")
        dom = self.select(list(names) if names is not None else self.names)
        frame, count = _frame(source, dom.names, count)
        kept, dropped = dom.restrict(frame, count=count, outside=outside)
        table = CountTable.from_frame(kept, list(dom.variables), count=count, structural_zeros=structural_zeros)
        return dom._on_variables(table), dropped

    def _on_variables(self, table: CountTable) -> CountTable:
        """The same cells on this domain's (public) variables; the categories must be the same, in order."""
        return _trusted_table(self.variables, table.index, table.counts, table._structural, table.n_cells)

    def adopt(self, table: CountTable) -> CountTable:
        """The table's cells on this domain's public categories (recoded where their order differs).

        Parameters
        ----------
        table : CountTable
            A table whose variables are all in the domain, each with categories the domain holds
            (a table counted from records has the categories that occur, in sorted order).

        Returns
        -------
        CountTable
            On the domain's variables (in the table's order), flagged public.

        Raises
        ------
        DataError
            When a category of the table is not in the domain: it was read from the records and
            would be disclosed by the release.

        Examples
        --------
        >>> import pandas as pd
        >>> records = pd.DataFrame({"country": ["Fiji", "Tonga", "Fiji"]})
        >>> t = CountTable.from_frame(records, ["country"])
        >>> d = Domain({"country": ["Samoa", "Tonga", "Fiji"]})
        >>> on = d.adopt(t)
        >>> on.variables[0].categories, on.index.tolist(), on.counts.tolist()
        (('Samoa', 'Tonga', 'Fiji'), [1, 2], [1, 2])
        """
        dom = self.select(table.names)
        if all(tuple(v.categories) == tuple(w.categories) for v, w in zip(table.variables, dom.variables)):
            return dom._on_variables(table)
        lookups = []
        for v, w in zip(table.variables, dom.variables):
            pos = {c: i for i, c in enumerate(w.categories)}
            missing = [c for c in v.categories if c not in pos]
            if missing:
                raise DataError(
                    f"category {_plain(missing[0])!r} of variable {v.name!r} is not in the public domain "
                    f"{_shown(w.categories)}: a category read from the records would be disclosed by the release. "
                    "Build the table with Domain.table(records, outside='drop') or add the category to the domain "
                    "if it is public."
                )
            lookups.append(np.array([pos[c] for c in v.categories], dtype=np.int64))
        shape = [w.size for w in dom.variables]

        def recode(index: np.ndarray) -> np.ndarray:
            codes = unravel(index, table.shape)
            return ravel(np.column_stack([lk[codes[:, j]] for j, lk in enumerate(lookups)]), shape)

        sz = table.structural_zeros
        return CountTable(list(dom.variables), recode(table.index), table.counts, recode(sz) if sz.size else None)

    def restrict(self, frame: Any, *, count: str | None = None, outside: str = "error") -> tuple[pd.DataFrame, int]:
        """The rows of ``frame`` inside the domain, and the number of records left out.

        Parameters
        ----------
        frame : DataFrame
            Records or cells, with a column for every variable of the domain.
        count : str, optional
            The frequency column (the records left out are then the sum of their counts).
        outside : {"error", "drop"}
            As for :meth:`table`.
        """
        if outside not in OUTSIDE_CHOICES:
            raise InvalidArgumentError(f"'outside' must be one of {OUTSIDE_CHOICES}. Got {outside!r} instead.")
        frame, _ = _frame(frame, self.names, count)
        keep = np.ones(len(frame), dtype=bool)
        binned = {}
        for v in self.variables:
            if v.name in self.bins:  # numbers through the public bins: the interval's label
                codes = self.bins[v.name].codes(frame[v.name].to_numpy())
                binned[v.name] = np.asarray(v.categories, dtype=object)[np.maximum(codes, 0)]
                inside = codes >= 0
            else:
                inside = _inside(frame[v.name], v.categories)
            if outside == "error" and not inside.all():
                i = int(np.flatnonzero(~inside)[0])
                raise DataError(
                    f"variable {v.name!r} has value {_plain(frame[v.name].iloc[i])!r} outside the public domain "
                    f"{_shown(v.categories)}; add it to the domain file if it is public, or pass outside='drop' "
                    "(--outside drop) to leave such records out."
                )
            keep &= inside
        if binned:
            frame = frame.assign(**binned)
        if keep.all():
            return frame, 0
        weights = np.ones(len(frame), dtype=np.int64) if count is None else _counts(frame[count])
        if not keep.any():
            raise DataError("no record lies inside the public domain; check the domain file against the data.")
        return frame[keep], int(weights[~keep].sum())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Domain) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.sha256)

    def __repr__(self) -> str:
        return "Domain(" + ", ".join(f"{v.name}: {v.size}" for v in self.variables) + ")"


# ---------------------------------------------------------------------- helpers
def _plain(c: Any) -> Any:
    return c.item() if isinstance(c, np.generic) else c


def _shown(cats: Sequence[Any]) -> list[Any]:
    cats = list(cats)
    return cats if len(cats) <= 10 else cats[:10] + ["..."]


def _json_mapping(text: str, p: Path) -> "dict[str, list[str] | Bins]":
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DataError(f"the domain file {str(p)!r} is not valid JSON: {exc}.") from None
    if not isinstance(data, dict) or not data:
        raise DataError(f"the domain file {str(p)!r} must hold a JSON object mapping each variable to its categories.")
    out: "dict[str, list[str] | Bins]" = {}
    for name, cats in data.items():
        if isinstance(cats, dict):
            out[str(name)] = _json_bins(cats, name, p)
            continue
        if not isinstance(cats, list) or not cats:
            raise DataError(f"variable {name!r} of the domain file {str(p)!r} must map to a non-empty list of categories.")
        bad = [c for c in cats if isinstance(c, bool) or not isinstance(c, (str, int, float))]
        if bad:
            raise DataError(f"variable {name!r} of the domain file {str(p)!r} has a category {bad[0]!r} that is not text or a number.")
        spelled = [c if isinstance(c, str) else json.dumps(c) for c in cats]
        if len(set(spelled)) != len(spelled):
            raise DataError(f"variable {name!r} of the domain file {str(p)!r} lists a category twice.")
        out[str(name)] = spelled
    return out


def _json_bins(spec: dict, name: Any, p: Path) -> Bins:
    """``{"bins": [edges], "labels": [...]}`` of a numeric variable in a domain file."""
    if set(spec) - {"bins", "labels"} or "bins" not in spec:
        raise DataError(
            f"variable {name!r} of the domain file {str(p)!r} must map to a list of categories or to "
            '{"bins": [edges]} (optionally with "labels"). Got keys ' + f"{sorted(spec)}."
        )
    try:
        return Bins(spec["bins"], tuple(spec.get("labels", ())))
    except InvalidArgumentError as exc:
        raise DataError(f"variable {name!r} of the domain file {str(p)!r}: {exc}") from None


def _split_bins(variables: Any) -> tuple[Any, dict[str, Bins]]:
    """A mapping with Bins values as name -> interval labels, and the bins by name."""
    if not isinstance(variables, Mapping):
        return variables, {}
    bins = {str(k): v for k, v in variables.items() if isinstance(v, Bins)}
    return {k: (v.labels if isinstance(v, Bins) else v) for k, v in variables.items()}, bins


def _csv_mapping(text: str, p: Path) -> dict[str, list[str]]:
    rows = list(csv.reader(text.splitlines()))
    if not rows or [h.strip().lower() for h in rows[0]] != ["variable", "category"]:
        raise DataError(f"the domain file {str(p)!r} must be a CSV with the header 'variable,category'.")
    out: dict[str, list[str]] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != 2 or not row[0]:
            raise DataError(f"line {line} of the domain file {str(p)!r} must hold a variable and a category. Got {row!r}.")
        cats = out.setdefault(row[0], [])
        if row[1] in cats:
            raise DataError(f"line {line} of the domain file {str(p)!r} repeats category {row[1]!r} of {row[0]!r}.")
        cats.append(row[1])
    if not out:
        raise DataError(f"the domain file {str(p)!r} lists no categories.")
    return out


def _frame(source: Any, names: list[str], count: str | None) -> tuple[pd.DataFrame, str | None]:
    """The records (or cells, DuckDB-aggregated from a file) and the name of their count column."""
    if isinstance(source, (str,)) or hasattr(source, "__fspath__"):
        from ..io import aggregate_file

        return aggregate_file(source, names, count)
    from .._frames import as_pandas

    df = as_pandas(source, "source")
    missing = [c for c in names + ([count] if count else []) if c not in df.columns]
    if missing:
        raise DataError(f"unknown variable {missing[0]!r}: the data have columns {list(map(str, df.columns))}.")
    return df, count


def _counts(col: pd.Series) -> np.ndarray:
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return np.nan_to_num(values, nan=0.0).astype(np.int64)


def _inside(col: pd.Series, cats: Sequence[Any]) -> np.ndarray:
    """Whether each value is one of ``cats``, matched as the table's encoder matches (text or value)."""
    codes, uniques = pd.factorize(col, sort=False)
    distinct = list(uniques)
    lookup = pd.Index(list(cats), dtype=object)
    pos = lookup.get_indexer(pd.Index(distinct, dtype=object))
    if np.any(pos < 0) and all(isinstance(c, str) for c in cats):
        pos = np.where(pos < 0, lookup.get_indexer(pd.Index([str(u) for u in distinct], dtype=object)), pos)
    if np.any(pos < 0) and not all(isinstance(c, str) for c in cats):
        spelled = pd.Index([str(c) for c in cats], dtype=object)
        if spelled.is_unique:
            pos = np.where(pos < 0, spelled.get_indexer(pd.Index([str(u) for u in distinct], dtype=object)), pos)
    ok = np.r_[pos >= 0, False]  # code -1 (a missing value) is outside
    return ok[codes]


def public_table(table: CountTable, domain: "Domain | None", owner: str) -> CountTable:
    """The table a differentially private mechanism may release: on a public domain.

    With ``domain`` the table is recoded onto it (:meth:`Domain.adopt`, refusing a category
    outside it); without, every variable of the table must already be public (a table built by
    :meth:`Domain.table` or :meth:`Domain.adopt`).  A table counted from records has its
    categories from the records, so it is refused: a category only one record has would appear
    in the release.
    """
    if domain is not None:
        if not isinstance(domain, Domain):
            raise InvalidArgumentError(f"The 'domain' of {owner} must be a cellsafe.Domain. Got {type(domain).__name__}.")
        return domain.adopt(table)
    private = [v.name for v in table.variables if not v.public]
    if private:
        raise DataError(
            f"{owner} releases with differential privacy, and the categories of {private} were not given as public "
            "(a table built from records takes them from the records, so a category only one record has would "
            "appear in the release). Pass domain=cellsafe.Domain({...}) with the public categories, or build the "
            "table with Domain.table(records)."
        )
    return table
