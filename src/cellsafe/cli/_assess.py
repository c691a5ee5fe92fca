"""``cellsafe assess``: a priori risk and utility of a synthesizer on a table, before any release."""

from __future__ import annotations

import argparse

from ._common import (
    EXAMPLES_FORMATTER,
    add_distribution_options,
    add_table_input,
    parse_counts,
    parse_float_list,
    print_json,
    mechanism_from_args,
    table_from_args,
)
from ._engine import add_engine_options, spark_table_from_args, uses_spark

_EXAMPLES = """\
examples:
  # tau metrics, expected loss and Hellinger utility of NBI noise with sigma = 1
  cellsafe assess pupils.parquet --variables area,ethnicity,sex,age,language \\
      --distribution nbi --sigma 1 --k 0,1,2,3

  # Poisson with pseudocount 0.02, as JSON, with P(|n_syn - n| < 1000)
  cellsafe assess table.csv --variables area,sex,age --count n \\
      --distribution poisson --alpha 0.02 --d 1000 --json

  # any cell-wise mechanism on the same yardstick: the cell key method, geometric noise
  cellsafe assess pupils.parquet --variables area,ethnicity,sex,age --mechanism 'ckm:D=5,V=3,js=2'
  cellsafe assess pupils.parquet --variables area,ethnicity,sex,age --mechanism 'geometric:epsilon=1' --json

Nothing is sampled: every number is an expectation computed from the table's cell sizes.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "assess",
        help="a priori risk and utility of a synthesizer (tau metrics, expected loss, Hellinger)",
        description="Expected tau1..tau4(k), squared error, synthetic total, Hellinger utility and share of "
        "cells within p% of the original, computed exactly from the table's cell-size distribution "
        "(003 section 3.3, 000 section 3.4).",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    add_table_input(p)
    add_distribution_options(p, mechanism=True)
    p.add_argument("--k", default="0,1,2,3", metavar="K,K", help="counts for the tau metrics (default 0,1,2,3)")
    p.add_argument("--p", default="0.5,1,5,10,50", metavar="P,P", help="percentages for 'within p%%' (default 0.5,1,5,10,50)")
    p.add_argument("--d", default="", metavar="D,D", help="distances d for P(|n_syn - n| < d)")
    p.add_argument("-m", type=int, default=1, dest="m", help="implicates averaged, for the squared error of the mean")
    p.add_argument("--no-hellinger", action="store_true", help="skip the expected Hellinger utility (faster)")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    add_engine_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._blas import one_blas_thread_from_start

    one_blas_thread_from_start()  # sums over a few thousand distinct counts: no product worth BLAS threads
    from .. import apriori

    mech = mechanism_from_args(args)
    k = parse_counts(args.k, "--k")
    p = parse_float_list(args.p, "--p")
    d = parse_float_list(args.d, "--d") if args.d.strip() else []
    # Spark computes only the cell-size distribution; the assessment is a small sum over it
    table = spark_table_from_args(args).cell_sizes() if uses_spark(args) else table_from_args(args)
    result = apriori.assess(table, mech, k=k, m=args.m, p=p, d=d, hellinger=not args.no_hellinger)
    if args.json:
        print_json({**result.to_dict(), "engine": args.engine})
    else:
        print(result.summary() + f"\nengine: {args.engine}")
    return 0
