"""Provenance of every output: the manifest written beside a run's files.

A :class:`Manifest` records what a user needs to trust, reproduce or audit a release: the cellsafe
version, the command line, the sha256 of each input, every parameter of the mechanism, the seed
(or that it was drawn securely and not kept), the start and end times, and each output file with
its sha256.  It is written as ``manifest.json`` inside an output folder, or as
``<output>.manifest.json`` beside a single output file.

:func:`find_manifest` finds the manifest that lists a file, so that commands reading several
released files (``evaluate``, ``compare``) can warn when they come from different runs.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import uuid
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["Manifest", "sha256_file", "find_manifest", "MANIFEST_NAME", "manifest_path_for", "custodian_path_for"]

MANIFEST_NAME = "manifest.json"
"""The manifest's name inside an output folder."""


def sha256_file(path: "str | os.PathLike[str]", chunk: int = 1 << 20) -> str:
    """The sha256 of a file's bytes, read in chunks (memory flat in the file's size).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> _ = f.write_bytes(b"abc")
    >>> sha256_file(f)[:16]
    'ba7816bf8f01cfea'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            block = fh.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def manifest_path_for(output: "str | os.PathLike[str]") -> Path:
    """Where the manifest of a single output file goes: ``<output>.manifest.json``."""
    p = Path(output)
    return p.with_name(p.name + ".manifest.json")


def custodian_path_for(output: "str | os.PathLike[str]") -> Path:
    """Where the custodian's whole record of a public release goes: ``<output>.custodian.json``, beside it."""
    p = Path(os.path.abspath(output))
    return p.with_name(p.name + ".custodian.json")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def _plain(x: Any) -> Any:
    """A JSON value for a mechanism parameter (numpy scalars and arrays, nested objects, specs)."""
    if isinstance(x, (str, bool, int, type(None))):
        return x
    if isinstance(x, float):
        return x if np.isfinite(x) else str(x)
    if isinstance(x, np.generic):
        return _plain(x.item())
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x.tolist()] if x.size <= 10_000 else {"shape": list(x.shape), "sha256": hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()}
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if hasattr(x, "get_params"):
        return {"class": type(x).__name__, "parameters": _plain(x.get_params())}
    return repr(x)


