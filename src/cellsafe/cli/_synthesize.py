"""``cellsafe synthesize``: saturated count-model synthesis of a table."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..exceptions import InvalidArgumentError
from ._common import (
    EXAMPLES_FORMATTER,
    add_distribution_options,
    add_output_options,
    outputs_from_args,
    progress_from_args,
    add_table_input,
    add_seed_option,
    seed_from_args,
    synthesizer_from_args,
    table_from_args,
)
from ._engine import add_engine_options, spark_master, spark_table_from_args, uses_spark

_EXAMPLES = """\
examples:
  # microdata (one row per person) to 5 synthetic tables with negative binomial noise
  cellsafe synthesize pupils.parquet --variables area,ethnicity,sex,age,language \\
      --distribution nbi --sigma 1 -m 5 --seed 42 --output synthetic/

  # a frequency table with a count column, Poisson noise, pseudocount 0.02 on empty cells
  cellsafe synthesize table.csv --variables area,sex,age --count n \\
      --distribution poisson --alpha 0.02 --output out/

  # discretized gamma noise with impossible combinations kept at zero
  cellsafe synthesize table.csv --variables a,b,c --count n --distribution gaf --sigma 0.5 --nu -0.25 \\
      --zeros-to-ones 0.01 --structural-zeros impossible.csv --output out/ --format parquet

Writes synthetic_1.csv ... synthetic_M.csv (the variables and 'count', non-zero cells only) and
manifest.json (provenance) into a new folder; the set appears only when complete.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "synthesize",
        help="synthesize a contingency table with a saturated count model",
        description="Replace every cell's count by a draw from a count distribution centred on it "
        "(003's (sigma, alpha)-synthesis; 000's gamma family).",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    add_table_input(p)
    add_distribution_options(p)
    p.add_argument("-m", type=int, default=1, dest="m", help="number of synthetic tables (implicates), default 1")
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="DIR", help="folder for synthetic_1.csv ... synthetic_M.csv")
    p.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="output file format (default csv; --engine spark writes Parquet datasets)")
    add_engine_options(p)
    add_output_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    synth = synthesizer_from_args(args)  # validate parameters before reading data
    seed = seed_from_args(args)
    if args.m < 1:
        raise InvalidArgumentError(f"The 'm' parameter (-m) must be a positive number of implicates. Got {args.m}.")
    t0 = time.perf_counter()
    with outputs_from_args(args, [args.input, args.structural_zeros], mechanism=synth, seed=seed) as out:
        folder = out.folder(args.output)  # refused before any work if it would clobber
        if uses_spark(args):
            out.manifest.extra["engine"] = "spark"
            return _run_spark(args, synth, folder, t0)
        table = table_from_args(args)
        # one implicate at a time, written as drawn: memory flat in m
        totals = []
        for i, syn in enumerate(synth.implicates(table, args.m, rng=seed, progress=progress_from_args(args)), start=1):
            _write_table(out, syn, Path(folder) / f"synthetic_{i}.{args.format or 'csv'}")
            totals.append(syn.total)
    if not args.quiet:
        released = ", ".join(f"{t:,}" for t in totals) if len(totals) <= 5 else (
            f"{min(totals):,} to {max(totals):,}, mean {sum(totals) / len(totals):,.1f}")
        print(
            f"{synth!r}: {table.n_cells:,} cells ({table.nnz:,} non-zero), original total {table.total:,}, released "
            f"total{'s' if len(totals) > 1 else ''} {released}; wrote {args.m} table(s) and manifest.json to "
            f"{args.output} in {time.perf_counter() - t0:.2f} s"
        )
    return 0


def _write_table(out, table, path: Path) -> None:  # type: ignore[no-untyped-def]
    """A table's non-zero cells (the variables and the counts): CSV straight from its coded cells (the bytes
    ``to_frame().to_csv`` writes, without building the frame), anything else through the frame."""
    if path.suffix == ".csv" and table.is_integer:
        from ..io import CodedColumn
        from ..table import count_column_name

        coded = table.cell_codes()
        header = [*coded, count_column_name(table.names)]
        if out.write_coded_csv(header, [*(CodedColumn(*lc) for lc in coded.values()), table.counts], path):
            return
    out.write_frame(table.to_frame(), path)


def _run_spark(args: argparse.Namespace, synth, out_dir, t0: float) -> int:  # type: ignore[no-untyped-def]
    """Aggregate and synthesize on Spark: synthetic_i.parquet datasets equal to the local engine's tables."""
    from ..engines.spark import synthesize
    from ..exceptions import InvalidArgumentError

    if args.format == "csv":
        raise InvalidArgumentError("--engine spark writes Parquet datasets; drop --format csv (or use --engine local).")
    table = spark_table_from_args(args)
    paths = synthesize(table, synth, args.m, seed_from_args(args), out_dir)
    if not args.quiet:
        print(f"{synth!r} (engine spark, {spark_master(args)}): {table.n_cells:,} cells; wrote {len(paths)} Parquet "
              f"dataset(s) and manifest.json to {args.output} in {time.perf_counter() - t0:.2f} s")
    return 0
