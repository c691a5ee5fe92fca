"""The ``cellsafe`` command: a thin shell over the public API.

Each sub-command lives in its own module ``cli/_<name>.py`` with ``register(subparsers)``;
:data:`COMMANDS` lists them in the order ``--help`` shows them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from .. import __version__
from ..exceptions import CellsafeError

COMMANDS: tuple[str, ...] = (
    "_synthesize",
    "_demo",
)

_DESCRIPTION = """\
Statistical disclosure control for categorical data and frequency tables.

Synthesize a contingency table with saturated count models, perturb published tables,
release differentially private counts, and measure risk and utility before and after release.
Run 'cellsafe COMMAND --help' for a command's options and examples.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cellsafe", description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"cellsafe {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__package__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CellsafeError as exc:
        print(f"cellsafe {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