class Manifest:
    """The provenance record of one run, filled in as the run goes and written with its outputs.

    Parameters
    ----------
    command : str
        The sub-command (``synthesize``, ``publish``...).
    argv : sequence of str
        The command line as given.
    public : bool, default False
        The manifest goes into a release that may be published whole (a DP release): what is
        written beside the outputs is :meth:`public_dict` (no input paths or hashes, no command
        line, no seed), and the whole record goes to the custodian (:meth:`write_custodian`).

    Examples
    --------
    >>> m = Manifest("synthesize", ["synthesize", "in.csv"])
    >>> m.set_seed(42)
    >>> m.to_dict(outputs={})["seed"]
    42
    """

    def __init__(self, command: str, argv: Sequence[str], *, public: bool = False) -> None:
        from .. import __version__

        self.run_id = uuid.uuid4().hex
        self.command = command
        self.argv = [str(a) for a in argv]
        self.version = __version__
        self.started = _now()
        self.inputs: dict[str, str] = {}
        self.mechanism: dict[str, Any] | None = None
        self.seed: Any = "not used"
        self.notes: list[str] = []
        self.extra: dict[str, Any] = {}
        self.public = bool(public)
        self.public_extra: dict[str, Any] = {}

    def add_input(self, path: "str | os.PathLike[str] | None") -> None:
        """Record an input file and its sha256; a folder's files one by one (missing paths are skipped)."""
        if path is None:
            return
        p = Path(path)
        if p.is_file():
            self.inputs[str(p)] = sha256_file(p)
        elif p.is_dir():
            for f in sorted(q for q in p.rglob("*") if q.is_file() and not _hidden(q.relative_to(p))):
                self.inputs[str(f)] = sha256_file(f)

    def set_mechanism(self, mechanism: Any, spec: str | None = None) -> None:
        """Record every parameter of ``mechanism`` (``get_params()``) and its spec when it has one.

        The spec comes from the caller (``cellsafe.mechanisms.mechanism_spec``): io sits below the
        mechanisms and does not import them.
        """
        entry: dict[str, Any] = {"class": type(mechanism).__name__}
        if hasattr(mechanism, "get_params"):
            entry["parameters"] = _plain(mechanism.get_params())
        if spec is not None:
            entry["spec"] = spec
        self.mechanism = entry

    def set_seed(self, seed: Any) -> None:
        """Record the seed: an integer, or that it was drawn from the operating system and not kept."""
        if seed is None or (isinstance(seed, str) and seed == "secure"):
            self.seed = "drawn securely from the operating system (not recorded: the run cannot be repeated)"
        else:
            self.seed = int(seed)

    def to_dict(self, outputs: "dict[str, str]") -> dict[str, Any]:
        """The manifest as JSON-ready data, with the outputs (name -> sha256)."""
        out = {
            "cellsafe_version": self.version,
            "run_id": self.run_id,
            "command": self.command,
            "command_line": ["cellsafe", *self.argv],
            "python": platform.python_version(),
            "inputs": [{"path": k, "sha256": v} for k, v in self.inputs.items()],
            "mechanism": self.mechanism,
            "seed": self.seed,
            "started": self.started,
            "finished": _now(),
            "outputs": [{"file": k, "sha256": v} for k, v in outputs.items()],
        }
        if self.extra:
            out["details"] = _plain(self.extra)
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def public_dict(self, outputs: "dict[str, str]") -> dict[str, Any]:
        """What a public release may carry: version, command, mechanism, ``public_extra``, outputs with sha256.

        Nothing derived from the confidential inputs beyond the release itself: no input paths or
        hashes (a hash of the records lets anyone who knows all but one record test candidates
        for the last), no command line, no seed, no times.
        """
        out: dict[str, Any] = {
            "cellsafe_version": self.version,
            "command": self.command,
            "mechanism": self.mechanism,
            "outputs": [{"file": k, "sha256": v} for k, v in outputs.items()],
            "custodian_record": "kept by the data custodian, not published (inputs, command line, seed, times)",
        }
        if self.public_extra:
            out["details"] = _plain(self.public_extra)
        return out

    def write(self, path: "str | os.PathLike[str]", outputs: "dict[str, str]") -> Path:
        """Write the manifest as standard JSON to ``path`` (the caller makes it atomic); the public part if public."""
        p = Path(path)
        data = self.public_dict(outputs) if self.public else self.to_dict(outputs)
        p.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
        return p

    def write_custodian(self, path: "str | os.PathLike[str]", outputs: "dict[str, str]") -> Path:
        """Write the whole record (:meth:`to_dict`, with ``public_extra``) for the custodian."""
        p = Path(path)
        data = {"publication": "custodian copy: not for publication (input hashes, seed, command line)",
                **self.to_dict(outputs)}
        if self.public_extra:
            data.setdefault("details", {}).update(_plain(self.public_extra))
        p.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
        return p


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def find_manifest(path: "str | os.PathLike[str]") -> tuple[Path, dict[str, Any]] | None:
    """The manifest that lists ``path``: ``manifest.json`` in its folder, or ``<path>.manifest.json``.

    Returns ``(manifest path, its data)`` or None when no readable manifest lists the file.
    """
    p = Path(path)
    for candidate, name in ((manifest_path_for(p), p.name), (p.parent / MANIFEST_NAME, p.name)):
        if candidate.is_file():
            try:
                data = json.loads(candidate.read_text())
            except (OSError, ValueError):
                continue
            if any(o.get("file") == name for o in data.get("outputs", [])):
                return candidate, data
    return None


def provenance_notes(paths: Sequence["str | os.PathLike[str]"]) -> list[str]:
    """Warnings when released files come from different runs, have no manifest, or changed since written."""
    runs: dict[str, list[str]] = {}
    missing: list[str] = []
    notes: list[str] = []
    for path in paths:
        found = find_manifest(path)
        if found is None:
            missing.append(str(path))
            continue
        where, data = found
        runs.setdefault(data.get("run_id", str(where)), []).append(str(path))
        name = Path(path).name
        expected = next((o.get("sha256") for o in data.get("outputs", []) if o.get("file") == name), None)
        if expected and Path(path).is_file() and sha256_file(path) != expected:
            notes.append(f"{str(path)!r} changed since {str(where)!r} recorded it (sha256 differs).")
    if len(runs) > 1:
        groups = "; ".join(", ".join(v) for v in runs.values())
        notes.append(f"the released files come from {len(runs)} different runs (manifests): {groups}.")
    if runs and missing:
        notes.append(f"no manifest lists {', '.join(missing)}, while the other files come from a cellsafe run.")
    return notes


__all__.append("provenance_notes")
