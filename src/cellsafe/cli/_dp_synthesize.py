"""``cellsafe dp-synthesize``: differentially private synthesis of a table with a fixed total."""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from .._catalog import OUTSIDE_CHOICES
from ..exceptions import DataError, InvalidArgumentError

if TYPE_CHECKING:  # the computing modules load when the command runs, never for --help
    from ..table import CountTable, Domain
from ._common import (
    EXAMPLES_FORMATTER,
    add_input_options,
    add_output_options,
    add_seed_option,
    note,
    outputs_from_args,
    parse_list,
    progress_from_args,
    resolve_count,
    seed_from_args,
)

_EXAMPLES = """\
examples:
  # deaths by county with county populations: Poisson-gamma smoothed to the national rate,
  # epsilon 2 for the whole release of 5 implicates (0.4 each); counties.json lists every county
  cellsafe dp-synthesize deaths.csv --variables county --count deaths --population pop \\
      --domain counties.json --mechanism poisson-gamma --epsilon 2 -m 5 --output dp/

  # smoothed to state rates; the state totals are themselves released with epsilon 0.5
  cellsafe dp-synthesize deaths.csv --variables state,county --count deaths --population pop \\
      --domain geography.csv --mechanism poisson-gamma --epsilon 2 --prior regional:state \\
      --prior-epsilon 0.5 --output dp/

  # the multinomial-Dirichlet synthesizer on microdata, charged to a privacy budget log;
  # records with a category outside the domain are left out instead of refused
  cellsafe budget budget.json --create --epsilon 5
  cellsafe dp-synthesize people.parquet --variables sex,age --domain domain.json --outside drop \\
      --mechanism multinomial-dirichlet --epsilon 1 --budget-log budget.json --output dp/

  # one release per region: disjoint records, so the regions compose in parallel (epsilon 1 in all)
  cellsafe dp-synthesize people.parquet --variables sex,age --domain domain.json --part region=N \\
      --mechanism multinomial-dirichlet --epsilon 1 --budget-log budget.json --output dp_N/
  cellsafe dp-synthesize people.parquet --variables sex,age --domain domain.json --part region=S \\
      --mechanism multinomial-dirichlet --epsilon 1 --budget-log budget.json --output dp_S/

What is public and what is protected: the domain (--domain: every category of every variable,
given by you, never read from the records) and the total count are released as they are; the
counts of the cells are protected with epsilon-differential privacy.  A domain file is JSON
({"sex": ["F", "M"], "age": ["0-15", "16-64", "65+"]}) or CSV with the header variable,category.
Records outside the domain are an error (--outside error, the default) or left out (--outside
drop); they never add a category.

Randomness comes from the operating system's cryptographic generator; --seed makes the release
reproducible, and anyone who knows the seed can then recompute the noise (a warning says so).

Writes synthetic_1.csv ... synthetic_M.csv (the variables and 'count', non-zero cells only),
dp_synthesis.json (mechanism, epsilon per implicate and in total, prior, the domain's sha256) and
manifest.json.  --epsilon is the budget of the whole release: the M implicates share it equally
(sequential composition).  With --budget-log the log is locked from the budget check until the
release is written, so concurrent releases cannot overrun it.
"""

_NO_DOMAIN = (
    "dp-synthesize needs --domain FILE, the public categories of every variable. Categories read from the "
    "confidential records would disclose which ones occur: one record with a category nobody else has would "
    "add it to the release, a privacy loss no epsilon covers. Write the categories as JSON "
    '({"var": ["cat1", "cat2"]}) or as a CSV with the header variable,category.'
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dp-synthesize",
        help="differentially private synthesis with a fixed total (Poisson-gamma or multinomial-Dirichlet)",
        description="Draw synthetic tables from a posterior predictive distribution whose prior is strong "
        "enough for epsilon-differential privacy (004), on a public domain of categories.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("input", metavar="INPUT", help="CSV or Parquet file: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument(
        "--domain",
        metavar="FILE",
        help="public categories of every variable: JSON {variable: [categories]} or CSV variable,category (required)",
    )
    p.add_argument(
        "--outside",
        choices=OUTSIDE_CHOICES,
        default="error",
        help="records with a category outside the domain: an error (default) or left out",
    )
    p.add_argument(
        "--mechanism", required=True, choices=("poisson-gamma", "multinomial-dirichlet"), help="the synthesizer"
    )
    p.add_argument("--epsilon", required=True, type=float, help="privacy loss of the whole release (all implicates)")
    p.add_argument(
        "--population",
        metavar="COL",
        help="population-size column of INPUT (a frequency table with --count, one row per cell); "
        "cells without population get no events, and no cell may count more events than its population",
    )
    p.add_argument(
        "--prior",
        default=None,
        metavar="national|regional:VAR",
        help="Poisson-gamma prior rates: the national rate (default) or the rate of each category of VAR",
    )
    p.add_argument(
        "--prior-epsilon",
        type=float,
        default=None,
        help="with --prior regional:VAR, release the regional totals with this epsilon (added to the cost)",
    )
    p.add_argument(
        "--part",
        metavar="VAR=VALUE",
        help="synthesize only the records with VAR=VALUE; the budget log charges it to part VALUE of partition "
        "VAR, so releases on different parts compose in parallel",
    )
    p.add_argument("-m", type=int, default=1, dest="m", help="number of synthetic tables (implicates), default 1")
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="DIR", help="folder for the synthetic tables")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv", help="output file format (default csv)")
    add_output_options(p)
    p.add_argument("--budget-log", metavar="LOG", help="privacy budget log (see 'cellsafe budget') to charge")
    p.add_argument("--quiet", action="store_true", help="no summary")
    p.set_defaults(func=run)


