"""A privacy budget accountant with sequential and parallel composition and a JSON audit log.

Composition rules (002 section 7.7): releases computed on the same records add their epsilons
(and deltas); releases computed on disjoint parts of the records cost the largest of them;
post-processing of a released result costs nothing.  A release says which records it used with
``partition`` and ``part``: no partition means all records; releases in different parts of the same
partition touch disjoint records.  The total charged is

    sum over whole-data releases + sum over partitions of (max over parts of the part's sum),

a valid bound for every record (a record lies in one part of each partition).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._results import Result
from .._validation import check_real
from ..exceptions import BudgetExceededError, DataError, InvalidArgumentError

__all__ = ["PrivacyAccountant", "Release", "BudgetSummary"]

_TOL = 1e-12


@dataclass(frozen=True)
class Release(Result):
    """One recorded release."""

    label: str
    epsilon: float
    delta: float = 0.0
    partition: str | None = None
    part: str | None = None
    mechanism: str | None = None
    time: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The fields (an entry of the audit log's ``releases``)."""
        return asdict(self)


@dataclass(frozen=True)
class BudgetSummary(Result):
    """Budget, spent and remaining privacy loss."""

    epsilon_budget: float
    delta_budget: float
    epsilon_spent: float
    delta_spent: float
    n_releases: int

    @property
    def epsilon_remaining(self) -> float:
        return max(self.epsilon_budget - self.epsilon_spent, 0.0)

    @property
    def delta_remaining(self) -> float:
        return max(self.delta_budget - self.delta_spent, 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon_budget": self.epsilon_budget,
            "delta_budget": self.delta_budget,
            "epsilon_spent": self.epsilon_spent,
            "delta_spent": self.delta_spent,
            "epsilon_remaining": self.epsilon_remaining,
            "delta_remaining": self.delta_remaining,
            "n_releases": int(self.n_releases),
        }

    def summary(self) -> str:
        """Budget, spent and remaining (epsilon, delta), and the number of releases."""
        return "\n".join(
            [
                f"budget   epsilon {self.epsilon_budget:g}, delta {self.delta_budget:g}",
                f"spent    epsilon {self.epsilon_spent:g}, delta {self.delta_spent:g}",
                f"left     epsilon {self.epsilon_remaining:g}, delta {self.delta_remaining:g}",
                f"releases {self.n_releases}",
            ]
        )

    def __repr__(self) -> str:
        return (
            f"BudgetSummary(epsilon {self.epsilon_spent:.6g} of {self.epsilon_budget:.6g}, "
            f"delta {self.delta_spent:.3g} of {self.delta_budget:.3g}, releases={self.n_releases})"
        )


def _charge(releases: list[Release], key: str) -> float:
    whole = 0.0
    per_partition: dict[str, dict[str, float]] = {}
    for r in releases:
        v = getattr(r, key)
        if r.partition is None:
            whole += v
        else:
            parts = per_partition.setdefault(r.partition, {})
            parts[r.part] = parts.get(r.part, 0.0) + v
    return whole + sum(max(p.values()) for p in per_partition.values())


