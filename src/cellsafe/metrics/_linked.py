"""The joint audit of linked tables: every measure's system audited as a reader of all its releases holds it.

:func:`audit_linked` runs :func:`~cellsafe.metrics.audit_suppression` (the one verdict) on each
measure's system (:class:`~cellsafe.mechanisms.linked.LinkedRelease`: the union of the tables'
crossings and the earlier releases' cells, each cell published when any release shows it), and
checks the pattern across measures: a cell withheld in one measure is withheld in every other
measure that publishes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .._results import Result
from ..mechanisms.linked import LinkedRelease, match_cells
from ..published import PublishedTable
from ._audit import SuppressionAudit, audit_suppression

__all__ = ["LinkedAudit", "audit_linked"]


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
    rows = []
    measures = list(joint)
    for i, a in enumerate(measures):
        for b in measures[i + 1:]:
            ia, ib = match_cells(joint[a].publication, joint[b].publication)
            wa, wb = np.isnan(joint[a].released[ia]), np.isnan(joint[b].released[ib])
            for k in np.flatnonzero(wa != wb):
                cell = joint[a].publication.cells().iloc[int(ia[k])].to_dict()
                rows.append({**cell, "withheld": a if wa[k] else b, "shown": b if wa[k] else a})
    return LinkedAudit(audits=audits, mismatched=pd.DataFrame(rows))
