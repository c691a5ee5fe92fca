"""tau-Argus hierarchy files (``.hrc``): one code per line, one leading marker (``@``) per level of depth.

Only the text format lives here (codes and depths); :class:`cellsafe.table.Hierarchy` turns them into
aggregates.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ..exceptions import DataError, InvalidArgumentError
from ._atomic import atomic_path

__all__ = ["read_hrc", "write_hrc"]


def read_hrc(path: "str | os.PathLike[str]", *, marker: str = "@") -> tuple[list[str], list[int]]:
    """Codes and depths (0 for the top level) of a tau-Argus ``.hrc`` file, in file order.

    Blank lines are skipped; a line's depth is its number of leading ``marker`` characters.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "geo.hrc"
    >>> _ = p.write_text("01\\n@0101\\n@0102\\n02\\n@0201\\n")
    >>> read_hrc(p)
    (['01', '0101', '0102', '02', '0201'], [0, 1, 1, 0, 1])
    """
    if not isinstance(marker, str) or len(marker) != 1:
        raise InvalidArgumentError(f"The 'marker' parameter of read_hrc must be one character. Got {marker!r}.")
    p = Path(path)
    if not p.is_file():
        raise DataError(f"hierarchy file {str(p)!r} does not exist.")
    codes: list[str] = []
    depths: list[int] = []
    data = p.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # a Windows export (Latin-1, CP1252): its codes would not match the data's
        bad_line = data[: exc.start].count(b"\n") + 1
        raise DataError(
            f"{str(p)!r}, line {bad_line}: the hierarchy file is not UTF-8 text (byte 0x{data[exc.start]:02x}); re-encode "
            f"it, for example iconv -f latin1 -t utf-8 {p.name} > utf8-{p.name}"
        ) from None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        code = line.lstrip(marker)
        depth = len(line) - len(code)
        code = code.strip()
        if not code:
            raise DataError(f"{str(p)!r} line {lineno} has markers but no code.")
        if depths and depth > depths[-1] + 1 or not depths and depth > 0:
            raise DataError(
                f"{str(p)!r} line {lineno}: code {code!r} is {depth} level(s) deep, more than one below the line before; "
                "each level adds one leading marker."
            )
        codes.append(code)
        depths.append(depth)
    if not codes:
        raise DataError(f"hierarchy file {str(p)!r} has no codes.")
    return codes, depths


def write_hrc(path: "str | os.PathLike[str]", codes: Sequence[str], depths: Sequence[int], *, marker: str = "@") -> Path:
    """Write codes with their depths as a tau-Argus ``.hrc`` file (atomically); returns the path."""
    if len(codes) != len(depths):
        raise InvalidArgumentError("write_hrc needs one depth per code.")
    text = "".join(f"{marker * int(d)}{c}\n" for c, d in zip(codes, depths))
    target = Path(path)
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target
