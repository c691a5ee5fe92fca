"""Helpers shared by the CLI commands: common options, input loading, output."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..exceptions import DataError, InvalidArgumentError
from ._options import (  # the mechanism options live with the other declared options
    add_distribution_options,
    distribution_from_args,
    mechanism_from_args,
    synthesizer_from_args,
)

if TYPE_CHECKING:  # numpy and the table model are imported by the commands that run, never at start-up
    from ..table import CountTable

__all__ = [
    "EXAMPLES_FORMATTER",
    "add_input_options",
    "add_seed_option",
    "parse_list",
    "parse_counts",
    "parse_float_list",
    "load_table",
    "print_json",
    "seed_from_args",
    "add_distribution_options",
    "add_table_input",
    "table_from_args",
    "distribution_from_args",
    "synthesizer_from_args",
    "mechanism_from_args",
    "add_output_options",
    "outputs_from_args",
    "input_paths",
    "hierarchy_path",
    "resolve_count",
    "note",
    "progress_from_args",
    "add_quiet_option",
    "add_allow_long_option",
]

EXAMPLES_FORMATTER = argparse.RawDescriptionHelpFormatter


def parse_list(text: str, what: str = "--variables") -> list[str]:
    """Split 'a,b,c' into names; reject empty items."""
    items = [s.strip() for s in text.split(",")]
    if not text.strip() or any(not s for s in items):
        raise InvalidArgumentError(f"{what} must be a comma-separated list of names, for example 'a,b,c'. Got {text!r}.")
    return items


def parse_counts(text: str, what: str) -> list[int]:
    """Split '0,1,2' into non-negative integer counts."""
    out = []
    for s in parse_list(text, what):
        try:
            v = int(s)
        except ValueError:
            raise InvalidArgumentError(f"{what} must list integer counts >= 0, for example 0,1,2,3. Got {s!r}.") from None
        if v < 0:
            raise InvalidArgumentError(f"{what} must list counts >= 0. Got {v}.")
        out.append(v)
    return out


def parse_float_list(text: str, what: str) -> list[float]:
    try:
        return [float(s) for s in parse_list(text, what)]
    except ValueError:
        raise InvalidArgumentError(f"{what} must be a comma-separated list of numbers. Got {text!r}.") from None


def add_input_options(p: argparse.ArgumentParser, *, count: bool = True) -> None:
    """--variables (required) and --count."""
    p.add_argument(
        "--variables", required=True, metavar="A,B,C", help="comma-separated variables to cross (columns of INPUT)"
    )
    if count:
        p.add_argument(
            "--count",
            metavar="COL",
            default=None,
            help="frequency column: INPUT is a frequency table (one row per cell) instead of microdata; "
            "none: each row is one record",
        )


def add_table_input(p: argparse.ArgumentParser) -> None:
    """INPUT, --variables, --count and --structural-zeros: the original table of a command."""
    p.add_argument("input", metavar="INPUT", help="CSV or Parquet file: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument(
        "--structural-zeros", metavar="FILE", help="CSV/Parquet listing impossible combinations of the variables"
    )
    p.add_argument(
        "--glob", action="store_true", help="INPUT is a pattern (*, ?, [..]) whose files are read as one (default: a literal file name)"
    )


def table_from_args(args: argparse.Namespace) -> "CountTable":
    """The table named by the options of :func:`add_table_input`."""
    return load_table(args.input, args.variables, args.count, args.structural_zeros, glob=getattr(args, "glob", False))


def note(text: str) -> None:
    """A notice on standard error (never mixed with results on standard output)."""
    print(f"note: {text}", file=sys.stderr)


def resolve_count(
    path: str, variables: list[str], count: str | None, what: str = "INPUT", option: str = "--count"
) -> str | None:
    """The one rule for count columns (:func:`cellsafe.io.count_column_for`) applied to a file, with its notice.

    ``option`` is the option naming this file's count column (``--count``, ``--synthetic-count``); its value
    ``none`` says each row is one record (unless the file has a column called ``none``).
    """
    from pathlib import Path

    from ..io import count_column_for, file_columns

    if count is not None and count in variables:
        raise InvalidArgumentError(
            f"{option} {count!r} is also among --variables; a column is either a variable or the count."
        )
    if not Path(path).is_file():
        return None if count == "none" else count  # a pattern (--glob) or a missing file: reported by the reader
    columns = file_columns(path)
    if count == "none" and "none" not in columns:
        return None  # one record per row, as said
    chosen, notice = count_column_for(columns, variables, count, where=f"{what} {path!r}", option=option)
    if notice:
        note(notice)
    return chosen


def add_quiet_option(p: argparse.ArgumentParser, *, summary: bool = True) -> None:
    """--quiet: no progress bar (and no summary line where the command prints one)."""
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary" if summary else "no progress bar")


def add_allow_long_option(p: argparse.ArgumentParser) -> None:
    """--allow-long: run work estimated beyond ten minutes (refused by default, saying how long and how to shrink it)."""
    p.add_argument(
        "--allow-long", action="store_true",
        help="run even when the work is estimated beyond ten minutes (without it such a run is refused at once, "
        "with the estimate and how to make it smaller; past a minute a note says how long)",
    )


def progress_from_args(args: argparse.Namespace) -> bool:
    """Progress bars: on a terminal unless --quiet; never when standard error is not a terminal."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def add_output_options(p: argparse.ArgumentParser, *, csv: bool = True) -> None:
    """--overwrite and --escape-formulas: how a command's outputs are written."""
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace existing outputs (an output folder's old files are removed first); inputs are never overwritten",
    )
    if csv:
        p.add_argument(
            "--escape-formulas",
            action="store_true",
            help="prefix ' to CSV cells starting with = + - @ tab or CR, so spreadsheets do not run them as formulas",
        )


