"""``cellsafe synthesize-microdata``: sequential synthesis of records (CART, regression, sampling)."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from ..exceptions import CellsafeWarning, DataError, InvalidArgumentError
from ._common import (
    add_allow_long_option,
    EXAMPLES_FORMATTER,
    add_output_options,
    add_seed_option,
    outputs_from_args,
    parse_list,
    progress_from_args,
    seed_from_args,
)

_EXAMPLES = """\
examples:
  # fully synthetic: the first variable sampled, every later one by CART, five implicates
  cellsafe synthesize-microdata adult.csv --method cart -m 5 --seed 1 --output synthetic/

  # 002's penguins: sex sampled, bill and flipper by linear regression with normal draws
  cellsafe synthesize-microdata penguins.csv --visit-sequence sex,bill_length_mm,flipper_length_mm \\
      --method-for sex=sample --method-for bill_length_mm=normal --method-for flipper_length_mm=normal \\
      --numeric bill_length_mm,flipper_length_mm --seed 20220301 --output out/penguins.parquet

  # partial synthesis: age and sex released as they are, income synthesized from them
  cellsafe synthesize-microdata survey.parquet --keep age,sex --method-for income=normal --output partial/

  # penguins with R's NA, a rule every record obeys, one island at a time
  cellsafe synthesize-microdata penguins.csv --missing-values sex=NA --rules rules.txt --strata island \
      -m 5 --seed 1 --output synthetic/
  # rules.txt, one rule a line:   sex: body_mass_g == NA -> NA

  # then measure utility and risk of what was written
  cellsafe evaluate-microdata adult.csv synthetic/synthetic_*.csv --keys age,sex,race --target income

--output DIR writes DIR/synthetic_1.csv ... (--format parquet for Parquet); --output FILE.csv or
FILE.parquet writes FILE_1.csv ...  A manifest (manifest.json, or FILE_manifest.json) records the
cellsafe version, the command, the input's sha256, the method and predictors of each column, the
visit sequence, the seed, the notices, the rules and how often the input breaks them, and every
output file with its sha256.

Types: CSV columns are read as text as written; a column whose every value is a number and that
has at least 10 distinct values is read as numbers, with a notice naming it (--numeric and
--categorical decide); Parquet keeps its types.  Missing values: an empty field is missing, and in
numeric columns so are NA and NaN; declare other markers with --missing-values (NA,-9 for every
column, or COL=NA,-9 for one; repeatable).  A number with missing values is synthesized as
synthpop does: whether it is missing, then its value where present.

Rules (--rules FILE): one a line, COLUMN: CONDITION -> CONSEQUENCE, e.g.
  marital: age < 16 -> 'single'          hours: employed == 'no' -> 0
  income: age < 15 -> NA                 smoke: age < 18 -> smoke in ('never', 'occasional')
with and, or, not, ==, !=, <, <=, >, >=, in (...), + - * /, NA, quoted categories; or a .json file
{"rules": {...}, "allow": [{"sex": "M", "pregnant": "yes"}]}.  Category pairs no input record has
are never drawn together unless allowed (--no-structural-zeros turns this off).

