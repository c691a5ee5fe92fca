"""``cellsafe describe``: what a table holds before anything is released."""

from __future__ import annotations

import argparse

from ._common import EXAMPLES_FORMATTER, add_table_input, print_json, table_from_args
from ._engine import add_engine_options, spark_table_from_args, uses_spark

_EXAMPLES = """\
examples:
  # possible and non-zero cells, uniques, records in small cells, categories per variable
  cellsafe describe pupils.parquet --variables area,ethnicity,sex,age,language

  # a frequency table with a count column, as JSON
  cellsafe describe table.csv --variables area,sex,age --count n --json

  # a register too large for one machine, aggregated by Spark
  cellsafe describe 'census/*.parquet' --variables region,age,sex,ethnicity --engine spark --spark-master yarn
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "describe",
        help="describe a table: cells, non-zero cells, uniques, the cell-size distribution",
        description="The size and sparsity of the table of INPUT over the variables: possible cells, non-zero "
        "cells, uniques (cells of count 1), records in cells of size 1, 2 and <= 5, the cell-size distribution "
        "and the number of categories of each variable.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    add_table_input(p)
    add_engine_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if uses_spark(args):
        result = spark_table_from_args(args).describe()
    else:
        from ..table import describe

        result = describe(table_from_args(args))
    if args.json:
        out = result.to_dict()
        out["engine"] = args.engine
        print_json(out)
    else:
        print(result.summary() + f"\nengine                {args.engine}")
    return 0
