"""What a report is given: released outputs with their manifests, and the targets a panel sets.

- :class:`Released`: the implicates of one release (tables or records), its manifest and the
  mechanism the manifest names; :func:`load_release` reads a folder written by
  ``cellsafe synthesize`` or ``cellsafe synthesize-microdata``.
- :class:`Requirement` and :func:`parse_requirement`: ``'tau4(1)<=0.4'``, ``'hellinger>=0.9'``,
  ``'within(5)>=0.8'``, ``'loss<=1000'``; :meth:`Requirement.value_in` reads the metric from
  the dict of an a priori assessment or of empirical table metrics, so that a verdict judges
  exactly the numbers printed by ``cellsafe assess --json`` and ``cellsafe evaluate --json``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, InvalidArgumentError
from ..table import CountTable

__all__ = ["Released", "load_release", "Requirement", "parse_requirement"]


@dataclass(frozen=True)
class Released:
    """The implicates of one release.

    Attributes
    ----------
    name : str
        How the report names it (the folder's name by default).
    kind : {'table', 'microdata'}
    tables : tuple of CountTable
        The released tables (kind 'table'), on the original's variables and cells.
    frames : tuple of pandas.DataFrame
        The synthetic records (kind 'microdata').
    manifest : dict or None
        The manifest written with the release.
    files : tuple of str
        The released files, in implicate order.
    mechanism : CellwiseMechanism or None
        The mechanism named by the manifest's spec (table releases).
    """

    name: str
    kind: str
    tables: tuple = ()
    frames: tuple = ()
    manifest: dict | None = field(default=None, repr=False)
    files: tuple[str, ...] = ()
    mechanism: Any = None

    @property
    def m(self) -> int:
        """The number of implicates."""
        return len(self.tables) if self.kind == "table" else len(self.frames)


_DATA_SUFFIXES = (".csv", ".parquet", ".pq", ".parq", ".gz")


def _implicate_number(path: Path) -> tuple[int, str]:
    hit = re.search(r"_(\d+)$", path.stem)
    return (int(hit.group(1)) if hit else 0, path.name)


def _manifest_of(folder: Path) -> tuple[dict | None, Path | None]:
    for candidate in [folder / "manifest.json", *sorted(folder.glob("*_manifest.json"))]:
        if candidate.is_file():
            try:
                return json.loads(candidate.read_text()), candidate
            except (OSError, ValueError) as exc:
                raise DataError(f"the manifest {str(candidate)!r} is not readable JSON ({exc}).") from None
    return None, None


def load_release(
    path: "str | Path",
    original: CountTable | None = None,
    *,
    name: str | None = None,
    count: str | None = None,
) -> Released:
    """Read a release folder: its manifest and every implicate it lists.

    Parameters
    ----------
    path : str or Path
        A folder written by ``cellsafe synthesize`` (synthetic tables) or ``cellsafe
        synthesize-microdata`` (synthetic records), with its manifest.
    original : CountTable, optional
        For table releases: the original table, whose variables and cells the released tables are
        read on (categories must be among the original's).
    name : str, optional
        Default: the folder's name.
    count : str, optional
        The released tables' count column (default: the one rule of
        :func:`cellsafe.io.count_column_for`, a column named 'count').

    Returns
    -------
    Released
    """
    from ..io import aggregate_file, count_column_for, file_columns, read_frame, read_records

    folder = Path(path)
    if not folder.is_dir():
        raise DataError(f"--release {str(folder)!r} is not a folder; give the folder a synthesize command wrote.")
    manifest, where = _manifest_of(folder)
    if manifest is None:
        raise DataError(
            f"--release {str(folder)!r} has no manifest.json; a report needs the provenance of what it reports on "
            "(write the release with cellsafe synthesize or synthesize-microdata)."
        )
    listed = [o.get("file") for o in manifest.get("outputs", []) if o.get("file")]
    # the released tables or records; a release folder also holds descriptions (dp_synthesis.json) and manifests
    files = sorted((folder / f for f in listed if (folder / f).is_file() and Path(f).suffix.lower() in _DATA_SUFFIXES),
                   key=_implicate_number)
    if not files:
        raise DataError(f"the manifest {str(where)!r} lists no file present in {str(folder)!r}.")
    label = name or folder.name
    if "visit_sequence" in manifest or manifest.get("command") == "synthesize-microdata":
        frames = tuple(read_frame(str(f)) for f in files)
        return Released(label, "microdata", frames=frames, manifest=manifest, files=tuple(map(str, files)))
    if original is None:
        raise InvalidArgumentError("a table release is read on the original table: give original=.")
    tables = []
    for f in files:
        col, _ = count_column_for(file_columns(str(f)), list(original.names), count, where=f"release file {str(f)!r}")
        if not len(read_records(str(f))):  # a synthetic table whose every cell drew zero: written with no rows
            tables.append(original.with_counts(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)))
            continue
        # a released table has one row per non-zero cell: read as written (categories as text, exact counts), then
        # coded on the original's categories
        frame, col = aggregate_file(str(f), list(original.names), col)
        t = CountTable.from_frame(frame, list(original.variables), count=col)
        tables.append(original.with_counts(t.index, t.counts))  # keeps the structural zeros
    mech = None
    spec = (manifest.get("mechanism") or {}).get("spec")
    if spec:
        from ..mechanisms import CellwiseMechanism, make_mechanism

        mech = make_mechanism(spec)
        mech = mech if isinstance(mech, CellwiseMechanism) else None
    return Released(label, "table", tables=tuple(tables), manifest=manifest, files=tuple(map(str, files)), mechanism=mech)


_OPS = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}
_WITHIN = re.compile(r"^within\(([0-9.]+)\)$")


@dataclass(frozen=True)
class Requirement:
    """A bound on one metric: ``tau4(1) <= 0.4``.

    ``metric`` is 'tauN(k)', 'hellinger' (Hellinger utility), 'loss' (squared error per
    implicate) or 'within(p)' (share of all cells within p% of the original).
    """

    metric: str
    op: str
    bound: float

    @property
    def text(self) -> str:
        return f"{self.metric} {self.op} {self.bound:g}"

    @property
    def k(self) -> int | None:
        hit = re.match(r"^tau[1-4]\((\d+)\)$", self.metric)
        return int(hit.group(1)) if hit else None

    @property
    def p(self) -> float | None:
        hit = _WITHIN.match(self.metric)
        return float(hit.group(1)) if hit else None

    def value_in(self, metrics: Mapping[str, Any]) -> float:
        """The metric read from an ``assess --json`` dict (a priori) or an ``evaluate --json`` dict (empirical)."""
        if self.k is not None:
            return float(metrics["tau"][str(self.k)][self.metric[:4]])
        if self.metric == "hellinger":
            v = metrics.get("expected_hellinger_utility", metrics.get("hellinger_utility"))
            return math.nan if v is None else float(v)
        if self.metric == "loss":
            return float(metrics.get("expected_squared_error", metrics.get("squared_error")))
        return float(metrics["within_p"]["all"][f"{self.p:g}"])

    def check(self, value: float) -> bool | None:
        """True when met, False when not, None when the value is missing."""
        return None if value is None or not math.isfinite(value) else bool(_OPS[self.op](value, self.bound))


def parse_requirement(text: str) -> Requirement:
    """Parse ``'tau4(1)<=0.4'``, ``'hellinger>=0.9'``, ``'within(5)>=0.8'`` or ``'loss<=1000'``.

    Examples
    --------
    >>> parse_requirement("tau4(1) <= 0.4").text
    'tau4(1) <= 0.4'
    """
    from ..tuning import parse_target

    target = parse_target(text)  # the one syntax of targets, shared with tune
    if target.op == "=":
        bound = "tau1(0) <= tau2(0)" if target.zero_share else f"{target.metric.name}<={target.value:g}"
        raise InvalidArgumentError(
            f"a report's target is a bound, such as {bound!r} or '>=': '=' is a value that tune solves for. "
            f"Got {text!r}."
        )
    if target.metric.kind == "mse_utility":
        raise InvalidArgumentError(f"target {text!r}: use 'loss' (squared error) or 'hellinger' as the utility.")
    return Requirement(target.metric.name, target.op, target.value)


def requirement_counts(requirements: Sequence[Requirement]) -> tuple[list[int], list[float]]:
    """The counts k and percentages p the requirements read (added to the report's metrics)."""
    ks = sorted({r.k for r in requirements if r.k is not None})
    ps = sorted({r.p for r in requirements if r.p is not None})
    return ks, ps


def frame_records(frame: pd.DataFrame, digits: int = 6) -> list[dict[str, Any]]:
    """Rows of a small frame as JSON-ready records (numbers rounded for reading, NaN as None)."""
    out = []
    for row in frame.to_dict("records"):
        rec = {}
        for k, v in row.items():
            if isinstance(v, float):
                rec[str(k)] = None if math.isnan(v) else v
            elif hasattr(v, "item"):
                rec[str(k)] = v.item()
            else:
                rec[str(k)] = v
        out.append(rec)
    return out
