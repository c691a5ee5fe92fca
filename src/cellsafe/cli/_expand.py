"""``cellsafe expand``: a frequency table back to records (one row per counted unit)."""

from __future__ import annotations

import argparse

from ._common import (
    EXAMPLES_FORMATTER,
    add_output_options,
    add_seed_option,
    add_table_input,
    outputs_from_args,
    progress_from_args,
    seed_from_args,
    table_from_args,
)

_EXAMPLES = """\
examples:
  # a synthetic table written by 'cellsafe synthesize' to records, in an order drawn from the seed
  cellsafe expand synthetic/synthetic_1.csv --variables area,sex,age --count count \\
      --seed 7 --output records.parquet

Writes one row per record (a cell of count f gives f rows) with the variables only, shuffled by
--seed (without one, the order is drawn securely and the manifest says so), and
records.parquet.manifest.json beside it.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "expand",
        help="expand a frequency table to records (one row per counted unit)",
        description="Turn the counts of a table into records: each cell of count f becomes f identical rows, "
        "in a random order drawn from --seed.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    add_table_input(p)
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="FILE", help="the records (.csv, .parquet or .json)")
    add_output_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._progress import progress_bar

    seed = seed_from_args(args)
    with outputs_from_args(args, [args.input, args.structural_zeros], seed=seed) as out:
        target = out.file(args.output)  # checked before the data are read
        # three steps (read, expand, write), each one vectorized pass: the bar says which is under way
        with progress_bar(3, progress_from_args(args), "expand: reading", unit="step") as bar:
            table = table_from_args(args)
            bar.update(1)
            bar.set_description("expand: drawing records")
            records = table.to_microdata(rng=seed if seed is not None else "secure")
            bar.update(1)
            bar.set_description("expand: writing")
            out.write_frame(records, target)
            bar.update(1)
    if not args.quiet:
        print(f"wrote {len(records):,} records of {table.nnz:,} cells to {args.output}")
    return 0
