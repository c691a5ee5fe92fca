"""Atomic output: one writer per target, temporary files out of every pattern's way, nothing left behind.

Everything temporary about an output ``P/X`` (a file or a folder) lives in its *work folder*, the
hidden sibling ``P/.X.partial/``:

- ``lock``: held (``flock``) by the one run writing ``P/X``, with that run's pid and start time.  A
  second run writing the same target refuses at once (:class:`OutputBusyError`, exit status 2); it
  never waits and never replaces the first run's output.
- ``run-<id>/X``: the file or folder being written, renamed onto ``P/X`` when complete.
- ``old-<id>``: an earlier output being removed (``--overwrite``).

Nothing temporary is ever a file of ``P`` itself, so a pattern such as ``P/*.csv`` never meets a
partial file, and a tool that skips hidden names (a shell, Python's :mod:`glob`, Spark, cellsafe's
``--glob``) never reads one.  A run that completes, or fails with an error, removes its work folder.
A run killed outright (``kill -9``, power loss) leaves it; the next run into ``P/X`` takes the lock
and removes what is there (no live run can own it: the lock says so), with the earlier naming
``P/.X.partial-XXXX`` of older versions.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import shutil
import uuid
from pathlib import Path
from typing import Iterator

from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError, OutputBusyError

__all__ = ["atomic_path", "write_frame", "ensure_writable_dir", "OutputLock", "work_folder", "umask", "open_up"]

WORK_SUFFIX = ".partial"


def umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def open_up(path: Path, folder: bool = False) -> None:
    """Give a file or folder the mode a plain ``open()``/``mkdir()`` would (0666/0777 less the umask)."""
    os.chmod(path, (0o777 if folder else 0o666) & ~umask())


def work_folder(target: "str | os.PathLike[str]") -> Path:
    """The hidden sibling folder holding the lock and the temporary files of output ``target``."""
    t = Path(os.path.abspath(target))
    return t.parent / f".{t.name}{WORK_SUFFIX}"


def ensure_writable_dir(path: "str | os.PathLike[str]", what: str = "output folder") -> Path:
    """Create folder ``path`` if needed and check that files can be written in it."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create {what} {str(p)!r}: {exc.strerror}; choose another --output.") from None
    if not p.is_dir():
        raise DataError(f"{what} {str(p)!r} exists and is not a folder; choose another --output.")
    if not os.access(p, os.W_OK | os.X_OK):
        raise DataError(f"{what} {str(p)!r} is not writable; choose another --output or fix its permissions.")
    return p


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class OutputLock:
    """The lock of one output target, and the temporary place its run writes into.

    :meth:`acquire` refuses at once when another run holds the target (:class:`OutputBusyError`),
    then removes what killed runs left in the work folder.  :meth:`temporary` gives the path to
    write the target's new content to; :meth:`release` removes the work folder.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with OutputLock(root / "t.csv") as lock:
    ...     _ = lock.temporary().write_text("a\\n1\\n")
    ...     _ = lock.install()
    >>> sorted(p.name for p in root.iterdir())
    ['t.csv']
    """

    def __init__(self, target: "str | os.PathLike[str]", what: str = "--output") -> None:
        self.target = Path(os.path.abspath(target))
        self.shown = str(target)
        self.what = what
        self.work = work_folder(self.target)
        self.run_id = uuid.uuid4().hex[:12]
        self._fd: int | None = None

    # ------------------------------------------------------------------ the lock
    def acquire(self) -> "OutputLock":
        """Take the target's lock, refusing at once if another run holds it; clear a killed run's leftovers."""
        if self._fd is not None:
            return self
        try:
            import fcntl
        except ImportError:  # pragma: no cover  (not POSIX: no lock, still a work folder)
            fcntl = None  # type: ignore[assignment]
        lock = self.work / "lock"
        for _ in range(1000):
            try:
                self.work.mkdir(exist_ok=True)
                fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
            except FileNotFoundError:
                if not self.work.parent.is_dir():
                    raise DataError(f"the folder of {self.what} {self.shown!r} does not exist.") from None
                continue  # a run finishing now removed the work folder between the two calls: again
            except PermissionError:
                raise DataError(
                    f"the folder of {self.what} {self.shown!r} is not writable; choose another {self.what} or fix "
                    "its permissions."
                ) from None
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise OutputBusyError(
                        f"{self.shown!r} ({self.what}) is being written by another cellsafe run{holder}; wait for it "
                        f"to finish or choose another {self.what}."
                    ) from None
            try:
                same = os.stat(lock).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the holder removed the lock file as we opened it: take the new one
                os.close(fd)
                continue
            self._fd = fd
            started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
            os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()}, since {started}\n".encode())
            self._clear_leftovers()
            return self
        raise DataError(f"could not lock {self.what} {self.shown!r}; try again.")  # pragma: no cover

    def _clear_leftovers(self) -> None:
        for entry in self.work.iterdir():
            if entry.name != "lock":
                _remove(entry)
        # the temporaries of earlier versions, beside the target
        name, stem = self.target.name, self.target.stem
        for entry in self.target.parent.glob(f".{glob_escape(name)}.partial-*"):
            _remove(entry)
        if stem != name:
            for entry in self.target.parent.glob(f".{glob_escape(stem)}.partial-*{glob_escape(self.target.suffix)}"):
                _remove(entry)

    def release(self) -> None:
        """Remove the work folder (with anything left in it) and release the lock."""
        if self._fd is None:
            return
        for entry in list(self.work.iterdir()) if self.work.is_dir() else []:
            if entry.name != "lock":
                _remove(entry)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.work / "lock")
        with contextlib.suppress(OSError):  # another run may already have put its lock there
            os.rmdir(self.work)
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    # ------------------------------------------------------------------ writing
    def temporary(self, folder: bool = False) -> Path:
        """Where the new content of the target is written: ``run-<id>/NAME`` in the work folder."""
        assert self._fd is not None, "acquire() the lock first"
        run = self.work / f"run-{self.run_id}"
        run.mkdir(exist_ok=True)
        tmp = run / self.target.name
        if folder:
            tmp.mkdir(exist_ok=True)
            open_up(tmp, folder=True)
        return tmp

    def put(self, tmp: Path, target: Path) -> None:
        """Rename ``tmp`` onto ``target`` (the target or a file written with it), moving an old folder aside first."""
        if target.is_dir() and not target.is_symlink():
            if any(target.iterdir()):
                old = self.work / f"old-{self.run_id}"
                os.replace(target, old)
                os.replace(tmp, target)
                shutil.rmtree(old, ignore_errors=True)
                return
            target.rmdir()
        os.replace(tmp, target)

    def discard(self, target: Path) -> None:
        """Remove ``target`` (a file or folder of an earlier run), through the work folder."""
        if target.exists() or target.is_symlink():
            old = self.work / f"old-{self.run_id}"
            os.replace(target, old)
            _remove(old)

    def install(self) -> Path:
        """Rename the written temporary onto the target."""
        tmp = self.work / f"run-{self.run_id}" / self.target.name
        if not tmp.exists():
            raise DataError(f"{self.what} {self.shown!r} was not written.")  # a command's own failure
        if tmp.is_dir():
            for f in tmp.rglob("*"):
                if f.is_file():
                    open_up(f)
        else:
            open_up(tmp)
        self.put(tmp, self.target)
        return self.target

    def __enter__(self) -> "OutputLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def glob_escape(text: str) -> str:
    """``text`` with glob's special characters escaped."""
    import glob as _glob

    return _glob.escape(text)


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode(errors="replace").strip()
    except OSError:
        return ""
    return f" ({text})" if text else ""


@contextlib.contextmanager
def atomic_path(target: "str | os.PathLike[str]", what: str = "output") -> Iterator[Path]:
    """Yield a temporary path for ``target`` (locked, in its work folder); rename it onto ``target`` on success.

    A second writer of the same target meanwhile is refused (:class:`OutputBusyError`).  Nothing is
    left behind on failure.
    """
    target = Path(target)
    if not target.parent.is_dir():
        raise DataError(f"the folder of {what} {str(target)!r} does not exist.")
    with OutputLock(target, what) as lock:
        tmp = lock.temporary()
        yield tmp
        lock.install()


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
