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
    # the original table
    "_describe",
    # saturated synthesis and its risk-utility assessment
    "_synthesize",
    "_assess",
    "_tune",
    "_frontier",
    "_evaluate",
    "_utility",
    "_synthesize_microdata",
    "_evaluate_microdata",
    # published tables
    "_publish",
    "_audit",
    "_compare",
    # differential privacy
    "_dp_synthesize",
    "_dp_publish",
    "_budget",
    "_demo",
    # from a table back to records
    "_expand",
    # the release report
    "_report",
)

_DESCRIPTION = """\
Statistical disclosure control for categorical data and frequency tables.

Synthesize a contingency table with saturated count models, perturb published tables,
release differentially private counts, and measure risk and utility before and after release.
Run 'cellsafe COMMAND --help' for a command's options and examples.
"""

_EPILOG = """\
examples:
  cellsafe demo
  cellsafe assess pupils.csv --variables area,sex,age --distribution nbi --sigma 1 --alpha 0.02 --json
  cellsafe tune pupils.csv --variables area,sex,age --distribution nbi --solve sigma --target 'tau4(1)=0.4'
  cellsafe synthesize pupils.csv --variables area,sex,age --distribution nbi --sigma 1 -m 5 --seed 1 --output out/
  cellsafe evaluate pupils.csv out/synthetic_*.csv --variables area,sex,age --json
  cellsafe publish people.csv --variables party,age,sex --formula 'party*age + party*sex' --method scr --output pub.csv

Exit status: 0 on success, 2 on bad input (the message says what, where and how to fix it).
Outputs never replace an input; each run writes a manifest (provenance) beside its outputs.
Glossary of the metrics (tau1..tau4, Hellinger, F-beta, DiSCO, TCAP, pMSE ratio...): docs/glossary.md
"""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command's parser: every sub-command, or only the module ``only`` (``'_publish'``)."""
    parser = argparse.ArgumentParser(
        prog="cellsafe",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cellsafe {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is None or name == only:
            importlib.import_module(f"{__package__}.{name}").register(sub)
    return parser


def _named_command(argv: Sequence[str]) -> str | None:
    """The module of the sub-command ``argv`` starts with, if any.

    Only that module (and what it imports) is loaded to run it: a command starts without the
    imports of all the others.
    """
    if argv:
        for name in COMMANDS:
            if argv[0] == name[1:].replace("_", "-"):
                return name
    return None


# Optional dependencies: the module a command imports and the extra that installs it.
EXTRAS = {"matplotlib": "plot", "sklearn": "ml", "polars": "polars", "pyspark": "spark"}


LONG_RUN_SECONDS = 600.0
"""Work estimated beyond this is refused unless --allow-long (commands whose work can grow without bound)."""


def _note(text: str) -> None:
    print(f"note: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_named_command(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    args.argv = argv  # recorded in the manifests of the outputs
    try:
        if hasattr(args, "allow_long"):  # a command with work that can grow: said before, refused past ten minutes
            from .._work import work_limit

            with work_limit(None if args.allow_long else LONG_RUN_SECONDS, announce=_note):
                return int(args.func(args) or 0)
        return int(args.func(args) or 0)
    except CellsafeError as exc:
        print(f"cellsafe {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRAS:
            raise
        print(
            f"cellsafe {args.command}: error: this needs {top}, which is not installed; "
            f"install it with: pip install 'cellsafe[{EXTRAS[top]}]'",
            file=sys.stderr,
        )
        return 2
    except (MemoryError, ValueError) as exc:
        if not isinstance(exc, MemoryError) and "too big" not in str(exc) and "too large" not in str(exc):
            raise
        print(
            f"cellsafe {args.command}: error: the result is too large for this machine's memory; "
            "use smaller parameters or a smaller table.",
            file=sys.stderr,
        )
        return 2
    except (OverflowError, FloatingPointError) as exc:
        print(
            f"cellsafe {args.command}: error: a parameter is too large for the computation ({exc}); "
            "choose smaller values.",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:  # output piped into head, less...: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        import errno

        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG):
            raise
        print(  # the file is a temporary one: outputs appear only complete, and were removed
            f"cellsafe {args.command}: error: {exc.strerror or exc} while writing; no output was left (outputs appear "
            "only complete): free space, or choose another --output.",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
