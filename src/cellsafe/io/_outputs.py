"""Outputs that never clobber: a run's files appear complete, or not at all, and never over an input.

:class:`OutputSet` gathers the outputs of one run (folders and single files), and every command
writes through it.  When a target is registered (:meth:`OutputSet.folder`, :meth:`OutputSet.file`),
before any work:

- it must not be an input, hold one, or lie inside an input folder (paths resolved, inodes
  compared), with or without ``overwrite``: inputs are never written or removed;
- an existing file or a non-empty folder is refused unless ``overwrite`` (which replaces the old
  set whole, so no file of an earlier run survives);
- the format follows the extension (:data:`FORMATS`; anything else refused);
- the target's lock is taken (:class:`~cellsafe.io.OutputLock`): a second run writing the same
  target is refused at once, and what a killed run left is removed.

Files are written into the target's hidden work folder (``P/.X.partial/``, see
:mod:`cellsafe.io._atomic`) and renamed into place by :meth:`OutputSet.commit` when the run is
complete, with the manifest.  Files honour the process umask.  CSV cells that a spreadsheet would
run as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return) can be
neutralised by a leading apostrophe, as OWASP's guidance on CSV injection recommends.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError
from ._atomic import OutputLock, open_up, umask
from ._manifest import MANIFEST_NAME, Manifest, custodian_path_for, manifest_path_for, sha256_file

__all__ = ["OutputSet", "output_format", "neutralise_formulas", "FORMATS", "DATA_FORMATS", "umask", "dumps_strict"]

FORMATS = {
    ".csv": "csv", ".parquet": "parquet", ".json": "json",
    ".html": "html", ".htm": "html", ".png": "png", ".svg": "svg", ".pdf": "pdf",
}
"""Output formats by file extension: tables (csv, parquet, json), documents and figures."""

DATA_FORMATS = ("csv", "parquet", "json")
"""The formats of a table written by a command."""

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def output_format(path: "str | os.PathLike[str]", allowed: Iterable[str] = DATA_FORMATS, what: str = "--output") -> str:
    """The format of an output file from its extension; anything else is refused.

    Examples
    --------
    >>> output_format("release.parquet")
    'parquet'
    >>> output_format("figure.svg", ("png", "svg"), "--plot")
    'svg'
    """
    allowed = tuple(allowed)
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None or fmt not in allowed:
        exts = sorted({e for e, f in FORMATS.items() if f in allowed}, key=lambda e: (allowed.index(FORMATS[e]), e))
        names = exts[0] if len(exts) == 1 else ", ".join(exts[:-1]) + " or " + exts[-1]
        raise InvalidArgumentError(
            f"{what} {str(path)!r} must end in {names} (the format follows the extension). Got {Path(path).suffix or 'no extension'!r}."
        )
    return fmt


def dumps_strict(obj: Any, indent: int | None = 2) -> str:
    """Standard JSON (RFC 8259): NaN and infinities become null, never the ``NaN`` token other parsers refuse.

    Examples
    --------
    >>> dumps_strict({"x": float("nan"), "y": [1.5, float("inf")]}, indent=None)
    '{"x": null, "y": [1.5, null]}'
    """
    from .._results import json_ready

    return json.dumps(json_ready(obj, finite=True), indent=indent, allow_nan=False)


def neutralise_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells starting with = + - @ tab or CR begin with an apostrophe.

    Spreadsheets run such cells as formulas (CSV injection); the apostrophe makes them text.
    Numbers are left alone (a negative number is not a formula).

    Examples
    --------
    >>> neutralise_formulas(pd.DataFrame({"a": ["=HYPERLINK(1)", "x"], "n": [-1, 2]}))["a"].tolist()
    ["'=HYPERLINK(1)", 'x']
    """
    out = df.copy()
    for col in out.columns:
        s = out[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            s = s.astype(object)
        if not (pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)):
            continue
        text = s.astype(object)
        risky = text.map(lambda v: isinstance(v, str) and v.startswith(_FORMULA_START))
        if risky.any():
            out[col] = text.where(~risky, "'" + text.astype(str))
    renamed = {c: "'" + c for c in out.columns if isinstance(c, str) and c.startswith(_FORMULA_START)}
    return out.rename(columns=renamed) if renamed else out


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