# Options naming files a command reads (dest names).  Values may be NAME=FILE (--published) or
# VAR=FILE[:LEVELS] (--hierarchy); INPUT with --glob is a pattern, read as its matches.
_INPUT_OPTIONS = (
    "input", "original", "synthetic", "data", "published", "holdout", "structural_zeros", "hierarchy", "domain",
    "ptable", "grid", "forced", "hidden", "release", "budget_log", "earlier",
)


def hierarchy_path(spec: str) -> tuple[str, str, str]:
    """``VAR=FILE[:LEVEL,...]`` split into (VAR, FILE, LEVELS); a FILE whose name holds ':' is taken whole when it exists."""
    from pathlib import Path

    var, eq, rest = spec.partition("=")
    if not eq or not var or not rest:
        raise InvalidArgumentError(f"--hierarchy takes VAR=FILE (e.g. geo=geo.hrc or geo=geo.hrc:region,district). Got {spec!r}.")
    if ":" in rest and not Path(rest).exists():
        path, _, levels = rest.rpartition(":")
        return var, path, levels
    return var, rest, ""


def _paths_of(dest: str, value: Any, glob: bool) -> list[str]:
    from pathlib import Path

    if value is None or value is False or value is True:
        return []
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _paths_of(dest, v, glob)]
    text = str(value)
    if dest == "hierarchy":
        try:
            return [hierarchy_path(text)[1]]
        except InvalidArgumentError:
            return []
    if dest == "input" and glob:
        from ..io import glob_files

        return [str(p) for p in glob_files(text)]
    if "=" in text and not Path(text).exists():  # NAME=FILE
        return [text.partition("=")[2]]
    return [text]


def input_paths(args: argparse.Namespace) -> list[str]:
    """Every existing file or folder the command's options name as something to read (see ``_INPUT_OPTIONS``).

    These are checked against every output (never written, replaced or removed, even with
    --overwrite) and recorded with their sha256 in the manifest.
    """
    from pathlib import Path

    glob = bool(getattr(args, "glob", False))
    out: list[str] = []
    for dest in _INPUT_OPTIONS:
        for p in _paths_of(dest, getattr(args, dest, None), glob):
            if p not in out and Path(p).exists():
                out.append(p)
    return out


