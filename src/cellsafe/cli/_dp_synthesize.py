"""``cellsafe dp-synthesize``: differentially private synthesis of a table with a fixed total."""

from __future__ import annotations

import argparse
from typing import Any
import json
import time
from pathlib import Path

import numpy as np

from ..dp import PrivacyAccountant
from ..exceptions import DataError, InvalidArgumentError
from ..io import read_frame
from ..mechanisms.dirichlet import MultinomialDirichletSynthesizer
from ..mechanisms.poisson_gamma import PoissonGammaSynthesizer
from ..table import CountTable
from ._common import (
    EXAMPLES_FORMATTER,
    add_input_options,
    add_output_options,
    add_seed_option,
    load_table,
    outputs_from_args,
    parse_list,
    seed_from_args,
)

_EXAMPLES = """\
examples:
  # deaths by county with county populations: Poisson-gamma smoothed to the national rate,
  # epsilon 2 for the whole release of 5 implicates (0.4 each)
  cellsafe dp-synthesize deaths.csv --variables county --count deaths --population pop \\
      --mechanism poisson-gamma --epsilon 2 -m 5 --seed 1 --output dp/

  # smoothed to state rates; the state totals are themselves released with epsilon 0.5
  cellsafe dp-synthesize deaths.csv --variables state,county --count deaths --population pop \\
      --mechanism poisson-gamma --epsilon 2 --prior regional:state --prior-epsilon 0.5 --output dp/

  # the multinomial-Dirichlet synthesizer on microdata, charged to a privacy budget log
  cellsafe budget budget.json --create --epsilon 5
  cellsafe dp-synthesize people.parquet --variables region,sex,age --mechanism multinomial-dirichlet \\
      --epsilon 1 --budget-log budget.json --output dp/

Writes synthetic_1.csv ... synthetic_M.csv (the variables and 'count', non-zero cells only) and
dp_synthesis.json (mechanism, epsilon per implicate and in total, prior).  The total count is
released exactly (it is treated as public).  --epsilon is the budget of the whole release: the M
implicates share it equally (sequential composition).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dp-synthesize",
        help="differentially private synthesis with a fixed total (Poisson-gamma or multinomial-Dirichlet)",
        description="Draw synthetic tables from a posterior predictive distribution whose prior is strong "
        "enough for epsilon-differential privacy (004).",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("input", metavar="INPUT", help="CSV or Parquet file: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument(
        "--mechanism", required=True, choices=("poisson-gamma", "multinomial-dirichlet"), help="the synthesizer"
    )
    p.add_argument("--epsilon", required=True, type=float, help="privacy loss of the whole release (all implicates)")
    p.add_argument(
        "--population",
        metavar="COL",
        help="population-size column of INPUT (a frequency table with --count, one row per cell); "
        "cells without population get no events",
    )
    p.add_argument(
        "--prior",
        default="national",
        metavar="national|regional:VAR",
        help="Poisson-gamma prior rates: the national rate (default) or the rate of each category of VAR",
    )
    p.add_argument(
        "--prior-epsilon",
        type=float,
        default=None,
        help="with --prior regional:VAR, release the regional totals with this epsilon (added to the cost)",
    )
    p.add_argument("-m", type=int, default=1, dest="m", help="number of synthetic tables (implicates), default 1")
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="DIR", help="folder for the synthetic tables")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv", help="output file format (default csv)")
    add_output_options(p)
    p.add_argument("--budget-log", metavar="LOG", help="privacy budget log (see 'cellsafe budget') to charge")
    p.add_argument("--quiet", action="store_true", help="no summary")
    p.set_defaults(func=run)


def _load(args: argparse.Namespace) -> tuple[CountTable, CountTable | None]:
    if not args.population:
        return load_table(args.input, args.variables, args.count), None
    if not args.count:
        raise InvalidArgumentError("--population needs --count: INPUT must be a frequency table with one row per cell.")
    names = parse_list(args.variables)
    df = read_frame(args.input)
    if args.population not in df.columns:
        raise DataError(f"population column {args.population!r} is not in {args.input!r}: columns {list(df.columns)}.")
    table = CountTable.from_frame(df, names, count=args.count)
    pop = CountTable.from_frame(df, list(table.variables), count=args.population, allow_fractional=True)
    return table, pop


def run(args: argparse.Namespace) -> int:
    if not (args.epsilon > 0):
        raise InvalidArgumentError(f"--epsilon must be positive. Got {args.epsilon}.")
    if args.m < 1:
        raise InvalidArgumentError(f"-m must be at least 1. Got {args.m}.")
    if args.prior_epsilon is not None and not (args.prior_epsilon > 0):
        raise InvalidArgumentError(f"--prior-epsilon must be positive. Got {args.prior_epsilon}.")
    regional = args.prior.lower().startswith("regional:")
    if args.prior.lower() != "national" and not regional:
        raise InvalidArgumentError(f"--prior must be 'national' or 'regional:VAR'. Got {args.prior!r}.")
    if args.mechanism == "multinomial-dirichlet" and (args.population or args.prior.lower() != "national"):
        raise InvalidArgumentError("--population and --prior apply to --mechanism poisson-gamma only.")
    if args.prior_epsilon is not None and not regional:
        raise InvalidArgumentError("--prior-epsilon applies to --prior regional:VAR only (it releases the regional totals).")
    accountant = PrivacyAccountant.load(args.budget_log) if args.budget_log else None
    outputs = outputs_from_args(args, [args.input], seed=seed_from_args(args))
    with outputs:  # the folder appears, with its manifest, only when every table is written
        return _run(args, accountant, outputs, outputs.folder(args.output))


def _run(args: argparse.Namespace, accountant: Any, outputs: Any, out_dir: Path) -> int:
    t0 = time.perf_counter()
    table, pop = _load(args)
    seed = seed_from_args(args)
    eps_each = args.epsilon / args.m
    prior_cost = args.prior_epsilon or 0.0
    if args.mechanism == "multinomial-dirichlet":
        synth = MultinomialDirichletSynthesizer.for_epsilon(eps_each, int(table.total))
        info = {"alpha": synth.alpha}
    else:
        ss = np.random.SeedSequence(seed) if seed is not None else np.random.SeedSequence()
        prior_rng, seed = ss.spawn(2)
        synth = PoissonGammaSynthesizer.for_epsilon(
            eps_each, table, population=pop, prior=args.prior, prior_epsilon=args.prior_epsilon, rng=prior_rng
        )
        info = {"a": float(np.min(synth.a)), "b_min": float(np.min(synth.b)), "b_max": float(np.max(synth.b))}
    per_implicate = synth.epsilon(table)
    total_cost = per_implicate * args.m + prior_cost
    if accountant is not None:
        accountant.spend(
            total_cost, label=f"dp-synthesize {Path(args.input).name} ({args.m} implicates)", mechanism=args.mechanism
        )
    tables = synth.sample(table, m=args.m, rng=seed)
    for i, syn in enumerate(tables, start=1):
        outputs.write_frame(syn.to_frame(), Path(out_dir) / f"synthetic_{i}.{args.format}")
    meta = {
        "mechanism": args.mechanism,
        "epsilon_per_implicate": per_implicate,
        "implicates": args.m,
        "prior": args.prior,
        "prior_epsilon": args.prior_epsilon,
        "epsilon_total": total_cost,
        "total": int(table.total),
        "cells": int(table.n_cells),
        "parameters": info,
    }
    (Path(out_dir) / "dp_synthesis.json").write_text(json.dumps(meta, indent=2) + "\n")
    outputs.manifest.extra.update(meta)
    if not args.quiet:
        print(
            f"{args.mechanism}: total {table.total:,} over {table.n_cells:,} cells; epsilon {per_implicate:.4g} per "
            f"implicate, {total_cost:.4g} in total; wrote {args.m} table(s) to {out_dir} in "
            f"{time.perf_counter() - t0:.2f} s"
        )
    return 0
