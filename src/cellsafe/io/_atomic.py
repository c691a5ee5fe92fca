"""Atomic output: write to a temporary file beside the target, then rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator


from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError

__all__ = ["atomic_path", "write_frame", "ensure_writable_dir"]


def ensure_writable_dir(path: "str | os.PathLike[str]") -> Path:
    """Create ``path`` if needed and check that files can be written in it."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create output folder {str(p)!r}: {exc.strerror}; choose another --output.") from None
    if not p.is_dir():
        raise DataError(f"output {str(p)!r} exists and is not a folder; choose another --output.")
    if not os.access(p, os.W_OK | os.X_OK):
        raise DataError(f"output folder {str(p)!r} is not writable; choose another --output or fix its permissions.")
    return p


@contextlib.contextmanager
def atomic_path(target: "str | os.PathLike[str]") -> Iterator[Path]:
    """Yield a temporary path in the target's folder; rename it onto ``target`` only on success."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(tmp_path, 0o666 & ~mask)  # mkstemp makes 0600; the output honours the umask like open() would
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_frame(df: pd.DataFrame, target: "str | os.PathLike[str]", fmt: str | None = None) -> Path:
    """Write ``df`` to CSV or Parquet atomically; the format follows ``fmt`` or the file's suffix."""
    target = Path(target)
    fmt = (fmt or target.suffix.lstrip(".") or "csv").lower()
    if fmt not in ("csv", "parquet"):
        raise InvalidArgumentError(f"output format must be 'csv' or 'parquet'. Got {fmt!r}.")
    with atomic_path(target) as tmp:
        if fmt == "csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_parquet(tmp, index=False)
    return target