def outputs_from_args(
    args: argparse.Namespace, inputs: "list[Any] | tuple[Any, ...]" = (), mechanism: Any = None, seed: Any = "unused",
    *, public: bool = False,
) -> Any:
    """The :class:`cellsafe.io.OutputSet` of a run, with its manifest (inputs, mechanism, seed).

    The inputs are every file the options name (:func:`input_paths`) and ``inputs``; with
    ``public``, the manifest beside the outputs is the publishable one and the whole record goes to
    the custodian's file beside the release (:class:`cellsafe.io.Manifest`).
    """
    from ..io import Manifest, OutputSet

    every = input_paths(args)
    for p in inputs:
        if p is not None and str(p) not in every:
            every.append(str(p))
    manifest = Manifest(args.command, getattr(args, "argv", None) or sys.argv[1:], public=public)
    for path in every:
        manifest.add_input(path)
    if mechanism is not None:
        from ..mechanisms import mechanism_record

        record = mechanism_record(mechanism)  # no spec for a ptable read from a file, a prior: its parameters suffice
        manifest.set_mechanism(mechanism, record["spec"])
        assert manifest.mechanism is not None  # just set
        manifest.mechanism.update({k: v for k, v in record.items() if k in ("spec_note", "ptable_sha256")})
    if seed != "unused":
        manifest.set_seed(seed)
    return OutputSet(
        every,
        overwrite=getattr(args, "overwrite", False),
        manifest=manifest,
        formulas=getattr(args, "escape_formulas", False),
    )


def add_seed_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=None, help="random seed (a non-negative integer) for reproducible output")


def seed_from_args(args: argparse.Namespace) -> Any:
    seed = getattr(args, "seed", None)
    if seed is not None and seed < 0:
        raise InvalidArgumentError(f"--seed must be a non-negative integer. Got {seed}.")
    return seed


def dp_seed_and_ledger(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """A DP command's seed (with a warning: a known seed lets anyone remove the noise), its budget
    ledger (``--budget-log``, or None) and the neighbour relation (``--relation``, else the ledger's,
    else replace-one; one ledger holds one relation)."""
    from ..dp import PrivacyAccountant

    seed = seed_from_args(args)
    if seed is not None:
        print(
            "warning: --seed makes this release reproducible: anyone who knows or guesses the seed can recompute "
            "its noise and remove it. Omit --seed to draw from the operating system's cryptographic generator.",
            file=sys.stderr,
        )
    accountant = PrivacyAccountant.load(args.budget_log) if args.budget_log else None
    relation = args.relation or (accountant.relation if accountant is not None else "replace-one")
    if accountant is not None and relation != accountant.relation:
        raise InvalidArgumentError(
            f"--relation {relation} differs from the ledger's neighbour relation ({accountant.relation}): one ledger "
            "holds one relation."
        )
    return seed, accountant, relation


def load_table(
    path: str, variables: str, count: str | None = None, structural_zeros: str | None = None, *, glob: bool = False,
    what: str = "INPUT",
) -> "CountTable":
    """Read INPUT (CSV/Parquet microdata, or a frequency table with ``count``) into a CountTable.

    The count column follows one rule (:func:`resolve_count`); a variable named ``count`` is
    reported, since the outputs then call the counts otherwise.
    """
    from ..table import CountTable, count_column_name

    names = parse_list(variables)
    records_said = count == "none"  # --count none: one record per row, no question asked
    count = resolve_count(path, names, count, what)
    if glob:
        from ..io import aggregate_file

        frame, col = aggregate_file(path, names, count, glob=True)
        table = CountTable.from_frame(frame, names, count=col)
    else:
        table = CountTable.from_microdata(path, names, count=count)
        if count is None and not records_said and table.nnz > 1 and table.total == table.nnz:  # a frequency table?
            from ..io import count_column_hint

            hint = count_column_hint(path, names, where=what)
            if hint:
                note(hint)
    if "count" in names:
        note(f"a variable is named 'count'; the counts of the outputs are in the column {count_column_name(names)!r}.")
    if structural_zeros:
        from ..io import read_records

        sz = read_records(structural_zeros)
        missing = [n for n in names if n not in sz.columns]
        if missing:
            raise DataError(
                f"structural zeros file {structural_zeros!r} must have a column for every variable; {missing[0]!r} is missing."
            )
        frame = table.to_frame()
        table = CountTable.from_frame(
            frame, list(table.variables), count=frame.columns[-1], structural_zeros=sz[names]
        )
    return table


def print_json(obj: Any) -> None:
    """Print ``obj`` as standard JSON: numpy numbers as numbers, NaN and infinities as null (never a NaN token)."""
    from ..io import dumps_strict

    sys.stdout.write(dumps_strict(obj) + "\n")

