"""Linked tables and earlier releases: several publications of the same records protected as one system.

An office publishes several tables from one data set (counts by region x activity and by region x
size class, turnover by region x activity), and some of them earlier than others.  A reader holds
them all: a cell one table withholds and another publishes is published, and a primary one table
protects by withholding a margin can be computed from the margin another table shows.  So the
tables are protected together:

- *one system per measure.*  The inner cells of every table of one measure (the counts of
  records, or the sums of one value column) are the same unknowns: the crossings of all the
  variables.  The tables of a measure are the columns of one publication, the union of their
  crossings; a cell two tables share (the region totals of region x activity and region x size)
  is one cell with one status.  Secondary suppression and the audit run on that publication, so
  what protects it protects every table (each table's release is its part of the system).
- *one pattern across measures.*  Counts and sums of the same cells are different unknowns: no
  linear equation leads from one to the other, so each measure's system is protected on its own
  terms.  A cell's count and its sum are nevertheless withheld together (a cell withheld in one
  measure's tables is withheld in every measure that has it): a count published beside a withheld
  sum says how many contributors share it, and a sum published beside a withheld count says the
  cell is not empty.  The measures are protected in turn, each withholding what the others
  withhold, until no measure withholds a cell the others show (every step only withholds more,
  so this ends).
- *earlier releases are fixed cells.*  A release published before (a cellsafe output whose
  manifest's sha256 still matches, :func:`read_earlier_release`) joins its measure's system with
  its own crossings: what it published stays published (forced), what it withheld stays withheld
  (hidden), and the audit runs on old and new releases together.  It must come from the same
  records (its published values are checked against them) and list its cells as the new tables
  do.

The rules are one list: frequency rules apply to the counts of records in count tables and to the
contributors in magnitude tables; the p% and (n, k) rules to magnitude tables only.
:func:`cellsafe.metrics.audit_linked` is the joint audit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, InvalidArgumentError
from ..published import Publication, PublishedTable, magnitude_table
from ..table import CountTable, Hierarchy
from ._listing import frame_magnitude, listed_publication
from ._primary import Requirements, parse_rule
from .suppression import CellSuppression

__all__ = ["LinkedTable", "EarlierRelease", "LinkedRelease", "protect_linked", "read_earlier_release", "COUNT",
           "linked_system"]

#: The measure of count tables (the number of records in a cell).
COUNT = "count"


@dataclass(frozen=True)
class LinkedTable:
    """One table of a linked system: its name, its formula, and what it sums (None: counts of records)."""

    name: str
    formula: Any
    value: str | None = None

    @property
    def measure(self) -> str:
        return COUNT if self.value is None else self.value


@dataclass(frozen=True)
class EarlierRelease:
    """A release published before, as written (one row per cell: the variables, the value, NaN where withheld).

    ``formula`` is the one it was published with; ``value`` the column it sums (None: counts, column
    ``column``, default 'count'); ``list`` which cells it lists ('frame' or 'nonzero').
    """

    frame: pd.DataFrame = field(repr=False)
    formula: Any
    value: str | None = None
    list: str = "frame"
    name: str = "earlier"
    column: str | None = None

    @property
    def measure(self) -> str:
        return COUNT if self.value is None else self.value


def read_earlier_release(path: str | Path, *, value: str | None = None) -> EarlierRelease:
    """An earlier cellsafe release read from its file, checked against the sha256 its manifest records.

    The formula and the listing come from the manifest (the suppression's parameters); ``value``
    names the summed column of a magnitude release (default: counts, column 'count').  A file that
    changed since its manifest was written, or without a manifest of a cell suppression, is refused.
    """
    from ..io import find_manifest, read_records, sha256_file

    p = Path(path)
    found = find_manifest(p)
    if found is None:
        raise DataError(f"no manifest lists {str(p)!r}; an earlier release is a cellsafe output read with its manifest.")
    where, data = found
    expected = next((o.get("sha256") for o in data.get("outputs", []) if o.get("file") == p.name), None)
    if not expected or sha256_file(p) != expected:
        raise DataError(
            f"{str(p)!r} changed since {str(where)!r} recorded it (sha256 differs): an earlier release must be the file "
            "as published."
        )
    mech = data.get("mechanism") or {}
    params = mech.get("parameters") or {}
    # a table of a linked release: its formula and value in the manifest's details, by file
    table = ((data.get("details") or {}).get("tables") or {}).get(p.name) or {}
    formula = table.get("formula") or params.get("publication")
    if mech.get("class") != "CellSuppression" or not formula:
        raise DataError(f"{str(where)!r} does not record a cell suppression with its formula; give a cellsafe publish output.")
    return EarlierRelease(read_records(p), formula, value=value or table.get("value"),
                          list=str(params.get("list") or "frame"), name=p.name)


@dataclass(frozen=True, eq=False)
class LinkedRelease:
    """The releases of a linked system.

    Attributes
    ----------
    tables : dict of str to PublishedTable
        Each new table's release (its part of its measure's system).
    systems : dict of str to PublishedTable
        Per measure (``'count'`` or the value's name), the whole system: the union of the crossings
        of its tables and earlier releases, as a reader of all of them sees it.
    members : dict of str to str
        Each table's measure.
    earlier_shown : dict of str to ndarray of bool
        Per measure, the system's cells an earlier release shows.
    rounds : int
        Rounds of the protection across measures (1 with one measure).
    """

    tables: dict[str, PublishedTable]
    systems: dict[str, PublishedTable]
    members: dict[str, str]
    earlier_shown: dict[str, np.ndarray] = field(repr=False)
    rounds: int = 1

    def joint(self, releases: Mapping[str, PublishedTable] | None = None) -> dict[str, PublishedTable]:
        """Each measure's system as a reader of every release holds it, ``releases`` replacing these tables'.

        A cell shown by any release (or an earlier one) is published; the others are withheld.
        Pass releases made otherwise (say each table protected on its own) to audit them as one system.
        """
        given = dict(releases or {})
        unknown = [k for k in given if k not in self.tables]
        if unknown:
            raise InvalidArgumentError(f"no table {unknown[0]!r} in the linked system ({list(self.tables)}).")
        out = {}
        for measure, system in self.systems.items():
            released = np.where(self.earlier_shown[measure], system.original, np.nan).astype(np.float64)
            for name, m in self.members.items():
                if m != measure:
                    continue
                rel = given.get(name, self.tables[name])
                ours, theirs = match_cells(system.publication, rel.publication)
                shown = ~np.isnan(rel.released[theirs])
                released[ours[shown]] = rel.released[theirs[shown]]
            out[measure] = _with_released(system, released)
        return out


def match_cells(a: Publication, b: Publication) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``a`` and in ``b`` of the cells both publish (same labels), in ``b``'s order."""
    names = a.names
    if sorted(names) != sorted(b.names):
        raise DataError(f"the publications have different variables ({names} and {b.names}).")
    ka = pd.MultiIndex.from_frame(a.cells()[names].astype(str))
    kb = pd.MultiIndex.from_frame(b.cells()[names].astype(str))
    pos = ka.get_indexer(kb)
    keep = pos >= 0
    return pos[keep].astype(np.int64), np.flatnonzero(keep).astype(np.int64)


def _with_released(system: PublishedTable, released: np.ndarray) -> PublishedTable:
    primary = system.requirements.primary if system.requirements is not None else system.suppression == "primary"
    status = np.where(np.isnan(released), np.where(primary, "primary", "secondary"), "").astype(object)
    return replace(system, released=released, suppression=status)


def _crossings(pubs: Sequence[Publication]) -> list[tuple[str, ...]]:
    seen: set[frozenset[str]] = set()
    out = []
    for pub in pubs:
        for c in pub.crossings:
            if frozenset(c) not in seen:
                seen.add(frozenset(c))
                out.append(tuple(c))
    return out


def _part(system: PublishedTable, pub: Publication, note: str) -> PublishedTable:
    """A table's release: its cells of the system."""
    ours, theirs = match_cells(system.publication, pub)
    if theirs.shape[0] != pub.n_published:
        raise DataError("a table's cell is missing from its system (internal error: the system is the union of the tables).")
    req = system.requirements
    assert system.suppression is not None
    sub = None if req is None else Requirements(req.primary[ours], req.upper[ours], req.lower[ours], req.width[ours], req.threshold)
    return replace(
        system, publication=pub, original=system.original[ours], released=system.released[ours],
        suppression=system.suppression[ours], requirements=sub, note=note,
        sole=None if system.sole is None else system.sole[ours],
    )


def protect_linked(
    mechanism: CellSuppression,
    data: Any,
    tables: Sequence[LinkedTable],
    *,
    variables: Sequence[str] | None = None,
    contributor: str | None = None,
    hierarchies: Mapping[str, Hierarchy | Sequence[Hierarchy]] | None = None,
    earlier: Sequence[EarlierRelease] = (),
    progress: bool = False,
) -> LinkedRelease:
    """Protect several tables of the same records as one system (module notes).

    Parameters
    ----------
    mechanism : CellSuppression
        Its rules, listing and other parameters apply to every table (its publication, forced and
        hidden cells are not used).
    data : CountTable (count tables only), or records (DataFrame or path to CSV/Parquet)
    tables : sequence of LinkedTable
        The new tables: names, formulas, and the value each sums (None: counts).
    variables : sequence of str
        The crossed variables (records only; default a CountTable's).
    contributor, hierarchies
        As for :func:`cellsafe.published.magnitude_table` and :meth:`Publication.from_formula`.
    earlier : sequence of EarlierRelease
        Releases already published from the same records (:func:`read_earlier_release`).

    Returns
    -------
    LinkedRelease
    """
    tables = list(tables)
    if not tables or not all(isinstance(t, LinkedTable) for t in tables):
        raise InvalidArgumentError("protect_linked needs a non-empty list of LinkedTable(name, formula, value=None).")
    names = [t.name for t in tables]
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"the linked tables' names must differ. Got {names}.")
    for e in earlier:
        if not isinstance(e, EarlierRelease):
            raise InvalidArgumentError("earlier releases must be EarlierRelease objects (see read_earlier_release).")
        if e.list != mechanism.list:
            raise InvalidArgumentError(
                f"the earlier release {e.name!r} lists its cells with list={e.list!r} and the new tables with "
                f"list={mechanism.list!r}; protect the new tables with the listing of the earlier one."
            )
    measures = list(dict.fromkeys([t.measure for t in tables] + [e.measure for e in earlier]))
    if isinstance(data, CountTable):
        if any(m != COUNT for m in measures):
            raise InvalidArgumentError("magnitude tables need the records (a DataFrame or a file), not a CountTable.")
        table: CountTable | None = data
    else:
        if variables is None:
            raise InvalidArgumentError("protect_linked needs variables=[...] with records.")
        table = CountTable.from_microdata(data, list(variables)) if COUNT in measures else None
    systems = {m: _System(m, mechanism, data, table, [t for t in tables if t.measure == m],
                          [e for e in earlier if e.measure == m], variables, contributor, hierarchies) for m in measures}
    # one pattern across measures: each withholds what the others withhold, until none withholds a new cell
    withheld: dict[str, np.ndarray] = {m: np.zeros(s.pub.n_published, dtype=bool) for m, s in systems.items()}
    results: dict[str, PublishedTable] = {}
    rounds = 0
    while True:
        rounds += 1
        for m, s in systems.items():
            results[m] = s.protect(withheld[m], progress)
        grown = False
        for m, s in systems.items():
            for o, so in systems.items():
                if o == m:
                    continue
                ours, theirs = match_cells(s.pub, so.pub)
                new = np.zeros_like(withheld[m])
                new[ours] = np.isnan(results[o].released[theirs])
                new &= ~s.forced & ~withheld[m]
                if new.any():
                    withheld[m] |= new
                    grown = True
        if not grown:
            break
    note = "" if rounds == 1 else f"linked: {rounds} rounds across measures"
    parts = {t.name: _part(results[t.measure], systems[t.measure].table_pub[t.name], note) for t in tables}
    return LinkedRelease(
        tables=parts, systems=results, members={t.name: t.measure for t in tables},
        earlier_shown={m: s.forced.copy() for m, s in systems.items()}, rounds=rounds,
    )


