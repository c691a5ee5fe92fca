"""The privacy budget log on disk: JSON lines, a hash chain, and an anchor outside the log.

Format 3 (``cellsafe-privacy-budget/3``) is one JSON object per line:

* line 1, the **header**: the ledger's random id, the budget (epsilon, delta, and rho for zCDP
  accounting), the one neighbour relation of every release (``add-remove`` or ``replace-one``)
  and the accounting (``approximate``: epsilon and delta add; ``zcdp``: rho adds);
* every further line an **entry**: a release (its privacy loss under the ledger's relation, the
  records it used, whether it composes in parallel with releases on other parts, the mechanism,
  the time, the output it wrote) or a **withdrawal** (a reserved release that failed before
  anything was written).  The log only grows: nothing is ever removed or rewritten.

Each line carries ``sha256``, the hash of the previous line's hash and of its own canonical JSON
(the header's hash is that of its own JSON): editing, removing or reordering any line breaks the
chain from that line on, and the log is refused naming the line.

**Anchors outside the log.**  A chain alone does not show truncation (drop the last lines and the
rest still chains) and is not a signature (whoever rewrites the file can recompute it).  So the
chain's head, the number of entries and the ledger's id are also written

* into the lock file ``LOG.lock`` (fixed-length record, rewritten in place under the lock) after
  every entry: a log that is shorter than its anchor, or whose line at the anchor's position does
  not hash to the anchor's head, is refused; a log with entries and no anchor is refused;
* into every release's public manifest (``{"ledger", "release", "head"}``): whoever holds a
  release can ask that the log show that release, with that head, at that position
  (:meth:`cellsafe.dp.PrivacyAccountant.check_anchor`), and the custodian can check that every
  release the log lists still carries its anchor (:meth:`~cellsafe.dp.PrivacyAccountant.verify`).

**Older versions.**  Format 2 was one JSON document; format-2 readers cannot parse a JSON-lines
file, and a log of only its header lacks their ``releases``: an old version refuses a format-3
log instead of reading it without the anchor.  This version refuses formats 1 and 2 (a log
rewritten to an older format to escape the chain is a downgrade); ``cellsafe budget LOG
--upgrade`` converts a format-2 log once, and refuses when the lock file already anchors a
format-3 ledger.
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

from .._privacy import RELATIONS
from ..exceptions import DataError

__all__ = [
    "FORMAT",
    "LEGACY_FORMATS",
    "ACCOUNTINGS",
    "KNOWN_MECHANISMS",
    "known_mechanisms",
    "lock_path",
    "locked",
    "read_anchor",
    "write_anchor",
    "entry_hash",
    "header_hash",
    "parse_log",
    "format_log",
    "read_legacy",
]

FORMAT = "cellsafe-privacy-budget/3"
LEGACY_FORMATS = ("cellsafe-privacy-budget/1", "cellsafe-privacy-budget/2")
ACCOUNTINGS = ("approximate", "zcdp")
COMPOSITIONS = ("sequential", "parallel")

_HEADER_FIELDS = {"format", "ledger", "created", "budget", "relation", "accounting", "sha256"}
_RELEASE_FIELDS = {
    "entry", "kind", "label", "epsilon", "delta", "rho", "relation", "partition", "part", "composition",
    "mechanism", "time", "output", "sha256",
}
_WITHDRAWAL_FIELDS = {"entry", "kind", "withdraws", "label", "time", "sha256"}
_ANCHOR_BYTES = 512  # the lock file's record: rewritten whole, in place, at a fixed length

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
        "mst",
        "aim",
        "topdown",
        "other",
    }
)


def known_mechanisms() -> frozenset[str]:
    """Names accepted in a log: :data:`KNOWN_MECHANISMS` and every registered mechanism."""
    from ..mechanisms import mechanism_names

    return KNOWN_MECHANISMS | frozenset(mechanism_names())


# ---------------------------------------------------------------------- the lock and its anchor
def lock_path(log: "str | os.PathLike[str]") -> Path:
    """The lock file of a log: ``LOG.lock`` beside it (it also holds the anchor)."""
    p = Path(log)
    return p.with_name(p.name + ".lock")


@contextlib.contextmanager
def locked(log: "str | os.PathLike[str]") -> Iterator[int]:
    """Hold an exclusive lock on ``log`` (blocking until every other holder has released it).

    Yields the lock file's descriptor, through which the anchor is read and written.
    """
    path = lock_path(log)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise DataError(f"cannot create the lock file {str(path)!r} of the budget log: {exc.strerror}.") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def read_anchor(log: "str | os.PathLike[str]", fd: int | None = None) -> dict[str, Any] | None:
    """The anchor recorded in the lock file (None when the file is missing or empty)."""
    path = lock_path(log)
    try:
        raw = os.pread(fd, _ANCHOR_BYTES * 2, 0) if fd is not None else path.read_bytes()
    except FileNotFoundError:
        return None
    text = raw.decode("utf-8", errors="replace").strip().strip("\x00")
    if not text:
        return None
    try:
        anchor = json.loads(text)
    except ValueError:
        raise DataError(
            f"the anchor in {str(path)!r} is damaged ({text[:60]!r}); restore the lock file, or re-anchor the log from "
            "its latest release with 'cellsafe budget LOG --anchor RELEASE_DIR'."
        ) from None
    ok = (
        isinstance(anchor, dict)
        and anchor.get("format") == FORMAT
        and isinstance(anchor.get("ledger"), str)
        and isinstance(anchor.get("entries"), int)
        and not isinstance(anchor.get("entries"), bool)
        and anchor["entries"] >= 0
        and isinstance(anchor.get("head"), str)
    )
    if not ok:
        raise DataError(f"the anchor in {str(path)!r} is not a cellsafe ledger anchor: {text[:80]!r}.")
    return anchor


def write_anchor(fd: int, ledger: str, entries: int, head: str) -> None:
    """Rewrite the lock file's anchor in place (one fixed-length write, then fsync)."""
    text = json.dumps({"format": FORMAT, "ledger": ledger, "entries": int(entries), "head": head}, sort_keys=True)
    data = text.encode("ascii").ljust(_ANCHOR_BYTES, b" ") + b"\n"
    os.pwrite(fd, data, 0)
    os.fsync(fd)


