"""Outputs that never clobber: a run's files appear complete, or not at all.

:class:`OutputSet` gathers the outputs of one run (folders and single files).  Every target is
checked before any work: it must not be, or contain, an input (paths resolved, inodes compared);
a non-empty folder or an existing file is refused unless ``overwrite``; the format follows the
extension (``.csv``, ``.parquet``, ``.json``, anything else refused).  Files are written into a
temporary sibling (``.NAME.partial-XXXX``, beside the target, never inside a final folder) and
renamed into place by :meth:`OutputSet.commit` only when the run is complete, with its manifest.
A killed run leaves at most a ``.partial`` sibling, which no one mistakes for a release.

Files honour the process umask (temporary files are created 0600 by the system; they are opened
up as a plain ``open()`` would before they are renamed).  CSV cells that a spreadsheet would run
as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return) can be neutralised
by a leading apostrophe, as OWASP's guidance on CSV injection recommends.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence


from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError
from ._manifest import MANIFEST_NAME, Manifest, manifest_path_for, sha256_file

__all__ = ["OutputSet", "output_format", "neutralise_formulas", "FORMATS", "umask"]

FORMATS = {".csv": "csv", ".parquet": "parquet", ".json": "json"}
"""Output formats by file extension."""

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def output_format(path: "str | os.PathLike[str]", allowed: Iterable[str] = ("csv", "parquet", "json"), what: str = "--output") -> str:
    """The format of an output file from its extension; anything else is refused.

    Examples
    --------
    >>> output_format("release.parquet")
    'parquet'
    """
    allowed = tuple(allowed)
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None or fmt not in allowed:
        names = ", ".join(f".{a}" for a in allowed)
        raise InvalidArgumentError(
            f"{what} {str(path)!r} must end in {names} (the format follows the extension). Got {Path(path).suffix or 'no extension'!r}."
        )
    return fmt


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


def _open_up(path: Path, folder: bool = False) -> None:
    """Give a temporary file or folder the mode a plain open()/mkdir() would (0666/0777 less the umask)."""
    os.chmod(path, (0o777 if folder else 0o666) & ~umask())


class OutputSet:
    """The outputs of one run, written into temporary siblings and renamed into place together.

    Parameters
    ----------
    inputs : sequence of path
        The run's input files: no output may be one of them or a folder holding one.
    overwrite : bool, default False
        Replace an existing output file, or a non-empty output folder (its old files are removed
        first, so no file of an earlier run survives).
    manifest : Manifest, optional
        Written with the outputs: ``manifest.json`` in each folder, ``<file>.manifest.json``
        beside each single file.
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
        self._folders: list[tuple[Path, Path]] = []  # (target, temporary sibling)
        self._files: list[tuple[Path, Path]] = []
        self._committed = False

    # ------------------------------------------------------------------ targets
    def _check_not_input(self, target: Path, what: str) -> None:
        for inp in self.inputs:
            if target.exists() and _same_file(target, inp):
                raise DataError(f"{what} {str(target)!r} is the input {str(inp)!r}; choose another name (inputs are never overwritten).")
            if target.is_dir() and _inside(inp, target):
                raise DataError(
                    f"{what} folder {str(target)!r} holds the input {str(inp)!r}; write the outputs to a new folder."
                )

    def folder(self, target: "str | os.PathLike[str]", what: str = "--output") -> Path:
        """Register an output folder; returns the temporary folder to write its files into."""
        target = Path(target)
        if target.exists() and not target.is_dir():
            raise DataError(f"{what} {str(target)!r} exists and is not a folder; choose another {what}.")
        self._check_not_input(target, what)
        if target.is_dir() and any(target.iterdir()) and not self.overwrite:
            raise DataError(
                f"{what} folder {str(target)!r} is not empty; choose a new folder or add --overwrite "
                "(which removes its files first, so no file of an earlier run survives)."
            )
        parent = self._parent(target, what)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=parent))
        _open_up(tmp, folder=True)
        self._folders.append((target, tmp))
        return tmp

    def file(self, target: "str | os.PathLike[str]", what: str = "--output", formats: Iterable[str] = ("csv", "parquet", "json")) -> Path:
        """Register a single output file; returns the temporary path to write it to (same extension)."""
        target = Path(target)
        if formats:
            output_format(target, formats, what)
        if target.is_dir():
            raise DataError(f"{what} {str(target)!r} is a folder; give a file name.")
        self._check_not_input(target, what)
        if target.exists() and not self.overwrite:
            raise DataError(f"{what} {str(target)!r} exists; choose a new name or add --overwrite.")
        parent = self._parent(target, what)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.partial-", suffix=target.suffix, dir=parent)
        os.close(fd)
        self._files.append((target, Path(tmp)))
        return Path(tmp)

    @staticmethod
    def _parent(target: Path, what: str) -> Path:
        parent = target.parent if str(target.parent) else Path(".")
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"cannot create the folder of {what} {str(target)!r}: {exc.strerror}.") from None
        if not os.access(parent, os.W_OK | os.X_OK):
            raise DataError(f"the folder of {what} {str(target)!r} is not writable; choose another {what}.")
        return parent

    # ------------------------------------------------------------------ writing
    def write_frame(self, df: pd.DataFrame, path: "str | os.PathLike[str]") -> Path:
        """Write ``df`` to ``path`` (inside a registered folder, or a registered file's temporary path)."""
        path = Path(path)
        fmt = output_format(path, ("csv", "parquet", "json"), "output file")
        if fmt == "csv":
            (neutralise_formulas(df) if self.formulas else df).to_csv(path, index=False)
        elif fmt == "parquet":
            df.to_parquet(path, index=False)
        else:
            df.to_json(path, orient="records", indent=2)
        return path

    def write_coded_csv(self, header: Sequence[str], columns: Sequence[Any], path: "str | os.PathLike[str]") -> bool:
        """Write coded text and integer count columns to a CSV ``path`` as :meth:`write_frame` would write
        their frame (:func:`cellsafe.io.write_coded_csv`); False, writing nothing, where it cannot."""
        from ._csv import write_coded_csv

        if output_format(path, ("csv", "parquet", "json"), "output file") != "csv":
            return False
        return write_coded_csv(path, header, columns, escape_formulas=self.formulas)

    # ------------------------------------------------------------------ completion
    def commit(self) -> list[Path]:
        """Rename every output into place with its manifest; returns the final paths."""
        done: list[Path] = []
        for target, tmp in self._folders:
            files = sorted(p for p in tmp.rglob("*") if p.is_file())
            for f in files:
                _open_up(f)
            if self.manifest is not None:
                self.manifest.write(tmp / MANIFEST_NAME, {str(f.relative_to(tmp)): sha256_file(f) for f in files})
                _open_up(tmp / MANIFEST_NAME)
            old = None
            if target.exists():
                if any(target.iterdir()):
                    old = target.with_name(f".{target.name}.old-{os.getpid()}")
                    os.replace(target, old)
                else:
                    target.rmdir()
            os.replace(tmp, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            done.append(target)
        for target, tmp in self._files:
            _open_up(tmp)
            if self.manifest is not None:
                mpath = manifest_path_for(target)
                fd, mtmp = tempfile.mkstemp(prefix=f".{mpath.name}.partial-", dir=target.parent)
                os.close(fd)
                self.manifest.write(mtmp, {target.name: sha256_file(tmp)})
                _open_up(Path(mtmp))
                os.replace(mtmp, mpath)
            os.replace(tmp, target)
            done.append(target)
        self._committed = True
        return done

    def discard(self) -> None:
        """Remove the temporary outputs (a failed run leaves nothing)."""
        for _, tmp in self._folders:
            shutil.rmtree(tmp, ignore_errors=True)
        for _, tmp in self._files:
            if tmp.exists():
                tmp.unlink()

    def __enter__(self) -> "OutputSet":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None and not self._committed:
            self.commit()
        if not self._committed:
            self.discard()