def _part(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    var, sep, value = text.partition("=")
    if not sep or not var.strip() or not value:
        raise InvalidArgumentError(f"--part must be VAR=VALUE, for example region=North. Got {text!r}.")
    return var.strip(), value


def _load(args: argparse.Namespace, domain: Domain) -> tuple[CountTable, CountTable | None, int]:
    """The table on the public domain (and the populations), and the number of records left out."""
    import numpy as np

    from ..io import aggregate_file, read_records
    from ..table import CountTable

    names = parse_list(args.variables)
    part = _part(args.part)
    if args.population:
        if not args.count:
            raise InvalidArgumentError("--population needs --count: INPUT must be a frequency table with one row per cell.")
        frame, count = read_records(args.input), args.count
        for col in (args.population, args.count):
            if col not in frame.columns:
                raise DataError(f"column {col!r} is not in {args.input!r}: columns {list(frame.columns)}.")
    else:
        extra = [part[0]] if part is not None and part[0] not in names else []
        frame, count = aggregate_file(args.input, names + extra, resolve_count(args.input, names + extra, args.count))
    if part is not None:
        var, value = part
        if var not in frame.columns:
            raise DataError(f"--part variable {var!r} is not a column of {args.input!r}.")
        frame = frame[frame[var].astype(str) == value]
        if not len(frame):
            raise DataError(f"no record of {args.input!r} has {var}={value!r}; check --part.")
    dom = domain.select(names)
    kept, dropped = dom.restrict(frame, count=count, outside=args.outside)
    table = dom.adopt(CountTable.from_frame(kept, list(dom.variables), count=count))
    if not args.population:
        return table, None, dropped
    pop = dom.adopt(CountTable.from_frame(kept, list(dom.variables), count=args.population, allow_fractional=True))
    over = np.flatnonzero(table.counts > pop.lookup(table.index))
    if over.size:
        cell = table.index[over[:1]]
        raise DataError(
            f"cell ({table.describe_cells(cell)[0]}) has {int(table.counts[over[0]]):,} events but a population of "
            f"{float(pop.lookup(cell)[0]):,g}; a cell cannot count more events than people. Check --count and "
            "--population."
        )
    return table, pop, dropped


def _check(args: argparse.Namespace) -> None:
    if not (args.epsilon > 0):
        raise InvalidArgumentError(f"--epsilon must be positive. Got {args.epsilon}.")
    if args.m < 1:
        raise InvalidArgumentError(f"-m must be at least 1. Got {args.m}.")
    if args.prior_epsilon is not None and not (args.prior_epsilon > 0):
        raise InvalidArgumentError(f"--prior-epsilon must be positive. Got {args.prior_epsilon}.")
    if args.mechanism == "multinomial-dirichlet" and (args.population or args.prior is not None):
        raise InvalidArgumentError("--population and --prior apply to --mechanism poisson-gamma only.")
    prior = (args.prior or "national").lower()
    regional = prior.startswith("regional:")
    if prior != "national" and not regional:
        raise InvalidArgumentError(f"--prior must be 'national' or 'regional:VAR'. Got {args.prior!r}.")
    if args.prior_epsilon is not None and not regional:
        raise InvalidArgumentError("--prior-epsilon applies to --prior regional:VAR only (it releases the regional totals).")
    _part(args.part)
    if args.domain is None:
        raise InvalidArgumentError(_NO_DOMAIN)


def run(args: argparse.Namespace) -> int:
    from ..dp import PrivacyAccountant
    from ..table import Domain

    _check(args)
    domain = Domain.read(args.domain)
    domain.select(parse_list(args.variables))  # every variable needs its public categories
    seed = seed_from_args(args)
    if seed is not None:
        print(
            "warning: --seed makes this release reproducible: anyone who knows or guesses the seed can recompute "
            "its noise and remove it. Omit --seed to draw from the operating system's cryptographic generator.",
            file=sys.stderr,
        )
    accountant = PrivacyAccountant.load(args.budget_log) if args.budget_log else None
    outputs = outputs_from_args(args, [args.input, args.domain], seed=seed)
    with outputs:  # the folder appears, with its manifest, only when every table is written
        return _run(args, domain, seed, accountant, outputs, outputs.folder(args.output))


def _run(args: argparse.Namespace, domain: Domain, seed: Any, accountant: Any, outputs: Any, out_dir: Path) -> int:
    import numpy as np

    from .._random import as_seed_sequence
    from ..dp import prior_weight
    from ..mechanisms.dirichlet import MultinomialDirichletSynthesizer
    from ..mechanisms.poisson_gamma import PoissonGammaSynthesizer

    t0 = time.perf_counter()
    table, pop, dropped = _load(args, domain)
    if dropped:
        note(f"{dropped:,} record(s) outside the domain were left out (--outside drop); this number is not released.")
    dom = domain.select(table.names)
    root = as_seed_sequence("secure" if seed is None else seed)
    eps_each = args.epsilon / args.m
    prior_cost = args.prior_epsilon or 0.0
    synth: Any
    if args.mechanism == "multinomial-dirichlet":
        synth = MultinomialDirichletSynthesizer.for_epsilon(eps_each, int(table.total))
        info = {"alpha": synth.alpha}
        sample_rng = root
        prior = None
    else:
        prior = args.prior or "national"
        prior_rng, sample_rng = root.spawn(2)
        synth = PoissonGammaSynthesizer.for_epsilon(
            eps_each, table, population=pop, prior=prior, prior_epsilon=args.prior_epsilon, rng=prior_rng
        )
        info = {"a": float(np.min(synth.a)), "b_min": float(np.min(synth.b)), "b_max": float(np.max(synth.b))}
    weight = prior_weight(synth, table)
    if weight.prior_dominates:
        print(
            f"warning: the prior weighs {weight.prior:,.0f} pseudo-records against {weight.data:,} records: the "
            f"release is mostly prior (Hellinger utility of the expected release {weight.utility:.2f}; 1 is the "
            "data itself). Spend more epsilon per implicate (fewer implicates), or use fewer cells.",
            file=sys.stderr,
        )
    from ..dp import PrivacyLoss

    relation = accountant.relation if accountant is not None else "replace-one"
    loss = synth.privacy_loss(relation, table=table).times(args.m)
    if prior_cost:
        loss = loss + PrivacyLoss.pure(prior_cost, relation)  # the regional totals: sensitivity 2 under replace-one
    per_implicate = synth.epsilon(table)
    total_cost = loss.epsilon
    part = _part(args.part)
    implicates = f"{args.m} implicate{'s' if args.m != 1 else ''}"
    label = f"dp-synthesize {Path(args.input).name} ({implicates})"
    reserve = (
        accountant.reserve(
            loss,
            label=label,
            mechanism=args.mechanism,
            partition=None if part is None else part[0],
            part=None if part is None else part[1],
        )
        if accountant is not None
        else nullcontext()
    )
    with reserve as release:  # the log stays locked until the release is written; a failure withdraws the charge
        # each implicate is written as drawn: memory flat in -m (its streams are keyed by its number)
        tables = synth.implicates(table, args.m, rng=sample_rng, progress=progress_from_args(args))
        for i, syn in enumerate(tables, start=1):
            outputs.write_frame(syn.to_frame(), Path(out_dir) / f"synthetic_{i}.{args.format}")
        meta = {
            "mechanism": args.mechanism,
            "epsilon_per_implicate": per_implicate,
            "implicates": args.m,
            "prior": prior,
            "prior_epsilon": args.prior_epsilon,
            "epsilon_total": total_cost,
            "total": int(table.total),
            "cells": int(table.n_cells),
            "domain_sha256": dom.sha256,
            "part": None if part is None else {"variable": part[0], "value": part[1]},
            "parameters": info,
        }
        (Path(out_dir) / "dp_synthesis.json").write_text(json.dumps(meta, indent=2) + "\n")
        outputs.manifest.extra.update(meta)
        outputs.manifest.extra["domain"] = {"sha256": dom.sha256, "variables": dom.names}
        if release is not None:
            outputs.manifest.extra["ledger"] = release.anchor
        outputs.commit()
    if not args.quiet:
        print(
            f"{args.mechanism}: total {table.total:,} over {table.n_cells:,} cells of the public domain; epsilon "
            f"{per_implicate:.4g} per implicate, {total_cost:.4g} in total; wrote {implicates} to {args.output} in "
            f"{time.perf_counter() - t0:.2f} s"
        )
    return 0
