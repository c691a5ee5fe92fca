"""A privacy budget accountant: one neighbour relation, (epsilon, delta) or zCDP accounting, a ledger.

Composition (002 section 7.7; Bun and Steinke 2016 for zCDP): releases computed on the same
records add their losses; releases on disjoint parts of the records cost the largest part's sum,
**if** no neighbour can touch two parts.  Under add-remove that always holds (an added record lies
in one part).  Under replace-one a record may move from one part to another and change both
releases, so parts compose in parallel only when their sizes are public and fixed (no record
changes part: ``public_parts=True``, recorded as ``"parallel"``); otherwise every release is
charged in full (``"sequential"``).  The total charged is

    sum over sequential releases + sum over partitions of (max over parts of the parallel part's sum),

a valid bound for every record.  An ``"approximate"`` ledger sums epsilon and delta; a ``"zcdp"``
ledger sums rho (every release must be zCDP) and states the (epsilon, delta) it implies by the
conversion of Canonne, Kamath and Steinke (:func:`cellsafe.dp.cdp_epsilon`).

With a log, every release is written, under the log's exclusive lock, to an append-only,
hash-chained file anchored outside itself (:mod:`cellsafe.dp._ledger`).
:meth:`PrivacyAccountant.reserve` is the one critical section of a release: re-read and check
the log, check the budget, record the release, run it, and withdraw the record if it failed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

from .._privacy import REPLACE_ONE, PrivacyLoss, cdp_epsilon, cdp_rho, check_relation
from .._results import Result
from .._validation import check_in, check_real
from ..exceptions import BudgetExceededError, DataError, InvalidArgumentError
from . import _ledger

__all__ = ["PrivacyAccountant", "Release", "BudgetSummary"]

_TOL = 1e-12


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _eps_value(e: float) -> Any:
    return e if math.isfinite(e) else "inf"


@dataclass(frozen=True)
class Release(Result):
    """One recorded release: its privacy loss, the records it used, and its place in the ledger."""

    label: str
    epsilon: float
    delta: float = 0.0
    rho: float | None = None
    relation: str = REPLACE_ONE
    partition: str | None = None
    part: str | None = None
    composition: str = "sequential"
    mechanism: str | None = None
    time: str = ""
    output: str | None = None
    entry: int = 0
    ledger: str = ""
    head: str = ""

    @property
    def loss(self) -> PrivacyLoss:
        """The release's privacy loss (under the ledger's relation)."""
        return PrivacyLoss(self.epsilon, self.delta, self.rho, self.relation)

    @property
    def anchor(self) -> dict[str, Any]:
        """What the release's public manifest records: the ledger's id, this entry, the chain's head after it."""
        return {"ledger": self.ledger, "release": self.entry, "head": self.head}

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["epsilon"] = _eps_value(self.epsilon)
        return out


