"""The joint audit of linked tables: every measure's system audited as a reader of all its releases holds it.

:func:`audit_releases` audits files already published (a linked release's tables and any earlier
releases, as :func:`~cellsafe.mechanisms.read_earlier_release` reads them) from the records and the
rules alone: what a disclosure panel runs after the fact, with nothing of the protection's own
results.  :func:`audit_linked` runs :func:`~cellsafe.metrics.audit_suppression` (the one verdict) on each
measure's system (:class:`~cellsafe.mechanisms.linked.LinkedRelease`: the union of the tables'
crossings and the earlier releases' cells, each cell published when any release shows it), and
checks the pattern across measures: a cell withheld in one measure is withheld in every other
measure that publishes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .._results import Result
from ..exceptions import InvalidArgumentError
from ..mechanisms import CellSuppression, frame_magnitude, protection_requirements
from ..mechanisms.linked import COUNT, EarlierRelease, LinkedRelease, linked_system, match_cells
from ..published import PublishedTable
from ..table import CountTable
from ._audit import SuppressionAudit, audit_suppression

__all__ = ["LinkedAudit", "audit_linked", "audit_releases"]


@dataclass(frozen=True, eq=False)
class LinkedAudit(Result):
    """The joint audit: one :class:`SuppressionAudit` per measure's system, and the cells whose pattern differs.

    Attributes
    ----------
    audits : dict of str to SuppressionAudit
        Per measure (``'count'`` or the value's name).
    mismatched : DataFrame
        Cells withheld in one measure and shown in another: the cell's labels, ``withheld`` and
        ``shown`` (the measures).
    """

    audits: dict[str, SuppressionAudit] = field(repr=False)
    mismatched: pd.DataFrame = field(repr=False)

    @property
    def passed(self) -> bool:
        return all(a.passed for a in self.audits.values()) and self.mismatched.empty

    def problems(self) -> list[str]:
        out = [f"{m}: {p}" for m, a in self.audits.items() for p in a.problems()]
        if not self.mismatched.empty:
            out.append(f"{len(self.mismatched)} cell(s) withheld in one measure and shown in another")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "problems": self.problems(), "n_mismatched": int(len(self.mismatched)),
                **{f"{m}_{k}": v for m, a in self.audits.items() for k, v in a.to_dict().items() if k != "problems"}}

    def _title(self) -> str:
        return "Linked suppression audit"


def audit_linked(linked: LinkedRelease, releases: Mapping[str, PublishedTable] | None = None) -> LinkedAudit:
    """The joint audit of a linked system (module notes); ``releases`` replace its tables' releases.

    Pass each table protected on its own as ``releases`` to see what a reader of all of them computes.
    """
    joint = linked.joint(releases)
    audits = {m: audit_suppression(rel) for m, rel in joint.items()}
    return LinkedAudit(audits=audits, mismatched=_mismatched(joint))


def audit_releases(
    releases: Sequence[EarlierRelease],
    data: Any,
    *,
    rules: Sequence[str],
    variables: Sequence[str] | None = None,
    contributor: str | None = None,
    hierarchies: Mapping[str, Any] | None = None,
    protect_zeros: bool = False,
    min_width: float = 0.0,
    required: float | None = None,
) -> LinkedAudit:
    """The joint audit of releases published from the same records, read back from their files.

    Each measure's system is the union of the releases' crossings (as :func:`~cellsafe.mechanisms.protect_linked`
    builds it); a cell any release shows is published, the others are withheld; the rules give what each
    withheld cell needs.  The releases' shown values must be the records' (else :class:`DataError`).

    Parameters
    ----------
    releases : sequence of EarlierRelease
        The files (:func:`~cellsafe.mechanisms.read_earlier_release`), all listing their cells alike.
    data : records (DataFrame or path) or CountTable (count releases only)
    rules : list of str
        The primary rules the releases were protected by (``['freq<=3', 'p%=15']``).
    variables, contributor, hierarchies
        As for :func:`~cellsafe.mechanisms.protect_linked`.
    protect_zeros, min_width
        As for :class:`~cellsafe.mechanisms.CellSuppression`.
    required : float, optional
        A symmetric protection every withheld cell needs instead of the rules' requirements.

    Returns
    -------
    LinkedAudit
    """
    releases = list(releases)
    if not releases or not all(isinstance(e, EarlierRelease) for e in releases):
        raise InvalidArgumentError("audit_releases needs a non-empty list of releases (read_earlier_release).")
    listings = sorted({e.list for e in releases})
    if len(listings) > 1:
        raise InvalidArgumentError(f"the releases list their cells differently ({listings}); audit them apart.")
    listing = listings[0]
    mech = CellSuppression(releases[0].formula, rules=list(rules), list=listing, protect_zeros=protect_zeros,
                           min_width=min_width)
    measures = list(dict.fromkeys(e.measure for e in releases))
    table = None
    if COUNT in measures:
        if isinstance(data, CountTable):
            table = data
        elif variables is None:
            raise InvalidArgumentError("audit_releases needs variables=[...] with records.")
        else:
            table = CountTable.from_microdata(data, list(variables))
    joint, needs = {}, {}
    for m in measures:
        system = linked_system(m, mech, data, table, [e for e in releases if e.measure == m], variables, contributor,
                               hierarchies)
        joint[m], needs[m] = _as_read(system, mech, table, listing)
    audits = {m: audit_suppression(rel, required=required, list=listing, **needs[m]) for m, rel in joint.items()}
    return LinkedAudit(audits=audits, mismatched=_mismatched(joint))


def _as_read(system: Any, mech: CellSuppression, table: CountTable | None, listing: str) -> tuple[PublishedTable, dict]:
    """A measure's system as its files show it, and what its withheld cells need (requirements, inner or sole)."""
    rules = [r for r in mech.rules_ if system.measure != COUNT or r.kind == "freq"]
    if system.measure == COUNT:
        assert table is not None
        original = np.asarray(system.pub.aggregate(table), dtype=np.float64)
        req = protection_requirements(rules, original, protect_zeros=mech.protect_zeros, min_width=mech.min_width)
        needs = {"requirements": req, "inner": system.pub.inner_counts(table)}
    else:
        mt = frame_magnitude(system.mt)[0] if listing == "frame" else system.mt
        original = np.asarray(mt.values, dtype=np.float64)
        req = protection_requirements(rules, mt.n_contributors, mt.values, mt.top, protect_zeros=mech.protect_zeros)
        sole = None if mt.largest is None else np.where(mt.n_contributors == 1, mt.largest, -1)
        needs = {"requirements": req, "inner": mt.inner_values, "sole": sole}
    released = np.where(system.forced, original, np.nan)
    status = np.where(system.forced, "", np.where(req.primary, "primary", "secondary")).astype(object)
    release = PublishedTable(publication=system.pub, original=original, released=released, method="suppress",
                             mechanism="the releases read back", suppression=status, measure=system.measure,
                             requirements=req, listing=listing)
    return release, needs


def _mismatched(joint: Mapping[str, PublishedTable]) -> pd.DataFrame:
    """Cells withheld in one measure's releases and shown in another's."""
    rows = []
    measures = list(joint)
    for i, a in enumerate(measures):
        for b in measures[i + 1:]:
            ia, ib = match_cells(joint[a].publication, joint[b].publication)
            wa, wb = np.isnan(joint[a].released[ia]), np.isnan(joint[b].released[ib])
            for k in np.flatnonzero(wa != wb):
                cell = joint[a].publication.cells().iloc[int(ia[k])].to_dict()
                rows.append({**cell, "withheld": a if wa[k] else b, "shown": b if wa[k] else a})
    return pd.DataFrame(rows)
