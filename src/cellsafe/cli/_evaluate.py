"""``cellsafe evaluate``: empirical risk and utility of released tables against the original."""

from __future__ import annotations

import argparse

from ._engine import add_engine_options, spark_from_args, uses_spark
from ._common import (
    EXAMPLES_FORMATTER,
    add_input_options,
    load_table,
    note,
    parse_counts,
    parse_float_list,
    print_json,
    progress_from_args,
    resolve_count,
)

_EXAMPLES = """\
examples:
  # the original microdata against three synthetic tables written by 'cellsafe synthesize'
  cellsafe evaluate pupils.parquet out/synthetic_1.csv out/synthetic_2.csv out/synthetic_3.csv \\
      --variables area,ethnicity,sex,age,language --json

  # an original frequency table (count column n) against one released table
  cellsafe evaluate table.csv released.csv --variables area,sex,age --count n --k 1,2

Each SYNTHETIC file is a frequency table on the same variables with a count column
(--synthetic-count, default 'count'); categories must be among the original's.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="empirical risk and utility of released tables against the original",
        description="tau1..tau4(k), share of cells within p% of the original, trimmed mean percentage "
        "difference, squared error and Hellinger utility, with their mean and spread over implicates.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("original", metavar="ORIGINAL", help="CSV or Parquet: microdata, or a frequency table with --count")
    p.add_argument("synthetic", metavar="SYNTHETIC", nargs="+", help="released tables (CSV or Parquet)")
    add_input_options(p)
    p.add_argument("--synthetic-count", default=None, metavar="COL",
                   help="count column of SYNTHETIC (default: a column named 'count', with a note; none: one row per record)")
    p.add_argument("--structural-zeros", metavar="FILE", help="CSV/Parquet listing impossible combinations")
    p.add_argument("--k", default="0,1,2,3", metavar="K,K", help="counts for the tau metrics (default 0,1,2,3)")
    p.add_argument("--p", default="0.5,1,5,10,50", metavar="P,P", help="percentages for 'within p%%'")
    p.add_argument("--trim", type=float, default=0.1, help="share cut from each end for the trimmed mean (default 0.1)")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    add_engine_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..metrics import table_metrics
    from ..table import CountTable

    k = parse_counts(args.k, "--k")
    p = parse_float_list(args.p, "--p")
    if uses_spark(args):
        return _run_spark(args, k, p)
    from .._progress import progress_bar
    from ..io import provenance_notes

    original = load_table(args.original, args.variables, args.count, args.structural_zeros, what="ORIGINAL")
    released = []
    # one step per implicate read, and one for the metrics over all of them
    with progress_bar(len(args.synthetic) + 1, progress_from_args(args), "evaluate", unit="step") as bar:
        for path in args.synthetic:
            count = resolve_count(path, original.names, args.synthetic_count, "SYNTHETIC", "--synthetic-count")
            t = CountTable.from_microdata(path, list(original.variables), count=count)
            released.append(original.with_counts(t.index, t.counts))  # keeps the structural zeros
            bar.update(1)
        result = table_metrics(original, released, k=k, p=p, trim=args.trim)
        bar.update(1)
    for text in provenance_notes(args.synthetic):
        note(text)
    if args.json:
        out = result.to_dict()
        out["files"] = list(args.synthetic)
        out["engine"] = "local"
        print_json(out)
    else:
        print(result.summary())
    return 0


def _run_spark(args: argparse.Namespace, k: list[int], p: list[float]) -> int:
    """Every metric from the (original, released) pairs Spark counts: the same numbers and JSON as the local engine."""
    from ..engines.spark import aggregate, cell_pairs
    from ..io import read_frame
    from ..metrics import table_metrics_from_pairs
    from ._common import parse_list

    spark = spark_from_args(args)
    sz = read_frame(args.structural_zeros) if args.structural_zeros else None
    original = aggregate(args.original, parse_list(args.variables), count=args.count, structural_zeros=sz, spark=spark)
    count = args.synthetic_count or "count"
    released = [aggregate(path, list(original.variables), count=count, spark=spark) for path in args.synthetic]
    result = table_metrics_from_pairs(cell_pairs(original, released), k=k, p=p, trim=args.trim)
    if args.json:
        out = result.to_dict()
        out["files"] = list(args.synthetic)
        out["engine"] = "spark"
        print_json(out)
    else:
        print(result.summary())
    return 0