@dataclass(frozen=True)
class BudgetSummary(Result):
    """Budget, spent and remaining privacy loss."""

    epsilon_budget: float
    delta_budget: float
    epsilon_spent: float
    delta_spent: float
    n_releases: int
    rho_budget: float | None = None
    rho_spent: float | None = None
    relation: str = REPLACE_ONE
    accounting: str = "approximate"

    @property
    def epsilon_remaining(self) -> float:
        return max(self.epsilon_budget - self.epsilon_spent, 0.0)

    @property
    def delta_remaining(self) -> float:
        return max(self.delta_budget - self.delta_spent, 0.0)

    @property
    def rho_remaining(self) -> float | None:
        return None if self.rho_budget is None else max(self.rho_budget - (self.rho_spent or 0.0), 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "relation": self.relation,
            "accounting": self.accounting,
            "epsilon_budget": self.epsilon_budget,
            "delta_budget": self.delta_budget,
            "rho_budget": self.rho_budget,
            "epsilon_spent": self.epsilon_spent,
            "delta_spent": self.delta_spent,
            "rho_spent": self.rho_spent,
            "epsilon_remaining": self.epsilon_remaining,
            "delta_remaining": self.delta_remaining,
            "rho_remaining": self.rho_remaining,
            "n_releases": int(self.n_releases),
        }

    def summary(self) -> str:
        """Budget, spent and remaining, the relation and accounting, and the number of releases."""
        lines: list[str] = []
        if self.accounting == "zcdp":
            lines += [
                f"budget   rho {self.rho_budget:.6g} (epsilon {self.epsilon_budget:g} at delta {self.delta_budget:g})",
                f"spent    rho {self.rho_spent:.6g} (epsilon {self.epsilon_spent:.6g} at delta {self.delta_budget:g})",
                f"left     rho {self.rho_remaining:.6g}",
            ]
        else:
            lines += [
                f"budget   epsilon {self.epsilon_budget:g}, delta {self.delta_budget:g}",
                f"spent    epsilon {self.epsilon_spent:g}, delta {self.delta_spent:g}",
                f"left     epsilon {self.epsilon_remaining:g}, delta {self.delta_remaining:g}",
            ]
        lines.append(f"neighbours {self.relation} (one record {'added or removed' if self.relation == 'add-remove' else 'replaced'})")
        lines.append(f"releases {self.n_releases}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        if self.accounting == "zcdp":
            return f"BudgetSummary(rho {self.rho_spent:.6g} of {self.rho_budget:.6g}, releases={self.n_releases})"
        return (
            f"BudgetSummary(epsilon {self.epsilon_spent:.6g} of {self.epsilon_budget:.6g}, "
            f"delta {self.delta_spent:.3g} of {self.delta_budget:.3g}, releases={self.n_releases})"
        )


def _active(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The release entries not withdrawn."""
    gone = {e["withdraws"] for e in entries if e["kind"] == "withdrawal"}
    return [e for e in entries if e["kind"] == "release" and e["entry"] not in gone]


def _charge(releases: list[dict[str, Any]], key: str) -> float:
    whole = 0.0
    per_partition: dict[str, dict[str, float]] = {}
    for r in releases:
        v = r.get(key)
        v = math.inf if v == "inf" else float(v or 0.0)
        if r["composition"] == "sequential":
            whole += v
        else:
            parts = per_partition.setdefault(r["partition"], {})
            parts[r["part"]] = parts.get(r["part"], 0.0) + v
    return whole + sum(max(p.values()) for p in per_partition.values())


class PrivacyAccountant:
    """Record releases against a privacy budget, under one neighbour relation, and refuse any overrun.

    Parameters
    ----------
    epsilon : float
        Total epsilon budget, > 0.
    delta : float, default 0
        Total delta budget in [0, 1) (positive for zCDP accounting).
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation of every release charged here (one record replaced, the number of
        records fixed; or one record added or removed).  Each release's loss must be stated under it.
    accounting : {"approximate", "zcdp"}, default "approximate"
        "approximate": epsilons and deltas add.  "zcdp": every release must be rho-zCDP, rho adds,
        and the budget is the largest rho that implies (epsilon, delta)-DP
        (:func:`cellsafe.dp.cdp_rho`).
    log : str or Path, optional
        The ledger file (format 3, :mod:`cellsafe.dp._ledger`), written after every entry.

    Examples
    --------
    >>> acc = PrivacyAccountant(epsilon=1.0, relation="add-remove")
    >>> _ = acc.spend(0.5, label="counts by state", partition="state", part="TX")
    >>> _ = acc.spend(0.5, label="counts by state", partition="state", part="VT")
    >>> _ = acc.spend(0.5, label="national total")
    >>> acc.budget().epsilon_spent
    1.0
    >>> z = PrivacyAccountant(epsilon=1.0, delta=1e-9, accounting="zcdp")
    >>> round(z.budget().rho_budget, 6)
    0.014973
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        relation: str = REPLACE_ONE,
        accounting: str = "approximate",
        log: "str | Path | None" = None,
    ) -> None:
        owner = "PrivacyAccountant"
        self.epsilon = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True, high_open=True)
        self.delta = check_real(delta, "delta", owner, low=0.0, high=1.0, high_open=True)
        self.relation = check_relation(relation, owner)
        self.accounting = check_in(accounting, "accounting", owner, _ledger.ACCOUNTINGS)
        self.rho: float | None = None
        if self.accounting == "zcdp":
            if self.delta <= 0:
                raise InvalidArgumentError(
                    "zCDP accounting states its total as (epsilon, delta)-DP: give a positive delta (for example 1e-9)."
                )
            self.rho = cdp_rho(self.epsilon, self.delta)
        self.log = None if log is None else Path(log)
        self._header = self._new_header()
        self._entries: list[dict[str, Any]] = []
        self._hashes = [self._header["sha256"]]
        self._holding: int | None = None  # the lock file's descriptor inside the log's lock
        self._fresh = True  # never read from nor written to a file

    def _new_header(self) -> dict[str, Any]:
        h = {
            "format": _ledger.FORMAT,
            "ledger": uuid.uuid4().hex,
            "created": _now(),
            "budget": {"epsilon": self.epsilon, "delta": self.delta, "rho": self.rho},
            "relation": self.relation,
            "accounting": self.accounting,
        }
        h["sha256"] = _ledger.header_hash(h)
        return h

    # ------------------------------------------------------------------ reading the state
    @property
    def ledger(self) -> str:
        """The ledger's random id (recorded in every release's anchor)."""
        return str(self._header["ledger"])

    @property
    def head(self) -> str:
        """The hash chain's head (the hash of the last entry, or of the header)."""
        return self._hashes[-1]

    def _release(self, e: dict[str, Any]) -> Release:
        eps = math.inf if e["epsilon"] == "inf" else float(e["epsilon"])
        return Release(
            e.get("label", ""), eps, float(e.get("delta", 0.0)), e.get("rho"), e["relation"], e.get("partition"),
            e.get("part"), e["composition"], e.get("mechanism"), e.get("time", ""), e.get("output"), e["entry"],
            self.ledger, self._hashes[e["entry"]],
        )

    @property
    def releases(self) -> tuple[Release, ...]:
        """The releases charged (withdrawn reservations left out)."""
        return tuple(self._release(e) for e in _active(self._entries))

    def spent(self) -> tuple[float, float]:
        """(epsilon, delta) charged so far (for zCDP accounting: the conversion of the rho spent at the delta budget)."""
        active = _active(self._entries)
        if self.accounting == "zcdp":
            rho = _charge(active, "rho")
            return (cdp_epsilon(rho, self.delta), self.delta) if rho > 0 else (0.0, 0.0)
        return _charge(active, "epsilon"), _charge(active, "delta")

    def spent_rho(self) -> float | None:
        """rho charged so far (zCDP accounting), None for an approximate ledger."""
        return _charge(_active(self._entries), "rho") if self.accounting == "zcdp" else None

    def budget(self) -> BudgetSummary:
        """Budget, spent and remaining privacy loss."""
        e, d = self.spent()
        return BudgetSummary(
            self.epsilon, self.delta, e, d, len(_active(self._entries)), self.rho, self.spent_rho(), self.relation,
            self.accounting,
        )

    def summary(self) -> str:
        """The budget as text, then one line per release (entry, time, loss, records used, label)."""
        lines = [self.budget().summary()]
        for r in self.releases:
            where = "all records" if r.partition is None else f"{r.partition}={r.part} ({r.composition})"
            loss = f"rho {r.rho:<10.4g}" if self.accounting == "zcdp" else f"eps {r.epsilon:<10.4g} delta {r.delta:<8.3g}"
            lines.append(f"  #{r.entry:<3d} {r.time or '-':25s} {loss} {where:28s} {r.label}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ spending
    def _loss(self, loss: Any, delta: float) -> PrivacyLoss:
        if isinstance(loss, PrivacyLoss):
            if delta:
                raise InvalidArgumentError("give delta inside the PrivacyLoss, not beside it.")
            if loss.relation != self.relation:
                raise InvalidArgumentError(
                    f"this loss is stated under {loss.relation!r} neighbours, but the ledger's relation is "
                    f"{self.relation!r}: one ledger holds one relation. Ask the mechanism for its loss under the "
                    f"ledger's relation (mechanism.privacy_loss({self.relation!r}))."
                )
            out = loss
        else:
            eps = check_real(loss, "epsilon", "PrivacyAccountant.spend", low=0.0, high_open=True)
            dl = check_real(delta, "delta", "PrivacyAccountant.spend", low=0.0, high=1.0, high_open=True)
            out = PrivacyLoss(eps, dl, eps * eps / 2.0 if dl == 0 else None, self.relation)
        if self.accounting == "zcdp" and out.rho is None:
            raise InvalidArgumentError(
                "this ledger composes zCDP (rho), and the release is not zCDP (an (epsilon, delta) loss with delta > 0 "
                "has no rho): adding it to rho would be unsound. Charge it to an approximate ledger, or use a zCDP "
                "mechanism (discrete Gaussian noise)."
            )
        if self.accounting == "approximate" and not math.isfinite(out.epsilon):
            raise InvalidArgumentError(
                "this ledger composes (epsilon, delta), and the release states no finite epsilon (a zCDP loss needs "
                "its delta: PrivacyLoss.zcdp(rho, relation, delta=...) or mechanism.privacy_loss(relation, delta=...))."
            )
        return out

    def _composition(self, partition: Any, part: Any, public_parts: bool) -> tuple[str | None, str | None, str]:
        if (partition is None) != (part is None):
            raise InvalidArgumentError(
                "give both 'partition' and 'part' (a release on part of the records) or neither."
            )
        if partition is None:
            if public_parts:
                raise InvalidArgumentError("public_parts applies to a release on one part (give partition and part).")
            return None, None, "sequential"
        parallel = self.relation == "add-remove" or bool(public_parts)
        return str(partition), str(part), "parallel" if parallel else "sequential"

    def _trial(self, entry: dict[str, Any]) -> tuple[float, float, float]:
        active = _active(self._entries) + [entry]
        return _charge(active, "epsilon"), _charge(active, "delta"), _charge(active, "rho")

    def _fits(self, entry: dict[str, Any]) -> bool:
        e, d, r = self._trial(entry)
        if self.accounting == "zcdp":
            return r <= float(self.rho) * (1 + _TOL) + _TOL  # type: ignore[arg-type]
        return e <= self.epsilon + _TOL and d <= self.delta + _TOL

    def _entry(self, loss: PrivacyLoss, label: str, partition: Any, part: Any, composition: str,
               mechanism: str | None, output: str | None) -> dict[str, Any]:
        return {
            "kind": "release",
            "label": str(label),
            "epsilon": _eps_value(loss.epsilon),
            "delta": loss.delta,
            "rho": loss.rho,
            "relation": loss.relation,
            "partition": partition,
            "part": part,
            "composition": composition,
            "mechanism": mechanism,
            "time": _now(),
            "output": None if output is None else str(output),
        }

    def can_spend(self, loss: Any, delta: float = 0.0, partition: str | None = None, part: Any = None,
                  public_parts: bool = False) -> bool:
        """Whether a release with this loss fits in the remaining budget."""
        lo = self._loss(loss, delta)
        partition, part, comp = self._composition(partition, part, public_parts)
        return self._fits(self._entry(lo, "", partition, part, comp, None, None))

    def spend(
        self,
        loss: "PrivacyLoss | float",
        delta: float = 0.0,
        *,
        label: str = "",
        partition: str | None = None,
        part: Any = None,
        public_parts: bool = False,
        mechanism: str | None = None,
        output: "str | os.PathLike[str] | None" = None,
    ) -> Release:
        """Record a release, or raise :class:`BudgetExceededError` if it would overrun the budget.

        Parameters
        ----------
        loss : PrivacyLoss or float
            The release's privacy loss under the ledger's relation (``mechanism.privacy_loss(...)``).
            A float is a pure epsilon stated by the caller under the ledger's relation (with ``delta``).
        delta : float
            With a float ``loss`` only.
        label : str
            What was released (for the log).
        partition, part : str, optional
            The release used only the records in ``part`` of ``partition`` (both or neither).
        public_parts : bool, default False
            The part sizes are public and no record may change part.  Under replace-one this is
            what lets releases on different parts compose in parallel; otherwise each is charged
            in full.  Under add-remove parts always compose in parallel.
        mechanism : str, optional
            Mechanism name for the log.
        output : path, optional
            Where the release is written (the log records it; :meth:`verify` checks its anchor).
        """
        lo = self._loss(loss, delta)
        partition, part_s, comp = self._composition(partition, part, public_parts)
        if mechanism is not None and mechanism not in _ledger.known_mechanisms():
            raise InvalidArgumentError(
                f"The 'mechanism' of PrivacyAccountant.spend must be a known mechanism name "
                f"({', '.join(sorted(_ledger.known_mechanisms()))}). Got {mechanism!r} instead."
            )
        if self.log is not None and self._holding is None:
            with self._locked():
                return self.spend(lo, label=label, partition=partition, part=part_s, public_parts=public_parts,
                                  mechanism=mechanism, output=output)
        entry = self._entry(lo, label, partition, part_s, comp, mechanism, None if output is None else str(output))
        if not self._fits(entry):
            e0, d0 = self.spent()
            e1, d1, r1 = self._trial(entry)
            if self.accounting == "zcdp":
                state = (f"bring rho to {r1:.6g}, beyond the budget rho {self.rho:.6g} (epsilon {self.epsilon:g} at delta "
                         f"{self.delta:g}; already spent rho {self.spent_rho():.6g})")
            else:
                state = (f"bring the total to epsilon={e1:g}, delta={d1:g}, beyond the budget epsilon={self.epsilon:g}, "
                         f"delta={self.delta:g} (already spent epsilon={e0:g}, delta={d0:g})")
            raise BudgetExceededError(
                f"release {label!r} ({'rho=' + format(lo.rho, '.6g') if self.accounting == 'zcdp' else f'epsilon={lo.epsilon:g}, delta={lo.delta:g}'}"
                f"{', ' + comp + ' on ' + str(partition) + '=' + str(part_s) if partition else ''}) would {state}. "
                "Spend less on this release or release fewer statistics."
            )
        self._append(entry)
        if self.log is not None:
            self._write()
        return self._release(entry)

    def _append(self, entry: dict[str, Any]) -> None:
        entry["entry"] = len(self._entries) + 1
        entry["sha256"] = _ledger.entry_hash(self._hashes[-1], entry)
        self._entries.append(entry)
        self._hashes.append(entry["sha256"])

    def _withdraw(self, release: Release, reason: str) -> None:
        self._append({"kind": "withdrawal", "withdraws": release.entry, "label": reason[:200], "time": _now()})

    # ------------------------------------------------------------------ the file
    def to_dict(self) -> dict[str, Any]:
        """A view of the ledger: budget, relation, accounting, spent, and the releases with their anchors."""
        return {
            "format": _ledger.FORMAT,
            "ledger": self.ledger,
            "relation": self.relation,
            "accounting": self.accounting,
            "budget": {"epsilon": self.epsilon, "delta": self.delta, "rho": self.rho},
            "spent": {"epsilon": self.spent()[0], "delta": self.spent()[1], "rho": self.spent_rho()},
            "summary": self.budget().to_dict(),
            "head": self.head,
            "releases": [r.to_dict() for r in self.releases],
            "withdrawn": [e["withdraws"] for e in self._entries if e["kind"] == "withdrawal"],
        }

    def save(self, path: "str | Path") -> Path:
        """Write the ledger (format 3) atomically; for the attached log, under its lock and with its anchor."""
        path = Path(path)
        if self.log is not None and path == self.log:
            if self._holding is None:
                with self._locked():
                    return self.save(path)
            self._write()
            return path
        if path.exists():
            raise DataError(f"{str(path)!r} exists; a ledger is written to a new file (or attached with log=).")
        self._write_file(path)
        return path

    def _write_file(self, path: Path) -> None:
        from ..io import atomic_path

        with atomic_path(path) as tmp:
            tmp.write_text(_ledger.format_log(self._header, self._entries))

    def _write(self) -> None:
        """Write the attached log, then its anchor (inside the lock)."""
        assert self.log is not None and self._holding is not None
        self._write_file(self.log)
        _ledger.write_anchor(self._holding, self.ledger, len(self._entries), self.head)
        self._fresh = False

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the log's lock and bring the ledger up to date with the file (others may have written)."""
        assert self.log is not None
        with _ledger.locked(self.log) as fd:
            self._holding = fd
            try:
                anchor = _ledger.read_anchor(self.log, fd)
                if self.log.exists():
                    header, entries, hashes = _read(self.log)
                    forward = _ledger.check_against_anchor(str(self.log), header, hashes, anchor)
                    self._adopt(header, entries, hashes)
                    if forward:
                        _ledger.write_anchor(fd, self.ledger, len(entries), self.head)
                elif anchor is not None and anchor.get("entries"):
                    raise DataError(
                        f"the budget log {str(self.log)!r} is missing, but {str(_ledger.lock_path(self.log))!r} anchors "
                        f"ledger {anchor['ledger']} with {anchor['entries']} entries: the log was removed or moved. "
                        "Restore it; nothing is charged to a new log in its place."
                    )
                elif not self._fresh:
                    raise DataError(f"the budget log {str(self.log)!r} this accountant was attached to is missing.")
                yield
            finally:
                self._holding = None

    def _adopt(self, header: dict[str, Any], entries: list[dict[str, Any]], hashes: list[str]) -> None:
        if self._fresh and not self._entries:
            same = (
                header["budget"]["epsilon"] == self.epsilon
                and header["budget"].get("delta", 0.0) == self.delta
                and header["relation"] == self.relation
                and header["accounting"] == self.accounting
            )
            if not same:
                raise DataError(
                    f"the budget log {str(self.log)!r} exists with budget epsilon {header['budget']['epsilon']:g}, delta "
                    f"{header['budget'].get('delta', 0.0):g}, {header['relation']}, {header['accounting']}; load it "
                    "with PrivacyAccountant.load instead of starting another ledger on it."
                )
        elif header["ledger"] != self.ledger:
            raise DataError(
                f"the budget log {str(self.log)!r} is now ledger {header['ledger']}, not the ledger {self.ledger} this "
                "accountant was reading: it was replaced. Nothing is charged; load the log again after checking it."
            )
        self._header, self._entries, self._hashes = header, entries, hashes
        self._fresh = False

    # ------------------------------------------------------------------ the critical section
    @contextlib.contextmanager
    def reserve(
        self,
        loss: "PrivacyLoss | float",
        delta: float = 0.0,
        *,
        label: str = "",
        partition: str | None = None,
        part: Any = None,
        public_parts: bool = False,
        mechanism: str | None = None,
        output: "str | os.PathLike[str] | None" = None,
    ) -> Iterator[Release]:
        """The critical section of one release: check, reserve, release, commit (or withdraw).

        With a log, its exclusive lock is held from before the ledger is read until the release
        is committed, so concurrent releases against one log are serialized and none can overrun
        the budget.  The reservation is written (and anchored) before the body runs: a release
        killed half-way stays charged, the safe side.  If the body raises, a withdrawal is
        appended (the log only grows) and the error propagates.  The yielded :class:`Release`
        carries the :attr:`~Release.anchor` to record in the release's manifest.

        Examples
        --------
        >>> acc = PrivacyAccountant(epsilon=1.0)
        >>> with acc.reserve(0.4, label="counts by region") as rel:
        ...     pass  # compute and write the release here
        >>> acc.spent(), rel.entry
        ((0.4, 0.0), 1)
        """
        ctx = self._locked() if self.log is not None and self._holding is None else contextlib.nullcontext()
        with ctx:
            rel = self.spend(loss, delta, label=label, partition=partition, part=part, public_parts=public_parts,
                             mechanism=mechanism, output=output)
            try:
                yield rel
            except BaseException as exc:
                self._withdraw(rel, f"failed: {type(exc).__name__}")
                if self.log is not None:
                    self._write()
                raise

    # ------------------------------------------------------------------ anchors, both ways
    def check_anchor(self, anchor: Any, where: str = "the release") -> Release:
        """Check that a release's recorded anchor is in this ledger; return that release.

        The anchor (``{"ledger", "release", "head"}``, from a release's public manifest) must name
        this ledger, an entry that is a release not withdrawn, and the chain's head after it.
        """
        if not isinstance(anchor, dict) or not {"ledger", "release", "head"} <= set(anchor):
            raise DataError(f"{where} carries no ledger anchor (ledger, release, head).")
        if anchor["ledger"] != self.ledger:
            raise DataError(f"{where} was charged to ledger {anchor['ledger']}, not to this ledger ({self.ledger}).")
        k = anchor["release"]
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= len(self._entries):
            raise DataError(
                f"{where} is release {k!r} of ledger {self.ledger}, which holds {len(self._entries)} entries: the log "
                "was truncated or replaced."
            )
        if self._hashes[k] != anchor["head"]:
            raise DataError(f"{where} is release {k} of this ledger, but the log's chain differs there: the log was edited.")
        entry = self._entries[k - 1]
        if entry["kind"] != "release" or entry["entry"] not in {e["entry"] for e in _active(self._entries)}:
            raise DataError(f"{where} is entry {k} of this ledger, which the log records as withdrawn or not a release.")
        return self._release(entry)

    def verify(self) -> list[str]:
        """Problems found checking every release's output against the ledger (an empty list when none).

        Each release that recorded an output folder must still hold a manifest whose ledger anchor
        is that release's; a missing folder is reported too (it may have moved).
        """
        problems = []
        for r in self.releases:
            if r.output is None:
                continue
            manifest = Path(r.output) / "manifest.json"
            try:
                data = json.loads(manifest.read_text())
            except (OSError, ValueError):
                problems.append(f"release {r.entry} ({r.label!r}): no readable manifest at {str(manifest)!r}.")
                continue
            anchor = (data.get("details") or {}).get("ledger") or data.get("ledger")
            if anchor != r.anchor:
                problems.append(
                    f"release {r.entry} ({r.label!r}): {str(manifest)!r} records ledger anchor {anchor!r}, "
                    f"not {r.anchor!r}."
                )
        return problems

    # ------------------------------------------------------------------ files
    @classmethod
    def load(cls, path: "str | Path", *, attach: bool = True) -> "PrivacyAccountant":
        """Read a ledger (format 3), checking its chain and its anchor; with ``attach`` further releases go to it."""
        path = Path(path)
        try:
            # without the lock: the anchor first, then the log (a writer writes the log, then the anchor,
            # so a log read after its anchor holds at least the entries the anchor records)
            anchor = _ledger.read_anchor(path)
            header, entries, hashes = _read(path)
            _ledger.check_against_anchor(str(path), header, hashes, anchor)
        except DataError:
            if not (path.exists() and _ledger.lock_path(path).exists()):
                raise
            # a writer may have been between its two writes: judge again under the lock
            with _ledger.locked(path) as fd:
                anchor = _ledger.read_anchor(path, fd)
                header, entries, hashes = _read(path)
                _ledger.check_against_anchor(str(path), header, hashes, anchor)
        b = header["budget"]
        acc = cls(b["epsilon"], b.get("delta", 0.0), relation=header["relation"], accounting=header["accounting"],
                  log=path if attach else None)
        acc._header, acc._entries, acc._hashes = header, entries, hashes
        acc._fresh = False
        return acc

    @classmethod
    def create(cls, path: "str | Path", epsilon: float, delta: float = 0.0, *, relation: str = REPLACE_ONE,
               accounting: str = "approximate") -> "PrivacyAccountant":
        """Start a new ledger file (refused if it exists, or if its lock file anchors a ledger)."""
        path = Path(path)
        acc = cls(epsilon, delta, relation=relation, accounting=accounting, log=path)
        with _ledger.locked(path) as fd:
            if path.exists():
                raise DataError(f"{str(path)!r} already exists; inspect it, or choose another name for a new ledger.")
            anchor = _ledger.read_anchor(path, fd)
            if anchor is not None and anchor.get("entries"):
                raise DataError(
                    f"{str(_ledger.lock_path(path))!r} anchors ledger {anchor['ledger']} with {anchor['entries']} entries, "
                    f"and {str(path)!r} is gone: the log was removed. Restore it; to start a new budget period on purpose, "
                    "use another file name."
                )
            acc._holding = fd
            try:
                acc._write()
            finally:
                acc._holding = None
        return acc

    @classmethod
    def upgrade(cls, path: "str | Path", relation: str) -> "PrivacyAccountant":
        """Convert a format-2 log (its chain checked) to format 3, once; the old file is kept as ``LOG.format2``.

        Releases on parts were charged in parallel by format 2; under replace-one they are now
        charged in full (a record could change part), which may show the old log overspent.
        """
        path = Path(path)
        relation = check_relation(relation, "PrivacyAccountant.upgrade")
        with _ledger.locked(path) as fd:
            anchor = _ledger.read_anchor(path, fd)
            if anchor is not None:
                raise DataError(
                    f"{str(_ledger.lock_path(path))!r} anchors format-3 ledger {anchor['ledger']}: {str(path)!r} was already "
                    "upgraded, and an older format in its place is a downgrade. Restore the format-3 log."
                )
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise DataError(f"no privacy budget log at {str(path)!r}.") from None
            eps, delta, old = _ledger.read_legacy(text, str(path))
            acc = cls(eps, delta, relation=relation, log=path)
            names = _ledger.known_mechanisms()
            for r in old:
                part = r.get("part")
                comp = "parallel" if part is not None and relation == "add-remove" else "sequential"
                e = float(r["epsilon"])
                d = float(r.get("delta", 0.0))
                entry = acc._entry(PrivacyLoss(e, d, e * e / 2 if d == 0 else None, relation), r.get("label", ""),
                                   r.get("partition"), None if part is None else str(part), comp,
                                   r.get("mechanism") if r.get("mechanism") in names else "other", None)
                entry["time"] = r.get("time", "") or ""
                acc._append(entry)
            backup = path.with_name(path.name + ".format2")
            os.replace(path, backup)
            acc._holding = fd
            try:
                acc._write()
            finally:
                acc._holding = None
        return acc

    @classmethod
    def anchor_from(cls, path: "str | Path", anchor: Any) -> "PrivacyAccountant":
        """Rewrite a lost or damaged lock-file anchor from a release's recorded anchor (checked against the log)."""
        path = Path(path)
        with _ledger.locked(path) as fd:
            header, entries, hashes = _read(path)
            probe = cls(header["budget"]["epsilon"], header["budget"].get("delta", 0.0), relation=header["relation"],
                        accounting=header["accounting"])
            probe._header, probe._entries, probe._hashes = header, entries, hashes
            rel = probe.check_anchor(anchor, "the release given")
            last = max((e["entry"] for e in entries if e["kind"] == "release"), default=0)
            if rel.entry != last:
                raise DataError(
                    f"the release given is entry {rel.entry}, but the log's last release is entry {last}: anchor from the "
                    "latest release."
                )
            _ledger.write_anchor(fd, header["ledger"], len(entries), hashes[-1])
        return cls.load(path)

    def __repr__(self) -> str:
        e, d = self.spent()
        if self.accounting == "zcdp":
            return f"PrivacyAccountant(rho={self.spent_rho():.6g}/{self.rho:.6g}, {self.relation}, releases={len(self.releases)})"
        return (
            f"PrivacyAccountant(epsilon={e:.6g}/{self.epsilon:.6g}, delta={d:.3g}/{self.delta:.3g}, {self.relation}, "
            f"releases={len(self.releases)})"
        )


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"no privacy budget log at {str(path)!r}.") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{str(path)!r} is not a cellsafe privacy budget log: {exc}.") from None
    return _ledger.parse_log(text, str(path))