class PrivacyAccountant:
    """Record releases against an (epsilon, delta) budget and refuse any overrun.

    Parameters
    ----------
    epsilon : float
        Total privacy loss budget, > 0.
    delta : float, default 0
        Total delta budget in [0, 1).
    log : str or Path, optional
        Audit log written atomically (JSON) after every accepted release.

    Examples
    --------
    >>> acc = PrivacyAccountant(epsilon=1.0)
    >>> _ = acc.spend(0.5, label="counts by state", partition="state", part="TX")
    >>> _ = acc.spend(0.5, label="counts by state", partition="state", part="VT")
    >>> _ = acc.spend(0.5, label="national total")
    >>> acc.budget().epsilon_spent
    1.0
    """

    def __init__(self, epsilon: float, delta: float = 0.0, log: "str | Path | None" = None) -> None:
        self.epsilon = check_real(epsilon, "epsilon", "PrivacyAccountant", low=0.0, low_open=True, high_open=True)
        self.delta = check_real(delta, "delta", "PrivacyAccountant", low=0.0, high=1.0, high_open=True)
        self.log = None if log is None else Path(log)
        self._releases: list[Release] = []

    @property
    def releases(self) -> tuple[Release, ...]:
        return tuple(self._releases)

    def spent(self) -> tuple[float, float]:
        """(epsilon, delta) charged so far."""
        return _charge(self._releases, "epsilon"), _charge(self._releases, "delta")

    def budget(self) -> BudgetSummary:
        """Budget, spent and remaining privacy loss."""
        e, d = self.spent()
        return BudgetSummary(self.epsilon, self.delta, e, d, len(self._releases))

    def summary(self) -> str:
        """The budget as text, then one line per release (time, epsilon, delta, records used, label)."""
        lines = [self.budget().summary()]
        for r in self._releases:
            where = "all records" if r.partition is None else f"{r.partition}={r.part}"
            lines.append(f"  {r.time or '-':25s} eps {r.epsilon:<10.4g} delta {r.delta:<8.3g} {where:20s} {r.label}")
        return "\n".join(lines)

    def can_spend(
        self, epsilon: float, delta: float = 0.0, partition: str | None = None, part: str | None = None
    ) -> bool:
        """Whether a release with these parameters fits in the remaining budget."""
        trial = self._releases + [Release("", float(epsilon), float(delta), partition, part)]
        return _charge(trial, "epsilon") <= self.epsilon + _TOL and _charge(trial, "delta") <= self.delta + _TOL

    def spend(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        label: str = "",
        partition: str | None = None,
        part: Any = None,
        mechanism: str | None = None,
    ) -> Release:
        """Record a release, or raise :class:`BudgetExceededError` if it would overrun the budget.

        Parameters
        ----------
        epsilon, delta : float
            The release's own privacy loss.
        label : str
            What was released (for the audit log).
        partition, part : str, optional
            The release used only the records in ``part`` of ``partition`` (for example
            partition="state", part="TX"); releases in different parts of one partition compose
            in parallel.  Both or neither must be given.
        mechanism : str, optional
            Mechanism name for the log.
        """
        eps = check_real(epsilon, "epsilon", "PrivacyAccountant.spend", low=0.0, high_open=True)
        dl = check_real(delta, "delta", "PrivacyAccountant.spend", low=0.0, high=1.0, high_open=True)
        if (partition is None) != (part is None):
            raise InvalidArgumentError(
                "give both 'partition' and 'part' (a release on part of the records) or neither."
            )
        part_s = None if part is None else str(part)
        if not self.can_spend(eps, dl, partition, part_s):
            e0, d0 = self.spent()
            trial = self._releases + [Release(label, eps, dl, partition, part_s)]
            raise BudgetExceededError(
                f"release {label!r} (epsilon={eps:g}, delta={dl:g}) would bring the total to epsilon="
                f"{_charge(trial, 'epsilon'):g}, delta={_charge(trial, 'delta'):g}, beyond the budget "
                f"epsilon={self.epsilon:g}, delta={self.delta:g} (already spent epsilon={e0:g}, delta={d0:g}). "
                "Spend less on this release or release fewer statistics."
            )
        rel = Release(
            label,
            eps,
            dl,
            partition,
            part_s,
            mechanism,
            _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        )
        self._releases.append(rel)
        if self.log is not None:
            self.save(self.log)
        return rel

    # ------------------------------------------------------------------ audit log
    def to_dict(self) -> dict[str, Any]:
        e, d = self.spent()
        return {
            "format": "cellsafe-privacy-budget/1",
            "budget": {"epsilon": self.epsilon, "delta": self.delta},
            "spent": {"epsilon": e, "delta": d},
            "releases": [asdict(r) for r in self._releases],
        }

    def save(self, path: "str | Path") -> Path:
        """Write the audit log atomically (temporary file, then rename)."""
        from ..io import atomic_path

        path = Path(path)
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        return path

    @classmethod
    def load(cls, path: "str | Path", *, attach: bool = True) -> "PrivacyAccountant":
        """Read an audit log; with ``attach`` further releases are appended to the same file."""
        path = Path(path)
        try:
            data = json.loads(path.read_text())
            acc = cls(data["budget"]["epsilon"], data["budget"].get("delta", 0.0), path if attach else None)
            for r in data["releases"]:
                acc._releases.append(Release(**r))
        except FileNotFoundError:
            raise DataError(f"no privacy budget log at {str(path)!r}.") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{str(path)!r} is not a cellsafe privacy budget log: {exc}.") from None
        e, d = acc.spent()
        if e > acc.epsilon + _TOL or d > acc.delta + _TOL or math.isnan(e):
            raise DataError(f"the log {str(path)!r} records more than its budget (epsilon {e:g} of {acc.epsilon:g}).")
        return acc

    def __repr__(self) -> str:
        e, d = self.spent()
        return (
            f"PrivacyAccountant(epsilon={e:.6g}/{self.epsilon:.6g}, delta={d:.3g}/{self.delta:.3g}, "
            f"releases={len(self._releases)})"
        )