# ---------------------------------------------------------------------- the chain
def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def header_hash(header: dict[str, Any]) -> str:
    """The hash of the header line (its canonical JSON without ``sha256``)."""
    return hashlib.sha256(_canonical({k: v for k, v in header.items() if k != "sha256"})).hexdigest()


def entry_hash(previous: str, entry: dict[str, Any]) -> str:
    """sha256(previous hash, canonical JSON of the entry without its own hash)."""
    body = {k: v for k, v in entry.items() if k != "sha256"}
    return hashlib.sha256(previous.encode("ascii") + _canonical(body)).hexdigest()


def format_log(header: dict[str, Any], entries: list[dict[str, Any]]) -> str:
    """The file's text: the header and the entries, one JSON object per line, hashes included."""
    lines = [json.dumps(header, sort_keys=True, ensure_ascii=False, allow_nan=False)]
    lines += [json.dumps(e, sort_keys=True, ensure_ascii=False, allow_nan=False) for e in entries]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- reading and checking
def _number(value: Any, what: str, where: str, *, positive: bool = False, below_one: bool = False,
            inf_ok: bool = False) -> float:
    if inf_ok and value == "inf":
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"{where}: {what} must be a number. Got {value!r} ({type(value).__name__}).")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0) or (below_one and v >= 1):
        bound = "positive" if positive else "non-negative"
        extra = " and below 1" if below_one else ""
        raise DataError(f"{where}: {what} must be a finite {bound} number{extra}. Got {value!r}.")
    return v