def linked_system(measure: str, mech: CellSuppression, data: Any, table: CountTable | None, releases: Sequence[EarlierRelease],
                  variables: Sequence[str] | None, contributor: str | None, hierarchies: Any) -> "_System":
    """One measure's system made of releases alone (no new table): its union publication (``pub``), the cells they show
    (``forced``) and withhold (``hidden``), and for a magnitude measure its table (``mt``); what an audit of published
    files reads."""
    return _System(measure, mech, data, table, [], releases, variables, contributor, hierarchies)


class _System:
    """One measure's system: the union publication of its tables and earlier releases, and its protection."""

    def __init__(self, measure: str, mech: CellSuppression, data: Any, table: CountTable | None,
                 tables: Sequence[LinkedTable], earlier: Sequence[EarlierRelease], variables: Sequence[str] | None,
                 contributor: str | None, hierarchies: Any) -> None:
        self.measure, self.mech = measure, mech
        rules = [parse_rule(r) for r in mech.rules_]
        self.rules = [r for r in rules if r.kind == "freq"] if measure == COUNT else rules
        if not self.rules:
            raise InvalidArgumentError(f"none of the rules {list(mech.rules)} applies to counts; add a frequency rule.")
        self.mt = None
        if measure == COUNT:
            assert table is not None
            pubs = {x.name: listed_publication(table, _spec(table, x.formula, hierarchies, mech.list), mech.list)
                    for x in list(tables) + list(earlier)}
            self.pub = listed_publication(table, _spec(table, _crossings(list(pubs.values())), hierarchies, mech.list), mech.list)
            self.table: CountTable = table
        else:
            assert variables is not None
            pubs = {}
            for x in list(tables) + list(earlier):
                mt = magnitude_table(data, variables, measure, x.formula, contributor=contributor, hierarchies=hierarchies)
                pubs[x.name] = frame_magnitude(mt)[0].publication if mech.list == "frame" else mt.publication
            n_top = max([r.n for r in self.rules if r.kind == "nk"] + [2])
            self.mt = magnitude_table(data, variables, measure, _crossings(list(pubs.values())), contributor=contributor,
                                      hierarchies=hierarchies, n_top=n_top)
            self.pub = frame_magnitude(self.mt)[0].publication if mech.list == "frame" else self.mt.publication
        self.table_pub = {x.name: pubs[x.name] for x in tables}
        original = self.pub.aggregate(table) if measure == COUNT else frame_or_values(self.mt, mech.list)
        self.forced = np.zeros(self.pub.n_published, dtype=bool)
        self.hidden = np.zeros(self.pub.n_published, dtype=bool)
        for e in earlier:
            column = e.column or (COUNT if e.value is None else e.value)
            listed = ~np.isnan(self.pub.align(e.frame.assign(__listed=1.0), count="__listed"))
            shown_values = self.pub.align(e.frame, count=column)
            shown = listed & ~np.isnan(shown_values)
            differ = shown & ~np.isclose(shown_values, original, rtol=1e-9, atol=1e-6)
            if differ.any():
                i = int(np.flatnonzero(differ)[0])
                cell = self.pub.cells().iloc[i].to_dict()
                raise DataError(
                    f"the earlier release {e.name!r} shows {shown_values[i]:g} for cell {cell}, the records give "
                    f"{original[i]:g}: an earlier release joins the system only when it comes from the same records."
                )
            self.forced |= shown
            self.hidden |= listed & ~shown

    def protect(self, withheld: np.ndarray, progress: bool) -> PublishedTable:
        m = self.mech
        mech = CellSuppression(
            self.pub, rules=self.rules, list=m.list, protect_zeros=m.protect_zeros, secondary_zeros=m.secondary_zeros,
            priority=m.priority, intervals=m.intervals, singletons=m.singletons, min_width=m.min_width,
            forced=self.forced, hidden=self.hidden | withheld, secondary=m.secondary, cost=m.cost, time_limit=m.time_limit,
        )
        try:
            if self.measure == COUNT:
                [res] = mech.sample(self.table, progress=progress)
            else:
                res = mech.suppress_magnitude(self.mt, progress=progress)
        except InvalidArgumentError as err:
            if "forced cell(s) are primary" not in str(err):
                raise
            raise DataError(
                f"an earlier release publishes {self.measure} cells the rules make sensitive ({err}); they stay "
                "published, so the linked system cannot be protected with these rules."
            ) from None
        if res.publication.n_published != self.pub.n_published:
            raise DataError("the protection's publication differs from the system's (internal error).")
        return res


def _spec(table: CountTable, formula: Any, hierarchies: Any, listing: str) -> Publication:
    return Publication.from_formula(table, formula, hierarchies=hierarchies or None, zeros=listing == "frame")


def frame_or_values(mt: Any, listing: str) -> np.ndarray:
    """A magnitude table's sums over the cells its release lists."""
    return np.asarray(frame_magnitude(mt)[0].values if listing == "frame" else mt.values, dtype=np.float64)
