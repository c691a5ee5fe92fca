"""``cellsafe utility``: specific utility of synthetic tables through a log-linear model."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

from ._common import EXAMPLES_FORMATTER, add_input_options, load_table, note, outputs_from_args, parse_list, print_json, resolve_count, add_output_options
from ._options import Renamed

_EXAMPLES = """\
examples:
  # original microdata against two synthetic tables written by 'cellsafe synthesize'
  cellsafe utility pupils.parquet synthetic/synthetic_1.csv synthetic/synthetic_2.csv \\
      --variables ethnicity,age,language --synthetic-count count \\
      --model 'ethnicity*age + ethnicity*language + age*language' --plot overlap.png

  # frequency tables on both sides, results as JSON, per-parameter comparison to a CSV
  cellsafe utility table.csv synth.csv --variables a,b,c --count n \\
      --model '(a + b + c)^2' --json --output parameters.csv

The model is fitted to the original and to each synthetic table (one implicate per file); each
parameter's confidence intervals are compared (overlap as in Karr et al. 2006), the synthetic
estimates combined over the implicates with the rule of Raab et al. (2016), or of Reiter (2003)
with --combining partially.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "utility",
        help="compare a log-linear model fitted to original and synthetic data (CI overlap)",
        description="Specific utility: fit a Poisson log-linear model to ORIGINAL and to each SYNTHETIC table "
        "and compare the parameters' confidence intervals, signs, significance and sizes.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument(
        "original", metavar="ORIGINAL", help="CSV or Parquet file: microdata, or a frequency table with --count"
    )
    p.add_argument("synthetic", metavar="SYNTHETIC", nargs="+", help="one file per synthetic implicate")
    add_input_options(p)
    p.add_argument(
        "--synthetic-count",
        metavar="COL",
        default=None,
        help="frequency column of the SYNTHETIC files (default: the --count column if they have it, else a column "
        "named 'count' with a note; none: one row per record)",
    )
    p.add_argument("--model", required=True, metavar="FORMULA", help="log-linear model in R notation, e.g. 'a*b + b*c'")
    p.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    p.add_argument(
        "--combining",
        choices=("fully", "partially"),
        default="fully",
        help="combining rule: fully (Raab et al. 2016, any m; default) or partially (Reiter 2003, m >= 2)",
    )
    p.add_argument("--rule", action=Renamed, new="--combining", why="--rule is a primary suppression rule")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--output", metavar="FILE", default=None, help="write the per-parameter comparison (CSV or Parquet)")
    p.add_argument("--plot", metavar="FILE", default=None, help="boxplots of CI overlap per implicate (PNG, PDF, SVG)")
    add_output_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    outputs = outputs_from_args(args)  # ORIGINAL and every SYNTHETIC file are inputs
    with outputs:  # the files appear, with their manifests, only when the run completes
        out_path = outputs.file(args.output, "--output") if args.output else None
        plot_path = outputs.file(args.plot, "--plot", formats=("png", "pdf", "svg")) if args.plot else None
        return _run(args, outputs, out_path, plot_path)


def _run(args: argparse.Namespace, outputs: Any, out_path: Any, plot_path: Any) -> int:
    from .._results import json_ready

    from ..formula import parse_formula
    from ..metrics.specific import specific_utility
    from ..table import CountTable

    names = parse_list(args.variables)
    parse_formula(args.model, names)  # unknown variables fail before any data are read
    from ..io import file_columns, provenance_notes

    original = load_table(args.original, args.variables, args.count, what="ORIGINAL")
    synthetic = []
    for path in args.synthetic:
        syn_count = args.synthetic_count
        if syn_count is None and args.count and Path(path).is_file() and args.count in file_columns(path):
            syn_count = args.count
        syn_count = resolve_count(path, names, syn_count, "SYNTHETIC", "--synthetic-count")
        synthetic.append(CountTable.from_microdata(path, list(original.variables), count=syn_count))
    for text in provenance_notes(args.synthetic):
        note(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = specific_utility(original, synthetic, args.model, level=args.level, rule=args.combining)
    notes = sorted({str(w.message) for w in caught})
    frame = res.to_frame()
    if out_path is not None:
        outputs.write_frame(frame.reset_index(), out_path)
    if plot_path is not None:
        from ..report import plot_overlap

        groups = {f"{i + 1}": res.overlap_implicates[i] for i in range(res.m)}
        if res.m > 1:
            groups["combined"] = frame["overlap"].to_numpy()
        plot_overlap(groups, plot_path, title=f"CI overlap: {args.model}", xlabel="synthetic implicate")
    overview = {k: json_ready(v, finite=True) for k, v in res.overview().items()}
    if args.json:
        records = []
        for term, row in frame.iterrows():
            rec = {"term": term}
            rec.update({k: json_ready(v, finite=True) for k, v in row.items()})
            records.append(rec)
        print_json({"model": args.model, "overview": overview, "warnings": notes, "parameters": records})
        return 0
    print(f"model: {args.model}")
    print(
        f"original total {res.n_original:,.0f}; {res.m} synthetic implicate(s), totals "
        + ", ".join(f"{x:,.0f}" for x in res.n_synthetic)
    )
    for k, v in overview.items():
        print(f"  {k:<22} {v:.4f}" if isinstance(v, float) else f"  {k:<22} {v}")
    worst = frame[frame["estimable"]].sort_values("overlap").head(10)
    if len(worst):
        print("\nparameters with the smallest overlap:")
        cols = ["estimate_original", "estimate_synthetic", "overlap", "std_diff", "sso"]
        print(worst[cols].to_string(float_format=lambda x: f"{x:.4f}"))
    for n in notes:
        print(f"note: {n}")
    return 0