class OutputSet:
    """The outputs of one run, written in their work folders and renamed into place together.

    Parameters
    ----------
    inputs : sequence of path
        Every file (or folder) the run reads: no output may be one, hold one, or lie inside an
        input folder.  Paths that do not exist are ignored (their readers report them).
    overwrite : bool, default False
        Replace an existing output file, or a non-empty output folder (its old files are removed,
        so no file of an earlier run survives).  Inputs are never replaced.
    manifest : Manifest, optional
        Written with the outputs: ``manifest.json`` in each folder, ``<file>.manifest.json`` beside
        each single file.  A public manifest (``Manifest(..., public=True)``) is written there in
        its publishable form, and the whole record goes to the custodian's file
        ``<output>.custodian.json`` beside the output, never inside a release folder.
    formulas : bool, default False
        Neutralise spreadsheet formulas in CSV cells (:func:`neutralise_formulas`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with OutputSet([]) as out:
    ...     folder = out.folder(root / "release")
    ...     _ = out.write_frame(pd.DataFrame({"a": ["x"], "count": [1]}), folder / "t.csv")
    >>> sorted(p.name for p in (root / "release").iterdir())
    ['t.csv']
    >>> sorted(p.name for p in root.iterdir())  # nothing temporary is left
    ['release']
    """

    def __init__(
        self,
        inputs: Sequence["str | os.PathLike[str] | None"],
        *,
        overwrite: bool = False,
        manifest: Manifest | None = None,
        formulas: bool = False,
    ) -> None:
        self.inputs = [Path(p) for p in inputs if p is not None and Path(p).exists()]
        self.overwrite = bool(overwrite)
        self.manifest = manifest
        self.formulas = bool(formulas)
        self._folders: list[tuple[Path, Path, OutputLock]] = []  # (target, temporary folder, lock)
        self._files: list[tuple[Path, Path, OutputLock]] = []
        self._removed: list[tuple[Path, OutputLock]] = []
        self._committed = False

    # ------------------------------------------------------------------ targets
    def _check_not_input(self, target: Path, what: str) -> None:
        """``target`` and what is written beside it are none of the inputs, hold none and lie in no input folder."""
        for inp in self.inputs:
            if target.exists() and _same_file(target, inp):
                raise DataError(f"{what} {str(target)!r} is the input {str(inp)!r}; choose another name (inputs are never overwritten).")
            if target.is_dir() and _inside(inp, target):
                raise DataError(
                    f"{what} folder {str(target)!r} holds the input {str(inp)!r}; write the outputs to a new folder "
                    "(inputs are never removed, even with --overwrite)."
                )
            if inp.is_dir() and _inside(target, inp):
                raise DataError(
                    f"{what} {str(target)!r} is inside the input folder {str(inp)!r}; write the outputs elsewhere "
                    "(an input folder is read as it is, never written into)."
                )

    def _beside(self, target: Path, folder: bool) -> list[Path]:
        """The files written beside ``target`` with it (its manifest, the custodian's record)."""
        out = []
        if self.manifest is not None:
            if not folder:
                out.append(manifest_path_for(target))
            if self.manifest.public:
                out.append(custodian_path_for(target))
        return out

    def _register(self, target: Path, what: str, folder: bool) -> OutputLock:
        for path in (target, *self._beside(target, folder)):
            self._check_not_input(path, what)
        for done, _, _ in self._folders + self._files:
            if _same_file(done, target) or done.resolve() == target.resolve():
                raise InvalidArgumentError(f"{what} {str(target)!r} is given twice as an output.")
        self._parent(target, what)
        lock = OutputLock(target, what).acquire()  # refused at once if another run writes it
        try:
            if folder:
                if target.exists() and not target.is_dir():
                    raise DataError(f"{what} {str(target)!r} exists and is not a folder; choose another {what}.")
                if target.is_dir() and any(target.iterdir()) and not self.overwrite:
                    raise DataError(
                        f"{what} folder {str(target)!r} is not empty; choose a new folder or add --overwrite "
                        "(which removes its files first, so no file of an earlier run survives)."
                    )
            else:
                if target.is_dir() and not self.overwrite:
                    raise DataError(f"{what} {str(target)!r} is a folder; give a file name.")
                for path in (target, *self._beside(target, folder)):
                    if (path.exists() or path.is_symlink()) and not self.overwrite:
                        raise DataError(f"{what} {str(path)!r} exists; choose a new name or add --overwrite.")
        except BaseException:
            lock.release()
            raise
        return lock

    def folder(self, target: "str | os.PathLike[str]", what: str = "--output") -> Path:
        """Register an output folder (checked and locked now); returns the temporary folder to write its files into."""
        target = Path(target)
        lock = self._register(target, what, folder=True)
        tmp = lock.temporary(folder=True)
        self._folders.append((target, tmp, lock))
        return tmp

    def file(self, target: "str | os.PathLike[str]", what: str = "--output", formats: Iterable[str] = DATA_FORMATS) -> Path:
        """Register a single output file (checked and locked now); returns the temporary path to write it to.

        The temporary path has the target's name (and extension) in the target's work folder.
        ``formats`` lists the formats allowed by extension (:data:`FORMATS`); empty allows any name.
        """
        target = Path(target)
        formats = tuple(formats)
        if formats:
            output_format(target, formats, what)
        lock = self._register(target, what, folder=False)
        tmp = lock.temporary()
        self._files.append((target, tmp, lock))
        return tmp

    def remove(self, target: "str | os.PathLike[str]", what: str = "--output") -> None:
        """Register a file of an earlier run that this run's set replaces: removed at commit (needs ``overwrite``).

        For a set of files beside others (FILE_1.csv, FILE_2.csv...): implicates of an earlier, larger
        set would otherwise stay beside a manifest that no longer lists them.
        """
        target = Path(target)
        self._check_not_input(target, what)
        lock = OutputLock(target, what).acquire()
        if not self.overwrite:
            lock.release()
            raise DataError(
                f"{str(target)!r} belongs to an earlier set of outputs this run replaces; add --overwrite (which removes "
                "it) or choose another --output."
            )
        self._removed.append((target, lock))

    @staticmethod
    def _parent(target: Path, what: str) -> Path:
        parent = target.parent if str(target.parent) else Path(".")
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"cannot create the folder of {what} {str(target)!r}: {exc.strerror}.") from None
        if not parent.is_dir():
            raise DataError(f"the folder of {what} {str(target)!r} is not a folder.")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise DataError(f"the folder of {what} {str(target)!r} is not writable; choose another {what}.")
        return parent

    # ------------------------------------------------------------------ writing
    def write_frame(self, df: pd.DataFrame, path: "str | os.PathLike[str]") -> Path:
        """Write ``df`` to ``path`` (inside a registered folder, or a registered file's temporary path)."""
        path = Path(path)
        fmt = output_format(path, DATA_FORMATS, "output file")
        if fmt == "csv":
            (neutralise_formulas(df) if self.formulas else df).to_csv(path, index=False)
        elif fmt == "parquet":
            df.to_parquet(path, index=False)
        else:
            path.write_text(dumps_strict(json.loads(df.to_json(orient="records"))) + "\n")
        return path

    def write_coded_csv(self, header: Sequence[str], columns: Sequence[Any], path: "str | os.PathLike[str]") -> bool:
        """Write coded text and integer count columns to a CSV ``path`` as :meth:`write_frame` would write
        their frame (:func:`cellsafe.io.write_coded_csv`); False, writing nothing, where it cannot."""
        from ._csv import write_coded_csv

        if output_format(path, DATA_FORMATS, "output file") != "csv":
            return False
        return write_coded_csv(path, header, columns, escape_formulas=self.formulas)

    def write_json(self, obj: Any, path: "str | os.PathLike[str]") -> Path:
        """Write ``obj`` as standard JSON (:func:`dumps_strict`: no NaN or Infinity tokens)."""
        path = Path(path)
        path.write_text(dumps_strict(obj) + "\n", encoding="utf-8")
        return path

    def write_text(self, text: str, path: "str | os.PathLike[str]") -> Path:
        """Write ``text`` (UTF-8) to ``path``."""
        path = Path(path)
        path.write_text(text, encoding="utf-8")
        return path

    # ------------------------------------------------------------------ completion
    def _write_manifests(self, target: Path, tmp: Path, lock: OutputLock, outputs: dict[str, str], folder: bool) -> list[tuple[Path, Path]]:
        """Write the manifest(s) of ``target``; returns (temporary, final) pairs still to rename (single files)."""
        assert self.manifest is not None
        run = tmp.parent
        pending = []
        if folder:
            self.manifest.write(tmp / MANIFEST_NAME, outputs)
            open_up(tmp / MANIFEST_NAME)
        else:
            mtmp = run / manifest_path_for(target).name
            self.manifest.write(mtmp, outputs)
            pending.append((mtmp, manifest_path_for(target)))
        if self.manifest.public:
            ctmp = run / custodian_path_for(target).name
            self.manifest.write_custodian(ctmp, outputs)
            pending.append((ctmp, custodian_path_for(target)))
        for p, _ in pending:
            open_up(p)
        return pending

    def commit(self) -> list[Path]:
        """Rename every output into place with its manifest; returns the final paths."""
        done: list[Path] = []
        try:
            for target, tmp, lock in self._folders:
                files = sorted(p for p in tmp.rglob("*") if p.is_file())
                for f in files:
                    open_up(f)
                pending = []
                if self.manifest is not None:
                    outputs = {str(f.relative_to(tmp)): sha256_file(f) for f in files}
                    pending = self._write_manifests(target, tmp, lock, outputs, folder=True)
                for p, final in pending:
                    lock.put(p, final)
                lock.put(tmp, target)
                done.append(target)
            for target, tmp, lock in self._files:
                if not tmp.exists():
                    raise DataError(f"the output {str(target)!r} was not written.")
                if tmp.is_file():
                    open_up(tmp)
                if self.manifest is not None:
                    digest = sha256_file(tmp) if tmp.is_file() else _folder_digest(tmp)
                    for p, final in self._write_manifests(target, tmp, lock, {target.name: digest}, folder=False):
                        lock.put(p, final)
                lock.put(tmp, target)
                done.append(target)
            for target, lock in self._removed:
                lock.discard(target)
            self._committed = True
        finally:
            self._release()
        return done

    def discard(self) -> None:
        """Remove the temporary outputs and release the locks (a failed run leaves nothing)."""
        self._release()

    def _release(self) -> None:
        for lock in [lock for _, _, lock in self._folders + self._files] + [lock for _, lock in self._removed]:
            lock.release()

    def __enter__(self) -> "OutputSet":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None and not self._committed:
            self.commit()
        if not self._committed:
            self.discard()


def _folder_digest(folder: Path) -> str:
    """One sha256 over a folder's files (a dataset written as a folder): names and contents, in name order."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(folder)).encode() + b"\0" + sha256_file(f).encode())
    return h.hexdigest()
