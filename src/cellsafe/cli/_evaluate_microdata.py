"""``cellsafe evaluate-microdata``: general utility and disclosure risk of synthetic records."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._common import (
    EXAMPLES_FORMATTER,
    add_output_options,
    add_seed_option,
    outputs_from_args,
    parse_list,
    print_json,
    progress_from_args,
    seed_from_args,
)
from ._options import Renamed

_EXAMPLES = """\
examples:
  # one synthetic file, attribute disclosure of income from four keys, JSON out
  cellsafe evaluate-microdata adult.csv synthetic.csv --keys age,sex,race,occupation \\
      --sensitive 'income>50K' --json

  # three implicates, a holdout for distance and membership tests, figures in plots/
  cellsafe evaluate-microdata train.parquet syn_1.parquet syn_2.parquet syn_3.parquet \\
      --holdout holdout.parquet --keys age,sex --sensitive income --plot plots/ --seed 7

  # specific utility of a logistic regression (CI overlap and SSO)
  cellsafe evaluate-microdata adult.csv synthetic.csv --model 'income ~ age + sex' --family binomial

Utility: pMSE, pMSE ratio, SPECKS and AUC of a propensity model (logistic regression with
pairwise interactions, or --propensity cart), table statistics over all one-, two- and three-way
tables, univariate and correlation comparisons.  Risk: replicated uniques (repU), disclosive
shares in original and synthetic data, DiSCO, TCAP and the CAP measures for --keys and --sensitive;
with --holdout, distance to the closest record and a membership-inference test.  Columns of text
or category type are categorical; list numeric columns to treat as categories with --categorical.
Missing values: the share of each column's missing values, original against synthetic (mean over
implicates with its Monte Carlo standard error), and within categories of the others; empty fields
are missing, and NA in --numeric columns; declare other markers with --missing-values.  Rules:
with --rules FILE (as synthesize-microdata reads it), the records breaking each rule in every file.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate-microdata",
        help="utility and disclosure risk of synthetic microdata (pMSE, SPECKS, AUC, repU, DiSCO, TCAP)",
        description="Compare ORIGINAL records with one or more SYNTHETIC data sets (implicates): general "
        "utility and disclosure risk.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("original", metavar="ORIGINAL", help="CSV or Parquet file of the original records")
    p.add_argument("synthetic", metavar="SYNTHETIC", nargs="+", help="one CSV or Parquet file per synthetic implicate")
    p.add_argument("--holdout", metavar="FILE", default=None, help="records not used to synthesize (enables DCR and membership)")
    p.add_argument("--keys", metavar="A,B", default=None, help="key variables an intruder knows (with --sensitive)")
    p.add_argument("--sensitive", metavar="COL", default=None, help="the variable an intruder wants to learn (with --keys)")
    p.add_argument("--target", action=Renamed, new="--sensitive", why="--target is a metric target, as in tune and report")
    p.add_argument("--columns", metavar="A,B,C", default=None, help="columns to evaluate (default: all shared columns)")
    p.add_argument(
        "--categorical",
        metavar="A,B",
        default=None,
        help="numeric columns to treat as categorical ('all' for every column, e.g. integer-coded data)",
    )
    p.add_argument("--propensity", choices=("logit", "cart"), default="logit", help="propensity model (default logit)")
    p.add_argument("--method", action=Renamed, new="--propensity", why="--method is a protection or synthesis method")
    p.add_argument(
        "--max-params", type=int, default=200, metavar="K", help="cap on the logistic propensity model's parameters (default 200)"
    )
    p.add_argument(
        "--tables", metavar="1,2,3", default="1,2,3", help="orders of the tables for the table statistics (default 1,2,3)"
    )
    p.add_argument("--model", metavar="'Y ~ X'", default=None, help="regression for CI overlap and SSO, e.g. 'y ~ a + b'")
    p.add_argument("--formula", action=Renamed, new="--model", why="--formula is the published crossings")
    p.add_argument("--family", choices=("gaussian", "binomial"), default="gaussian", help="regression family (default gaussian)")
    p.add_argument("--sample", type=int, default=1000, metavar="N", help="records sampled for distance measures (default 1000)")
    add_seed_option(p)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--plot", metavar="DIR", default=None,
                   help="write univariate.png and propensity.png (and manifest.json) into DIR, a new or empty folder")
    add_output_options(p, csv=False)
    p.add_argument(
        "--numeric", metavar="COL,COL", default=None,
        help="continuous columns, parsed as numbers; every other column is a category exactly as written",
    )
    p.add_argument(
        "--missing-values", action="append", default=[], metavar="[COL=]A,B",
        help="markers of a missing value, for every column or COL's (repeatable; blanks always, NA in --numeric columns)",
    )
    p.add_argument("--rules", metavar="FILE", default=None, help="rules to check in every file (as synthesize-microdata's)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _align_number_columns(frames: list[Any]) -> None:
    """Read a column as numbers in every file when it is numbers in one and number-like text in another.

    A CSV's types are inferred from its text while a Parquet file stores them, so the same column can
    arrive as integers from one file and as text ("39") from another; compared as categories, no
    value would match.
    """
    import pandas as pd

    shared = set(frames[0].columns).intersection(*(f.columns for f in frames[1:]))
    for col in shared:
        kinds = [pd.api.types.is_numeric_dtype(f[col]) and not pd.api.types.is_bool_dtype(f[col]) for f in frames]
        if all(kinds) or not any(kinds):
            continue
        try:
            converted = [f[col] if k else pd.to_numeric(f[col], errors="raise") for f, k in zip(frames, kinds)]
        except (TypeError, ValueError):
            continue  # text that is not numbers stays categorical
        for f, c in zip(frames, converted):
            f[col] = c


def _read(path: str, numeric: list[str] | None, what: str, missing: list[str] | None = None) -> Any:
    """Records as written (CSV as text, Parquet with its types), markers of missing values made missing, the
    --numeric columns parsed as numbers."""
    from ..io import read_records
    from ..metrics.microdata import mark_missing, parse_numeric

    frame = read_records(path)
    if missing:
        from ._synthesize_microdata import missing_values_from_args

        frame = mark_missing(frame, missing_values_from_args(missing, [str(c) for c in frame.columns]), f"{what} {path!r}")
    csv = not str(path).lower().endswith((".parquet", ".pq", ".parq"))
    return parse_numeric(frame, numeric, f"{what} {path!r}", first_line=2 if csv else None)


def run(args: argparse.Namespace) -> int:
    from ..exceptions import InvalidArgumentError

    if (args.keys is None) != (args.sensitive is None):
        raise InvalidArgumentError("--keys and --sensitive go together: give both for disclosure measures, or neither.")
    keys = parse_list(args.keys, "--keys") if args.keys else None
    columns = parse_list(args.columns, "--columns") if args.columns else None
    categorical = (
        parse_list(args.categorical, "--categorical") if args.categorical and args.categorical != "all" else None
    )
    try:
        tables = [int(t) for t in parse_list(args.tables, "--tables")]
    except ValueError:
        raise InvalidArgumentError(f"--tables must list table orders among 1, 2, 3. Got {args.tables!r}.") from None
    if args.sample < 1:
        raise InvalidArgumentError(f"--sample must be a positive integer. Got {args.sample}.")
    seed = seed_from_args(args)
    with outputs_from_args(args, seed=seed) as outputs:  # --plot is checked and locked before any work
        plots = outputs.folder(args.plot, "--plot") if args.plot else None
        return _evaluate(args, keys, columns, categorical, tables, seed, plots)


def _evaluate(args: argparse.Namespace, keys: Any, columns: Any, categorical: Any, tables: list[int], seed: Any,
              plots: Any) -> int:
    from .._results import json_ready
    from ..metrics.microdata import evaluate_microdata

    numeric = parse_list(args.numeric, "--numeric") if args.numeric else None
    rules = None
    if args.rules:
        from ..synthesis import read_rules

        rules, _ = read_rules(args.rules)
    missing = args.missing_values
    original = _read(args.original, numeric, "ORIGINAL", missing)
    synthetic = [_read(p, numeric, "SYNTHETIC", missing) for p in args.synthetic]
    holdout = _read(args.holdout, numeric, "HOLDOUT", missing) if args.holdout else None
    for path, frame in zip(args.synthetic, synthetic):
        if "count" in frame.columns and "count" not in original.columns:
            from ..exceptions import DataError

            raise DataError(
                f"SYNTHETIC {path!r} has a 'count' column that the original lacks: it looks like a frequency table, "
                "and its rows would be read as single records. Turn it into records first: cellsafe expand "
                f"{path} --variables ... --output records.parquet"
            )
    _align_number_columns([original, *synthetic] + ([holdout] if holdout is not None else []))
    if args.categorical == "all":
        categorical = [str(c) for c in original.columns]
    ev = evaluate_microdata(
        original,
        synthetic,
        keys=keys,
        target=args.sensitive,
        holdout=holdout,
        columns=columns,
        categorical=categorical,
        numeric=numeric,
        method=args.propensity,
        max_params=args.max_params,
        tables=tables,
        n_sample=args.sample,
        formula=args.model,
        family=args.family,
        rules=rules,
        rng=seed,
        progress=progress_from_args(args),
    )
    result = ev.to_dict()
    summary = json_ready(result, finite=True)
    if args.plot:
        from ..report import write_microdata_plots

        paths = write_microdata_plots(ev, original, synthetic, plots, columns, categorical=categorical)
        summary["plots"] = [str(Path(args.plot) / p.name) for p in paths]
    if args.json:
        print_json(summary)
    else:
        print(ev.summary())
        if args.plot:
            print("figures: " + ", ".join(summary["plots"]))
    return 0
