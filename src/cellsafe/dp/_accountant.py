"""A privacy budget accountant with sequential and parallel composition and a JSON audit log.

Composition rules (002 section 7.7): releases computed on the same records add their epsilons
(and deltas); releases computed on disjoint parts of the records cost the largest of them;
post-processing of a released result costs nothing.  A release says which records it used with
``partition`` and ``part``: no partition means all records; releases in different parts of the same
partition touch disjoint records.  The total charged is

    sum over whole-data releases + sum over partitions of (max over parts of the part's sum),

a valid bound for every record (a record lies in one part of each partition).

The audit log is read, checked and written under an exclusive lock, with a validated schema and a
hash chain over its releases (:mod:`cellsafe.dp._ledger`).  :meth:`PrivacyAccountant.reserve` is the
one critical section of a release: re-read the log, check the budget, record the release, run it,
and keep the record only if it succeeded.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

from .._results import Result
from .._validation import check_real
from ..exceptions import BudgetExceededError, DataError, InvalidArgumentError
from . import _ledger

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
    per_partition: dict[str, dict[str | None, float]] = {}
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
        self._holding = False  # inside the log's lock (one critical section per release)

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
        if mechanism is not None and mechanism not in _ledger.known_mechanisms():
            raise InvalidArgumentError(
                f"The 'mechanism' of PrivacyAccountant.spend must be a known mechanism name "
                f"({', '.join(sorted(_ledger.known_mechanisms()))}). Got {mechanism!r} instead."
            )
        if self.log is not None and not self._holding:
            with self._locked():
                return self.spend(eps, dl, label=label, partition=partition, part=part_s, mechanism=mechanism)
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
        """The audit log: budget, spent, and the releases, each with its link of the hash chain."""
        e, d = self.spent()
        budget = {"epsilon": self.epsilon, "delta": self.delta}
        releases = [asdict(r) for r in self._releases]
        for r, h in zip(releases, _ledger.chain(budget, releases)):
            r["sha256"] = h
        return {
            "format": _ledger.FORMAT,
            "budget": budget,
            "spent": {"epsilon": e, "delta": d},
            "releases": releases,
        }

    def save(self, path: "str | Path") -> Path:
        """Write the audit log atomically (temporary file, then rename)."""
        from ..io import atomic_path

        path = Path(path)
        if self.log is not None and path == self.log and not self._holding:
            with self._locked():
                return self.save(path)
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        return path

    # ------------------------------------------------------------------ the critical section
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the log's lock and bring the releases up to date with the file (others may have written)."""
        assert self.log is not None
        with _ledger.locked(self.log):
            self._holding = True
            try:
                if self.log.exists():
                    fresh = type(self).load(self.log, attach=False)
                    if (fresh.epsilon, fresh.delta) != (self.epsilon, self.delta):
                        raise DataError(
                            f"the budget log {str(self.log)!r} now has budget epsilon {fresh.epsilon:g}, delta "
                            f"{fresh.delta:g}, not {self.epsilon:g}, {self.delta:g}; load it again."
                        )
                    self._releases = list(fresh._releases)
                yield
            finally:
                self._holding = False

    @contextlib.contextmanager
    def reserve(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        label: str = "",
        partition: str | None = None,
        part: Any = None,
        mechanism: str | None = None,
    ) -> Iterator[Release]:
        """The critical section of one release: check, reserve, release, commit (or roll back).

        With a log, the log's exclusive lock is held from before the budget is read until the
        release is committed, so concurrent releases against one log are serialized and none can
        overrun the budget.  The reservation is written to the log before the body runs (a
        release killed half-way stays charged: the safe side); if the body raises, the
        reservation is removed and the error propagates.

        Examples
        --------
        >>> acc = PrivacyAccountant(epsilon=1.0)
        >>> with acc.reserve(0.4, label="counts by region") as rel:
        ...     pass  # compute and write the release here
        >>> acc.spent()
        (0.4, 0.0)
        """
        ctx = self._locked() if self.log is not None and not self._holding else contextlib.nullcontext()
        with ctx:
            rel = self.spend(epsilon, delta, label=label, partition=partition, part=part, mechanism=mechanism)
            try:
                yield rel
            except BaseException:
                self._releases = [r for r in self._releases if r is not rel]
                if self.log is not None:
                    self.save(self.log)
                raise

    @classmethod
    def load(cls, path: "str | Path", *, attach: bool = True) -> "PrivacyAccountant":
        """Read an audit log; with ``attach`` further releases are appended to the same file."""
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise DataError(f"no privacy budget log at {str(path)!r}.") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise DataError(f"{str(path)!r} is not a cellsafe privacy budget log: {exc}.") from None
        eps, delta, releases = _ledger.validate(data, str(path))
        acc = cls(eps, delta, path if attach else None)
        acc._releases = [Release(**r) for r in releases]
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
