"""``--engine`` and ``--spark-master``: where a command's heavy work runs (local numpy or Spark)."""

from __future__ import annotations

import argparse
from typing import Any

from ..engines import ENGINES

__all__ = ["add_engine_options", "spark_from_args", "spark_master", "spark_table_from_args", "uses_spark"]


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """--engine {local,spark} and --spark-master (default local[*])."""
    g = p.add_argument_group("engine")
    g.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="local: DuckDB and numpy in this process (default); spark: Spark SQL and the same per-block kernels on "
        "a Spark cluster, same numbers for the same seed (pip install 'cellsafe[spark]', Java 17)",
    )
    g.add_argument(
        "--spark-master",
        default=None,
        metavar="URL",
        help="Spark master for --engine spark: local[*] (default), spark://host:7077, yarn, k8s://...",
    )


def uses_spark(args: argparse.Namespace) -> bool:
    """Whether the command runs on Spark; --spark-master without --engine spark is refused (it would be ignored)."""
    spark = getattr(args, "engine", "local") == "spark"
    if not spark and getattr(args, "spark_master", None) is not None:
        from ..exceptions import InvalidArgumentError

        raise InvalidArgumentError(
            "--spark-master applies to --engine spark only (the local engine would ignore it); add --engine spark or "
            "drop --spark-master."
        )
    return spark


def spark_master(args: argparse.Namespace) -> str:
    """The Spark master URL of the run (local[*] unless --spark-master)."""
    return getattr(args, "spark_master", None) or "local[*]"


def spark_from_args(args: argparse.Namespace) -> Any:
    """The SparkSession on --spark-master; a short run's JVM settings for a small INPUT on a local master."""
    from ..engines.spark import is_short_run, spark_session

    master = spark_master(args)
    return spark_session(master, short_run=is_short_run(master, getattr(args, "input", None)))


def spark_table_from_args(args: argparse.Namespace) -> Any:
    """The SparkTable of INPUT, --variables, --count and --structural-zeros, aggregated by Spark."""
    from ..engines.spark import aggregate
    from ..io import read_frame
    from ._common import parse_list

    spark = spark_from_args(args)
    sz = read_frame(args.structural_zeros) if getattr(args, "structural_zeros", None) else None
    return aggregate(args.input, parse_list(args.variables), count=args.count, structural_zeros=sz, spark=spark)
