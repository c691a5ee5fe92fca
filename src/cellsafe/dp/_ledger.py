"""The privacy budget log on disk: an exclusive lock, a validated schema and a hash chain.

A budget log is only as good as its weakest reader and writer.  Three rules make it hold:

* **One writer at a time.**  :func:`locked` takes an exclusive ``fcntl.flock`` on a lock file
  beside the log (``LOG.lock``; the log itself is replaced atomically by rename, so it cannot
  carry the lock).  The accountant reads the log, checks the budget, reserves the release, runs
  it and commits, all inside one lock: two processes can no longer both read "1.0 left" and both
  spend 0.7.
* **Only valid numbers.**  :func:`validate` checks the schema on load: the budget positive and
  finite, each release's epsilon and delta finite numbers >= 0 (text such as ``"0.1"`` is refused,
  not converted), known field names, known mechanism names, parts given with their partition.
* **No silent edits.**  Each release carries ``sha256``, the hash of the previous release's hash
  and of its own canonical JSON (the first release chains from the hash of the budget).  Changing,
  removing or reordering a recorded release, or the budget, breaks the chain, and the log is
  refused with the first release that does not match.  The chain detects edits by someone who does
  not recompute it; it is not a signature (whoever can rewrite the file can rewrite the chain):
  keep the log where only the releasing team can write.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Iterator

from ..exceptions import DataError

__all__ = ["locked", "lock_path", "validate", "chain", "FORMAT", "KNOWN_MECHANISMS", "known_mechanisms"]

FORMAT = "cellsafe-privacy-budget/2"
_OLD_FORMAT = "cellsafe-privacy-budget/1"  # before the hash chain: read, and chained on the next save
_FIELDS = {"label", "epsilon", "delta", "partition", "part", "mechanism", "time"}

#: Mechanism names a log may record besides the registered mechanisms (cellsafe.mechanisms).
KNOWN_MECHANISMS = frozenset(
    {
        "multinomial-dirichlet",
        "poisson-gamma",
        "geometric",
        "laplace",
        "snapping",
        "gaussian",
        "discrete-gaussian",
        "discrete_gaussian",
        "randomized-response",
        "exponential",
        "other",
    }
)


def known_mechanisms() -> frozenset[str]:
    """Names accepted in a log: :data:`KNOWN_MECHANISMS` and every registered mechanism."""
    from ..mechanisms import mechanism_names

    return KNOWN_MECHANISMS | frozenset(mechanism_names())


def lock_path(log: "str | os.PathLike[str]") -> Path:
    """The lock file of a log: ``LOG.lock`` beside it."""
    p = Path(log)
    return p.with_name(p.name + ".lock")


@contextlib.contextmanager
def locked(log: "str | os.PathLike[str]") -> Iterator[None]:
    """Hold an exclusive lock on ``log`` (blocking until every other holder has released it)."""
    path = lock_path(log)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise DataError(f"cannot create the lock file {str(path)!r} of the budget log: {exc.strerror}.") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def chain(budget: dict[str, Any], releases: list[dict[str, Any]]) -> list[str]:
    """The hash of each release: sha256(previous hash, canonical JSON of the release without its hash)."""
    prev = hashlib.sha256(_canonical({"budget": budget})).hexdigest()
    out = []
    for r in releases:
        body = {k: v for k, v in r.items() if k != "sha256"}
        prev = hashlib.sha256(prev.encode("ascii") + _canonical(body)).hexdigest()
        out.append(prev)
    return out


def _number(value: Any, what: str, where: str, *, positive: bool, at_most: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"{where}: {what} must be a number. Got {value!r} ({type(value).__name__}).")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0) or (at_most is not None and v >= at_most):
        bound = "positive" if positive else "non-negative"
        extra = f" and below {at_most:g}" if at_most is not None else ""
        raise DataError(f"{where}: {what} must be a finite {bound} number{extra}. Got {value!r}.")
    return v


def validate(data: Any, path: str) -> tuple[float, float, list[dict[str, Any]]]:
    """Check a log's schema and hash chain; return (epsilon budget, delta budget, releases)."""
    where = f"the budget log {path!r}"
    if not isinstance(data, dict) or not isinstance(data.get("budget"), dict) or not isinstance(data.get("releases"), list):
        raise DataError(f"{path!r} is not a cellsafe privacy budget log (it needs 'budget' and 'releases').")
    fmt = data.get("format")
    if fmt not in (FORMAT, _OLD_FORMAT):
        raise DataError(f"{where} has format {fmt!r}; this version reads {FORMAT!r}.")
    budget = data["budget"]
    eps = _number(budget.get("epsilon"), "the epsilon budget", where, positive=True)
    delta = _number(budget.get("delta", 0.0), "the delta budget", where, positive=False, at_most=1.0)
    names = known_mechanisms()
    releases: list[dict[str, Any]] = []
    for i, r in enumerate(data["releases"], start=1):
        at = f"{where}, release {i}"
        if not isinstance(r, dict):
            raise DataError(f"{at} is not a JSON object.")
        if "label" not in r or "epsilon" not in r:
            raise DataError(f"{at} needs a label and an epsilon.")
        unknown = set(r) - _FIELDS - {"sha256"}
        if unknown:
            raise DataError(f"{at} has unknown field(s) {sorted(unknown)}.")
        _number(r.get("epsilon"), "epsilon", at, positive=False)
        _number(r.get("delta", 0.0), "delta", at, positive=False, at_most=1.0)
        if not isinstance(r.get("label", ""), str) or not isinstance(r.get("time", ""), str):
            raise DataError(f"{at}: label and time must be text.")
        if (r.get("partition") is None) != (r.get("part") is None):
            raise DataError(f"{at}: a part needs its partition and a partition its part.")
        for key in ("partition", "part"):
            if r.get(key) is not None and not isinstance(r[key], str):
                raise DataError(f"{at}: {key} must be text. Got {r[key]!r}.")
        mech = r.get("mechanism")
        if mech is not None and mech not in names:
            raise DataError(f"{at} names an unknown mechanism {mech!r}; known: {', '.join(sorted(names))}.")
        releases.append(r)
    if fmt == FORMAT:
        hashes = chain({"epsilon": budget["epsilon"], "delta": budget.get("delta", 0.0)}, releases)
        for i, (r, h) in enumerate(zip(releases, hashes), start=1):
            if r.get("sha256") != h:
                raise DataError(
                    f"{where} was edited: release {i} ({r.get('label', '')!r}) does not match the hash chain "
                    "(a recorded release or the budget changed, or a release was removed or moved). "
                    "Restore the log from its last good copy."
                )
    return eps, delta, [{k: v for k, v in r.items() if k != "sha256"} for r in releases]