def _legacy_refusal(text: str, path: str) -> DataError | None:
    """The error for a whole-file JSON log of format 1 or 2 (None if the text is not one)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    fmt = data.get("format")
    if fmt in LEGACY_FORMATS or ("budget" in data and "releases" in data and fmt is None):
        return DataError(
            f"the budget log {path!r} is in the older format {fmt or 'cellsafe-privacy-budget/1'!r}, whose history "
            f"can be rolled back unnoticed; this version reads {FORMAT!r} only. Convert it once with 'cellsafe budget "
            f"{path} --upgrade --relation replace-one' (or add-remove: the neighbour relation its releases were "
            "stated under)."
        )
    return None


def _check_header(h: Any, where: str) -> None:
    if not isinstance(h, dict):
        raise DataError(f"{where}, line 1 is not a JSON object.")
    fmt = h.get("format")
    if fmt in LEGACY_FORMATS:
        raise DataError(
            f"{where}, line 1 says format {fmt!r}: an older format inside a format-3 file is a downgrade; refused. "
            "Restore the log from its last good copy."
        )
    if fmt != FORMAT:
        raise DataError(f"{where}, line 1: format {fmt!r}; this version reads {FORMAT!r}.")
    unknown = set(h) - _HEADER_FIELDS
    if unknown:
        raise DataError(f"{where}, line 1 has unknown field(s) {sorted(unknown)}.")
    if not isinstance(h.get("ledger"), str) or not h["ledger"]:
        raise DataError(f"{where}, line 1 has no ledger id.")
    if h.get("relation") not in RELATIONS:
        raise DataError(f"{where}, line 1: the neighbour relation must be one of {list(RELATIONS)}. Got {h.get('relation')!r}.")
    if h.get("accounting") not in ACCOUNTINGS:
        raise DataError(f"{where}, line 1: the accounting must be one of {list(ACCOUNTINGS)}. Got {h.get('accounting')!r}.")
    b = h.get("budget")
    if not isinstance(b, dict) or set(b) - {"epsilon", "delta", "rho"}:
        raise DataError(f"{where}, line 1: the budget must hold epsilon, delta (and rho).")
    _number(b.get("epsilon"), "the epsilon budget", f"{where}, line 1", positive=True)
    _number(b.get("delta", 0.0), "the delta budget", f"{where}, line 1", below_one=True)
    if h["accounting"] == "zcdp":
        _number(b.get("rho"), "the rho budget", f"{where}, line 1", positive=True)
        if not b.get("delta"):
            raise DataError(f"{where}, line 1: zCDP accounting needs a positive delta budget.")
    elif b.get("rho") is not None:
        raise DataError(f"{where}, line 1: a rho budget belongs to zCDP accounting only.")


def _check_entry(e: Any, n: int, line: int, header: dict[str, Any], names: frozenset[str], where: str) -> None:
    at = f"{where}, line {line}"
    if not isinstance(e, dict):
        raise DataError(f"{at} is not a JSON object.")
    if e.get("entry") != n:
        raise DataError(f"{at} is entry {e.get('entry')!r}, not {n}: entries were removed, added or reordered.")
    kind = e.get("kind")
    if kind == "withdrawal":
        unknown = set(e) - _WITHDRAWAL_FIELDS
        if unknown:
            raise DataError(f"{at} has unknown field(s) {sorted(unknown)}.")
        w = e.get("withdraws")
        if isinstance(w, bool) or not isinstance(w, int) or not 1 <= w < n:
            raise DataError(f"{at} withdraws {w!r}, which is not an earlier entry.")
        return
    if kind != "release":
        raise DataError(f"{at}: kind must be 'release' or 'withdrawal'. Got {kind!r}.")
    unknown = set(e) - _RELEASE_FIELDS
    if unknown:
        raise DataError(f"{at} has unknown field(s) {sorted(unknown)}.")
    _number(e.get("epsilon"), "epsilon", at, inf_ok=True)
    _number(e.get("delta", 0.0), "delta", at, below_one=True)
    if e.get("rho") is not None:
        _number(e["rho"], "rho", at)
    if e.get("relation") != header["relation"]:
        raise DataError(
            f"{at} is stated under {e.get('relation')!r}, but the ledger's neighbour relation is {header['relation']!r}: "
            "one ledger holds one relation."
        )
    if header["accounting"] == "zcdp" and e.get("rho") is None:
        raise DataError(f"{at} has no rho, and the ledger composes zCDP (rho): refused.")
    if header["accounting"] == "approximate" and e.get("epsilon") == "inf":
        raise DataError(f"{at} has no finite epsilon, and the ledger composes (epsilon, delta): refused.")
    if e.get("composition") not in COMPOSITIONS:
        raise DataError(f"{at}: composition must be one of {list(COMPOSITIONS)}. Got {e.get('composition')!r}.")
    if (e.get("partition") is None) != (e.get("part") is None):
        raise DataError(f"{at}: a part needs its partition and a partition its part.")
    if e["composition"] == "parallel" and e.get("partition") is None:
        raise DataError(f"{at}: a parallel release names its partition and part.")
    for key in ("label", "time"):
        if not isinstance(e.get(key, ""), str):
            raise DataError(f"{at}: {key} must be text.")
    for key in ("partition", "part", "output"):
        if e.get(key) is not None and not isinstance(e[key], str):
            raise DataError(f"{at}: {key} must be text. Got {e[key]!r}.")
    mech = e.get("mechanism")
    if mech is not None and mech not in names:
        raise DataError(f"{at} names an unknown mechanism {mech!r}; known: {', '.join(sorted(names))}.")


def parse_log(text: str, path: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Check a format-3 log's lines and chain; return (header, entries, hash of each line).

    ``hashes[0]`` is the header's hash and ``hashes[k]`` the head after entry k.
    """
    where = f"the budget log {path!r}"
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise DataError(f"{where} is empty; it is not a cellsafe privacy budget log.")
    try:
        header = json.loads(lines[0])
    except ValueError:
        legacy = _legacy_refusal(text, path)
        raise (legacy or DataError(f"{path!r} is not a cellsafe privacy budget log: line 1 is not JSON.")) from None
    if isinstance(header, dict) and "releases" in header and len(lines) == 1:
        legacy = _legacy_refusal(text, path)
        if legacy is not None:
            raise legacy
    _check_header(header, where)
    hashes = [header_hash(header)]
    if header.get("sha256") != hashes[0]:
        raise DataError(
            f"{where} was edited: line 1 (the budget and relation) does not match its hash. Restore the log from its "
            "last good copy."
        )
    names = known_mechanisms()
    entries: list[dict[str, Any]] = []
    for n, raw in enumerate(lines[1:], start=1):
        line = n + 1
        try:
            e = json.loads(raw)
        except ValueError:
            raise DataError(f"{where}, line {line} is not JSON: {raw[:60]!r}.") from None
        _check_entry(e, n, line, header, names, where)
        h = entry_hash(hashes[-1], e)
        if e.get("sha256") != h:
            raise DataError(
                f"{where} was edited: line {line} (entry {n}, {e.get('label', '')!r}) does not match the hash chain "
                "(a recorded entry changed, or one before it was removed or moved). Restore the log from its last "
                "good copy."
            )
        hashes.append(h)
        entries.append(e)
    return header, entries, hashes


