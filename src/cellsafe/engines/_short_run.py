"""Whether a Spark command on a local master is a short run, and the JVM settings that suit one.

Spark's JVM compiles hot code twice by default, first with the client compiler (C1) and then with the
server compiler (C2), and collects garbage with G1's helper threads.  On a small input the job is over
before C2's code pays for its compiling: on two cores, ``describe`` of 336,776 flights (4 columns, CSV)
took 21.4 CPU-s with the defaults and 11.5 with C1 alone and the serial collector (JVM start alone 9.0 and
5.2 CPU-s); on 3.4e6 records 23.9 against 17.7; on 1.35e7 records the defaults won, 30.7 against 40.0.
The crossover lies near 7e6 records of that shape; runs below :data:`SHORT_RUN_RECORDS` take the short-run
settings.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

__all__ = ["SHORT_RUN_JAVA_OPTIONS", "SHORT_RUN_RECORDS", "input_records", "is_short_run"]

# The client compiler alone and the serial collector: a JVM that starts and finishes a small job cheaply.
SHORT_RUN_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# Inputs of fewer records than this run with SHORT_RUN_JAVA_OPTIONS (half the crossover measured above).
SHORT_RUN_RECORDS = 3_000_000

# Bytes of a CSV file read to learn its mean line length.
_SAMPLE = 1 << 16


def _files(source: Any) -> list[Path] | None:
    paths = [source] if isinstance(source, (str, os.PathLike)) else None
    if paths is None:
        return None
    out: list[Path] = []
    for p in map(str, paths):
        if "://" in p:
            return None  # a remote store: not counted
        if any(ch in p for ch in "*?["):
            out += [Path(q) for q in sorted(glob.glob(p)) if Path(q).is_file()]
        elif Path(p).is_dir():
            out += [q for q in sorted(Path(p).rglob("*.parquet")) if q.is_file()]
        elif Path(p).is_file():
            out.append(Path(p))
        else:
            return None
    return out or None


def _csv_records(path: Path) -> int | None:
    """About how many records a plain CSV file holds: its size over the mean length of its first lines."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(_SAMPLE)
    lines = head.count(b"\n")
    if not lines:
        return 1 if size else 0
    return int(size / (len(head) / lines))


def input_records(source: Any) -> int | None:
    """About how many records (rows) a Spark command's input holds, without reading it.

    Parquet: the footers' row counts; plain CSV: the file's size over the mean length of its first
    64 KB of lines.  None when that cannot be told cheaply: a frame, a remote path, compressed CSV, a
    file of another kind.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = f.write_text("a,b\\n" + "x,1\\n" * 999)
    >>> input_records(f)
    1000
    """
    files = _files(source)
    if files is None:
        return None
    total = 0
    for f in files:
        name = f.name.lower()
        if name.endswith((".csv", ".tsv")):
            n = _csv_records(f)
        elif name.endswith((".parquet", ".pq", ".parq")):
            try:
                import pyarrow.parquet as pq

                n = pq.read_metadata(f).num_rows
            except Exception:  # noqa: BLE001  not a Parquet file pyarrow can read: Spark says why later
                return None
        else:
            return None
        if n is None:
            return None
        total += n
    return total


def is_short_run(master: str, source: Any) -> bool:
    """A local master on an input of fewer than :data:`SHORT_RUN_RECORDS` records (as far as can be told)."""
    if not master.startswith("local"):
        return False
    n = input_records(source)
    return n is not None and n < SHORT_RUN_RECORDS