Strata (--strata VAR): each category of VAR is synthesized from its own records and keeps its
size; strata smaller than --min-stratum (default 10 + 10 x the variables) are synthesized
together with VAR kept as their first variable.  --jobs N synthesizes N strata at once.
Methods: sample, normal, pmm, normrank, logistic, multinomial, polr, cart, keep (course 002,
chapters 2 and 4; synthpop).  polr orders categories by value, alphabetically, or by --levels.
"""

_TEMPLATE_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def register(sub: argparse._SubParsersAction) -> None:
    from .._catalog import SYNTHESIS_METHODS as METHODS

    p = sub.add_parser(
        "synthesize-microdata",
        help="synthesize records one variable after another (CART, regression, pmm, polr; missing values, rules, strata)",
        description="Sequential synthesis of microdata: each variable of the visit sequence is modelled on the "
        "confidential values of the variables before it and drawn from their synthetic values.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("data", metavar="DATA", help="CSV or Parquet file of the confidential records")
    p.add_argument("--method", choices=METHODS, default=None, help="method of every variable (default: sample the first, cart after)")
    p.add_argument("--method-for", action="append", default=[], metavar="COL=METHOD", help="method of one variable (repeatable)")
    p.add_argument("--keep", metavar="A,B", default=None, help="variables released unchanged (partial synthesis)")
    p.add_argument("--visit-sequence", metavar="A,B,C", default=None, help="order of synthesis (default: the file's columns)")
    p.add_argument("--numeric", metavar="A,B", default=None, help="text columns to read as numbers")
    p.add_argument("--categorical", metavar="A,B", default=None, help="numeric columns to treat as categories")
    p.add_argument(
        "--missing-values", action="append", default=[], metavar="[COL=]A,B",
        help="markers of a missing value, for every column or COL's (repeatable; blanks are always missing, NA in numbers)",
    )
    p.add_argument("--rules", metavar="FILE", default=None, help="rules every synthetic record obeys (see below)")
    p.add_argument("--no-structural-zeros", action="store_true", help="let category pairs the input lacks be drawn together")
    p.add_argument(
        "--proper", action="store_true", help="refit the models of every implicate on a bootstrap sample (synthpop's proper = TRUE)"
    )
    p.add_argument("--strata", metavar="VAR", default=None, help="synthesize each category of VAR from its own records")
    p.add_argument("--min-stratum", type=int, default=None, metavar="N", help="fewest records of a stratum synthesized alone")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="strata synthesized at once (default 1; -1 every core)")
    p.add_argument(
        "--levels", action="append", default=[], metavar="COL=A,B,C", help="order of an ordered category for polr (repeatable)"
    )
    p.add_argument("--min-leaf", type=int, default=5, metavar="K", help="fewest records in a CART leaf (default 5)")
    p.add_argument("--smoothing", choices=("density",), default=None, help="smooth numbers drawn by CART")
    p.add_argument("--unbounded", action="store_true", help="let normal draws leave the observed range")
    p.add_argument("-n", type=int, default=None, dest="n", help="records per implicate (default: as many as DATA)")
    p.add_argument("-m", type=int, default=1, dest="m", help="number of implicates (default 1)")
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="DIR|FILE", help="folder, or FILE.csv / FILE.parquet as a name template")
    p.add_argument("--format", choices=("csv", "parquet"), default=None, help="file format in an output folder (default csv)")
    add_output_options(p)
    add_allow_long_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(func=run)


def _methods(args: argparse.Namespace) -> tuple[Any, list[str]]:
    from ..synthesis import METHODS

    per_column: dict[Any, str] = {}
    for item in args.method_for:
        col, sep, meth = item.partition("=")
        if not sep or not col.strip() or meth.strip() not in METHODS:
            raise InvalidArgumentError(
                f"--method-for must be COLUMN=METHOD with METHOD one of {', '.join(METHODS)}. Got {item!r}."
            )
        per_column[col.strip()] = meth.strip()
    keep = parse_list(args.keep, "--keep") if args.keep else []
    for col in keep:
        if per_column.get(col, "keep") != "keep":
            raise InvalidArgumentError(f"column {col!r} is in --keep and has --method-for {per_column[col]}; choose one.")
        per_column[col] = "keep"
    if args.method is None:
        return (per_column or None), keep
    if not per_column:
        return args.method, keep
    return {None: args.method, **per_column}, keep  # None: every other column, resolved once the columns are known


def missing_values_from_args(items: list[str], columns: list[str]) -> dict[str, list[str]] | None:
    """``{column: markers}`` from repeated ``--missing-values [COL=]A,B`` (no COL=: every column)."""
    if not items:
        return None
    out: dict[str, list[str]] = {}
    for item in items:
        col, sep, markers = item.partition("=")
        if sep and col.strip() in columns:
            targets, values = [col.strip()], markers
        elif sep and col.strip() and "," not in col:
            raise DataError(f"--missing-values {item!r}: {col.strip()!r} is not a column; the columns are {columns}.")
        else:
            targets, values = columns, item
        for c in targets:
            out.setdefault(c, []).extend(v.strip() for v in values.split(","))
    return out


def _levels(items: list[str]) -> dict[str, list[str]]:
    out = {}
    for item in items:
        col, sep, labels = item.partition("=")
        if not sep or not col.strip() or not labels.strip():
            raise InvalidArgumentError(f"--levels must be COLUMN=A,B,C (its categories in order). Got {item!r}.")
        out[col.strip()] = [v.strip() for v in labels.split(",")]
    return out


def _outputs(args: argparse.Namespace) -> tuple[Path, str, str, Path]:
    """Folder, file stem, format, and manifest path."""
    out = Path(args.output)
    fmt = _TEMPLATE_SUFFIXES.get(out.suffix.lower())
    if fmt is not None:
        if args.format is not None and args.format != fmt:
            raise InvalidArgumentError(f"--format {args.format} disagrees with the output name {str(out)!r}; drop --format.")
        return out.parent, out.stem, fmt, out.parent / f"{out.stem}_manifest.json"
    if out.exists() and not out.is_dir():
        raise DataError(f"output {str(out)!r} exists and is not a folder; give a folder or a FILE.csv / FILE.parquet name.")
    return out, "synthetic", args.format or "csv", out / "manifest.json"


def _command_line(args: argparse.Namespace) -> str:
    words = ["cellsafe", "synthesize-microdata", args.data]
    for flag, value in (
        ("--method", args.method),
        ("--keep", args.keep),
        ("--visit-sequence", args.visit_sequence),
        ("--numeric", args.numeric),
        ("--categorical", args.categorical),
        ("--smoothing", args.smoothing),
        ("--rules", args.rules),
        ("--strata", args.strata),
        ("--min-stratum", args.min_stratum),
        ("-n", args.n),
        ("--seed", args.seed),
        ("--format", args.format),
    ):
        if value is not None:
            words += [flag, str(value)]
    for item in args.method_for:
        words += ["--method-for", item]
    for item in args.missing_values:
        words += ["--missing-values", item]
    for item in args.levels:
        words += ["--levels", item]
    if args.no_structural_zeros:
        words.append("--no-structural-zeros")
    if args.proper:
        words.append("--proper")
    if args.jobs != 1:
        words += ["--jobs", str(args.jobs)]
    if args.min_leaf != 5:
        words += ["--min-leaf", str(args.min_leaf)]
    if args.unbounded:
        words.append("--unbounded")
    words += ["-m", str(args.m), "--output", args.output]
    return shlex.join(words)


def run(args: argparse.Namespace) -> int:
    # everything that can be checked before reading the data
    if args.m < 1:
        raise InvalidArgumentError(f"-m must be a positive integer. Got {args.m}.")
    if args.n is not None and args.n < 1:
        raise InvalidArgumentError(f"-n must be a positive integer. Got {args.n}.")
    if args.min_leaf < 1:
        raise InvalidArgumentError(f"--min-leaf must be a positive integer. Got {args.min_leaf}.")
    if args.min_stratum is not None and args.min_stratum < 1:
        raise InvalidArgumentError(f"--min-stratum must be a positive integer. Got {args.min_stratum}.")
    if args.jobs == 0 or args.jobs < -1:
        raise InvalidArgumentError(f"--jobs must be a positive integer or -1. Got {args.jobs}.")
    if args.min_stratum is not None and args.strata is None:
        raise InvalidArgumentError("--min-stratum needs --strata.")
    from ..synthesis import read_rules

    args.levels_by_column = _levels(args.levels)
    args.rules_and_allow = read_rules(args.rules) if args.rules else (None, None)
    seed = seed_from_args(args)
    methods, keep = _methods(args)
    folder, stem, fmt, manifest_path = _outputs(args)
    visit = parse_list(args.visit_sequence, "--visit-sequence") if args.visit_sequence else None
    numeric = parse_list(args.numeric, "--numeric") if args.numeric else None
    categorical = parse_list(args.categorical, "--categorical") if args.categorical else None
    data = Path(args.data)
    if not data.is_file():
        raise DataError(f"input file {args.data!r} does not exist (or is not a file).")
    # the outputs are checked (never DATA, never over an earlier set without --overwrite) and locked before any work
    with outputs_from_args(args) as out:
        written = _register(args, out, folder, stem, fmt, manifest_path)
        return _synthesize(args, out, written, seed, methods, keep, visit, numeric, categorical, data)


def _register(args: argparse.Namespace, out: Any, folder: Path, stem: str, fmt: str, manifest_path: Path) -> tuple[list[Path], Path]:
    """The temporary paths of the implicates and of the manifest.

    In a folder, the folder is the output (replaced whole with --overwrite).  With a name template,
    each FILE_i and FILE_manifest.json is an output, and implicates FILE_k of an earlier, larger set
    are removed with --overwrite (refused without it): no file beside the manifest is left unlisted.
    """
    out.manifest = None  # this command writes its own manifest (methods, predictors, visit sequence)
    if not _is_template(args):
        tmp = out.folder(folder)
        return [tmp / f"{stem}_{i}.{fmt}" for i in range(1, args.m + 1)], tmp / "manifest.json"
    paths = [out.file(folder / f"{stem}_{i}.{fmt}", formats=(fmt,)) for i in range(1, args.m + 1)]
    earlier = re.compile(re.escape(stem) + r"_(\d+)\." + re.escape(fmt) + "$")
    for old in sorted(folder.glob(f"{stem}_*.{fmt}")) if folder.is_dir() else []:
        match = earlier.match(old.name)
        if match and int(match.group(1)) > args.m:
            out.remove(old)
    return paths, out.file(manifest_path, formats=("json",))


def _as_text(frame: Any, columns: list[Any]) -> list[str]:
    """The records as sorted lines of text, numbers by value (1000 and 1000.0 alike), for a comparison as multisets."""
    import pandas as pd

    parts = []
    for c in columns:
        col = frame[c]
        num = pd.to_numeric(col, errors="coerce").tolist()
        missing = col.isna().tolist()
        parts.append(["" if gone else f"{n:.15g}" if not pd.isna(n) else str(v)  # missing, number, text
                      for v, n, gone in zip(col.astype(object).tolist(), num, missing)])
    return sorted(map("\x1f".join, zip(*parts)))


def _warn_if_confidential(implicates: list[Any], records: Any, methods: dict[str, str]) -> None:
    """A warning when an implicate is the confidential records themselves (in some order): nothing was synthesized.

    One record gives itself back whatever the methods; --keep on every column releases the file as it is.
    """
    columns = list(records.columns)
    kept = all(m == "keep" for m in methods.values())
    why = ("every column is kept (--keep)" if kept else
           "the file holds one record, and every draw gives it back" if len(records) == 1 else
           "every value drawn repeats its own record")
    reference = None
    for i, implicate in enumerate(implicates, start=1):
        if len(implicate) != len(records) or set(implicate.columns) != set(columns):
            continue
        reference = reference if reference is not None else _as_text(records, columns)
        if _as_text(implicate, columns) == reference:
            print(
                f"cellsafe synthesize-microdata: warning: implicate {i} is the confidential data itself: the same "
                f"{len(records):,} record(s), row for row ({why}). It is not synthetic; do not release it as such.",
                file=sys.stderr,
            )


def _is_template(args: argparse.Namespace) -> bool:
    return Path(args.output).suffix.lower() in _TEMPLATE_SUFFIXES


def _synthesize(args: argparse.Namespace, out: Any, written: tuple[list[Path], Path], seed: Any, methods: Any,
                keep: list[str], visit: Any, numeric: Any, categorical: Any, data: Path) -> int:
    from .. import __version__
    from ..io import read_records, sha256_file
    from ..synthesis import SequentialSynthesizer

    progress = progress_from_args(args)
    t0 = time.perf_counter()
    frame = records = read_records(data)
    if isinstance(methods, dict) and None in methods:
        default = methods.pop(None)
        methods = {name: methods.get(name, default) for name in (visit or list(frame.columns))}
    rules, allow = args.rules_and_allow
    synth = SequentialSynthesizer(
        methods=methods, visit_sequence=visit, min_leaf=args.min_leaf, smoothing=args.smoothing, bounded=not args.unbounded,
        rules=rules, structural_zeros=not args.no_structural_zeros, allow=allow or None, strata=args.strata,
        min_stratum=args.min_stratum, n_jobs=args.jobs, proper=args.proper,
    )
    missing = missing_values_from_args(args.missing_values, [str(c) for c in frame.columns])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CellsafeWarning)
        synth.fit(
            frame, numeric=numeric, categorical=categorical, missing_values=missing, levels=args.levels_by_column, progress=progress
        )
        implicates = synth.sample(n=args.n, m=args.m, rng=seed, progress=progress)
    notices = [str(w.message) for w in caught if issubclass(w.category, CellsafeWarning)]
    for text in notices:
        print(f"cellsafe synthesize-microdata: notice: {text}", file=sys.stderr)
    _warn_if_confidential(implicates, records, synth.methods_)

    # written into the temporary places; the files appear only when all are complete
    paths, manifest_tmp = written
    outputs = []
    for frame, tmp in zip(implicates, paths):
        out.write_frame(frame, tmp)
        outputs.append({"file": tmp.name, "records": len(frame), "sha256": sha256_file(tmp)})
    manifest = {
        "cellsafe_version": __version__,
        "command": _command_line(args),
        "input": {"file": str(data), "sha256": sha256_file(data), "records": synth.n_records_},
        "visit_sequence": synth.visit_sequence_,
        "methods": synth.methods_,
        "predictors": synth.predictors_,
        "columns": {name: synth.columns_[name].kind for name in synth.visit_sequence_},
        "kept": keep,
        "min_leaf": args.min_leaf,
        "smoothing": args.smoothing,
        "bounded": not args.unbounded,
        "missing_values": missing,
        "rules": synth.rule_checks_,
        "structural_zeros": not args.no_structural_zeros,
        "proper": args.proper,
        "strata": None if args.strata is None else {
            "variable": args.strata,
            "sizes": {str(k): v for k, v in synth.strata_.items()},
            "pooled": [str(v) for v in synth.pooled_strata_],
        },
        "notices": notices,
        "seed": seed,
        "m": args.m,
        "outputs": outputs,
    }
    out.write_json(manifest, manifest_tmp)
    out.commit()
    if not args.quiet:
        methods_used = ", ".join(f"{k}={v}" for k, v in synth.methods_.items())
        where = Path(args.output).parent if _is_template(args) else Path(args.output)
        print(
            f"synthesized {args.m} implicate(s) of {len(implicates[0]):,} records ({methods_used}); "
            f"wrote {len(paths)} file(s) and {manifest_tmp.name} to {where} in {time.perf_counter() - t0:.2f} s"
        )
    return 0
