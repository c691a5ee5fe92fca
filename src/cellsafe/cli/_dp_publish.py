"""``cellsafe dp-publish``: differentially private counts at every level of a hierarchy, consistent."""

from __future__ import annotations

import argparse
import time
from contextlib import nullcontext
from pathlib import Path

from ._common import (
    EXAMPLES_FORMATTER,
    add_input_options,
    add_output_options,
    add_seed_option,
    dp_seed_and_ledger,
    note,
    outputs_from_args,
    parse_list,
    resolve_count,
)

_EXAMPLES = """\
examples:
  # people by tract and sex, published for the nation, every state, county and tract:
  # discrete Gaussian noise at every level (epsilon 1, delta 1e-9 for the whole release)
  cellsafe dp-publish people.parquet --variables tract,sex --hierarchy tract=geography.csv \\
      --domain sex.json --epsilon 1 --output counts/

  # geometric noise, more of the budget on the top levels, charged to a budget ledger
  cellsafe budget budget.log --create --epsilon 3
  cellsafe dp-publish people.parquet --variables tract,sex --hierarchy tract=geography.csv \\
      --domain sex.json --noise geometric --epsilon 1 --split 2,2,1,1 --budget-log budget.log --output counts/

Every cell of every level is released (zeros included): the total, each level of the hierarchy, and
the hierarchy's variable itself, each crossed with the other variables.  Each level is measured once
with exact noise (the budget split over the levels by --split, top first, equal by default); the
measurements are then made consistent by least squares over the hierarchy and turned into
non-negative integers that add up at every level, top-down, without the rounding moving any total
above it.  The a priori error of every level (from the noise scales alone) is in
dp_publication.json.

What is public: the hierarchy (its leaves are the categories of its variable) and the domain of the
other variables, both given by you; the release folder may be published whole.  The custodian's
record (input hashes, seed, records left out, the release's observed error) is written beside it.
"""


def register(sub: argparse._SubParsersAction) -> None:
    from .._catalog import OUTSIDE_CHOICES

    p = sub.add_parser(
        "dp-publish",
        help="differentially private counts at every level of a hierarchy, consistent non-negative integers",
        description="Release counts at every level of a geography (or any nested hierarchy) crossed with other "
        "variables, with differential privacy: noise at every level, then least squares and integers that add up.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("input", metavar="INPUT", help="CSV or Parquet file: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument("--hierarchy", required=True, metavar="VAR=FILE",
                   help="the nested levels of one variable (code,parent CSV or .hrc); its leaves are VAR's public categories")
    p.add_argument("--domain", metavar="FILE",
                   help="public categories of the other variables: JSON {variable: [categories]} or CSV variable,category")
    p.add_argument("--outside", choices=OUTSIDE_CHOICES, default="error",
                   help="records with a category outside the domain or hierarchy: an error (default) or left out")
    p.add_argument("--epsilon", required=True, type=float, help="privacy loss of the whole release")
    p.add_argument("--delta", type=float, default=None,
                   help="delta of the discrete Gaussian's (epsilon, delta) statement (default: the ledger's, else 1e-9)")
    p.add_argument("--noise", choices=("discrete-gaussian", "geometric"), default="discrete-gaussian",
                   help="noise at every level (default discrete-gaussian, zCDP; geometric is pure epsilon-DP)")
    p.add_argument("--split", metavar="W,W,...", default=None,
                   help="budget share of each level, top first: total, the hierarchy's levels, the variable (default equal)")
    p.add_argument("--relation", choices=("replace-one", "add-remove"), default=None,
                   help="neighbour relation the budget is stated under (default: the ledger's, else replace-one)")
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="DIR", help="folder for the release (publishable whole)")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv", help="output file format (default csv)")
    add_output_options(p)
    p.add_argument("--budget-log", metavar="LOG", help="privacy budget ledger (see 'cellsafe budget') to charge")
    p.add_argument("--quiet", action="store_true", help="no summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..dp import plan_hierarchical_counts
    from ..exceptions import InvalidArgumentError
    from ..table import Domain
    from ._publish import read_hierarchy

    if not (0 < args.epsilon < float("inf")):
        raise InvalidArgumentError(f"--epsilon must be a finite positive number. Got {args.epsilon}.")
    variable, hierarchy = read_hierarchy(args.hierarchy)
    names = parse_list(args.variables)
    if variable not in names:
        raise InvalidArgumentError(f"--hierarchy names {variable!r}, which is not among --variables {names}; add it.")
    others = [n for n in names if n != variable]
    if others and args.domain is None:
        raise InvalidArgumentError(
            f"dp-publish needs --domain FILE with the public categories of {others}: categories read from the "
            "confidential records would disclose which ones occur. Write them as JSON "
            '({"sex": ["F", "M"]}) or as a CSV with the header variable,category.'
        )
    domain = Domain.read(args.domain) if args.domain else None
    split = [float(x) for x in parse_list(args.split)] if args.split else None
    seed, accountant, relation = dp_seed_and_ledger(args)
    delta = args.delta
    if delta is None and accountant is not None and accountant.delta and args.noise == "discrete-gaussian":
        delta = accountant.delta
    count = resolve_count(args.input, names, args.count)
    plan = plan_hierarchical_counts(
        args.input, domain, hierarchy, variable=variable, variables=others, epsilon=args.epsilon, delta=delta,
        noise=args.noise, split=split, relation=relation, count=count, outside=args.outside,
    )
    for line in plan.notices:
        note(line)
    outputs = outputs_from_args(args, [args.input, args.domain], seed=seed, public=True)
    with outputs:  # the folder appears, with its manifest, only when everything is written
        out_dir = Path(outputs.folder(args.output))
        t0 = time.perf_counter()
        reserve = (
            accountant.reserve(plan.loss, label=f"dp-publish {Path(args.input).name}", mechanism="topdown",
                               output=str(Path(args.output).resolve()))
            if accountant is not None else nullcontext()
        )
        with reserve as release_record:  # the ledger stays locked until the release is written
            release = plan.release(rng="secure" if seed is None else seed)
            outputs.write_frame(release.release_frame(), out_dir / f"counts.{args.format}")
            description = dict(plan.description)
            description["ledger"] = None if release_record is None else release_record.anchor
            outputs.write_json(description, out_dir / "dp_publication.json")
            outputs.manifest.public_extra.update(description)
            outputs.manifest.extra["custodian"] = {
                "not_for_publication": "the input hashes, command line, seed and these facts about the confidential data",
                **plan.observed_errors(release),
            }
            outputs.commit()
        if not args.quiet:
            print(f"{plan.summary()}; wrote {release.publication.n_published:,} cells to {args.output} "
                  f"in {time.perf_counter() - t0:.2f} s")
    return 0