def check_against_anchor(path: str, header: dict[str, Any], hashes: list[str], anchor: dict[str, Any] | None) -> bool:
    """Refuse a log that its anchor shows to be rolled back, replaced or edited.

    Returns True when the anchor must be brought forward (the log extends it: a release whose
    anchor was not yet written when its run stopped), False when it matches.
    """
    where = f"the budget log {path!r}"
    n = len(hashes) - 1
    lock = str(lock_path(path))
    if anchor is None:
        if n:
            raise DataError(
                f"{where} has {n} entries but no anchor in {lock!r} (the lock file was removed or emptied): its history "
                "cannot be checked for a rollback. Restore the lock file, or re-anchor from the latest release with "
                f"'cellsafe budget {path} --anchor RELEASE_DIR'."
            )
        return True
    if anchor["ledger"] != header["ledger"]:
        raise DataError(
            f"{where} is ledger {header['ledger']}, but {lock!r} anchors ledger {anchor['ledger']}: the log was replaced "
            "by another one. Restore the log this lock file belongs to."
        )
    k = anchor["entries"]
    if k > n:
        raise DataError(
            f"{where} was truncated: it has {n} entries, its anchor in {lock!r} records {k}. The last "
            f"{k - n} entr{'y was' if k - n == 1 else 'ies were'} removed (line {n + 2} onwards). Restore the log from its "
            "last good copy."
        )
    if hashes[k] != anchor["head"]:
        raise DataError(
            f"{where} was edited: line {k + 1} does not end the chain recorded in {lock!r} (a recorded entry or the "
            "budget changed, and the chain was recomputed). Restore the log from its last good copy."
        )
    return k < n


# ---------------------------------------------------------------------- the older formats (upgrade only)
def read_legacy(text: str, path: str) -> tuple[float, float, list[dict[str, Any]]]:
    """(epsilon budget, delta budget, releases) of a valid format-1 or -2 log (its chain checked)."""
    where = f"the budget log {path!r}"
    try:
        data = json.loads(text)
    except ValueError:
        raise DataError(f"{path!r} is not a format-1 or format-2 budget log (not one JSON document).") from None
    if not isinstance(data, dict) or not isinstance(data.get("budget"), dict) or not isinstance(data.get("releases"), list):
        raise DataError(f"{path!r} is not a cellsafe privacy budget log (it needs 'budget' and 'releases').")
    fmt = data.get("format", LEGACY_FORMATS[0])
    if fmt not in LEGACY_FORMATS:
        raise DataError(f"{where} has format {fmt!r}; --upgrade converts {LEGACY_FORMATS[1]!r} logs.")
    budget = data["budget"]
    eps = _number(budget.get("epsilon"), "the epsilon budget", where, positive=True)
    delta = _number(budget.get("delta", 0.0), "the delta budget", where, below_one=True)
    releases = data["releases"]
    prev = hashlib.sha256(_canonical({"budget": {"epsilon": budget["epsilon"], "delta": budget.get("delta", 0.0)}})).hexdigest()
    for i, r in enumerate(releases, start=1):
        at = f"{where}, release {i}"
        if not isinstance(r, dict) or "epsilon" not in r:
            raise DataError(f"{at} is not a release.")
        _number(r.get("epsilon"), "epsilon", at)
        _number(r.get("delta", 0.0), "delta", at, below_one=True)
        if fmt == LEGACY_FORMATS[1]:
            body = {k: v for k, v in r.items() if k != "sha256"}
            prev = hashlib.sha256(prev.encode("ascii") + _canonical(body)).hexdigest()
            if r.get("sha256") != prev:
                raise DataError(f"{where} was edited: release {i} does not match its hash chain; not upgraded.")
    if fmt == LEGACY_FORMATS[0] and releases:
        raise DataError(
            f"{where} is in format 1 (no hash chain) and holds releases: its history cannot be checked, so it is not "
            "upgraded. Start a new ledger."
        )
    return eps, delta, [{k: v for k, v in r.items() if k != "sha256"} for r in releases]
