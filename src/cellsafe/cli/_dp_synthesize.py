"""``cellsafe dp-synthesize``: a differentially private synthesis, written as a folder safe to publish whole."""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from .._catalog import OUTSIDE_CHOICES
from ._common import (
    EXAMPLES_FORMATTER,
    add_input_options,
    add_output_options,
    add_seed_option,
    dp_seed_and_ledger,
    note,
    outputs_from_args,
    parse_list,
    progress_from_args,
    resolve_count,
)

_EXAMPLES = """\
examples:
  # deaths by county with public county populations: Poisson-gamma smoothed to the national rate,
  # epsilon 2 for the whole release of 5 implicates (0.4 each); counties.json lists every county
  cellsafe dp-synthesize deaths.csv --variables county --count deaths --population pop \\
      --population-file population.csv --domain counties.json --mechanism poisson-gamma --epsilon 2 -m 5 \\
      --output dp/

  # smoothed to state rates; the state totals are themselves released with epsilon 0.5
  cellsafe dp-synthesize deaths.csv --variables state,county --count deaths --population pop \\
      --domain geography.csv --mechanism poisson-gamma --epsilon 2 --prior regional:state \\
      --prior-epsilon 0.5 --output dp/

  # the multinomial-Dirichlet synthesizer on microdata, charged to a privacy budget ledger;
  # records outside the domain are left out, so the total is released with noise (epsilon 0.1)
  cellsafe budget budget.jsonl --create --epsilon 5
  cellsafe dp-synthesize people.parquet --variables sex,age --domain domain.json --outside drop \\
      --total-epsilon 0.1 --mechanism multinomial-dirichlet --epsilon 1 --budget-log budget.jsonl --output dp/

  # one release per region whose sizes are public (region.json {"N": 375, "S": 625}): no record changes
  # region, so the regions compose in parallel (epsilon 1 in all); the domain lists region's categories
  cellsafe dp-synthesize people.parquet --variables sex,age --domain domain.json --part region=N \\
      --part-sizes region.json --mechanism multinomial-dirichlet --epsilon 1 --budget-log budget.jsonl --output dp_N/

What is public and what is protected: the domain (--domain: every category of every variable, given by you,
never read from the records), the total, and the support (the domain, or the cells of a public population
file) are public; the counts of the cells are protected with epsilon-differential privacy under the ledger's
neighbour relation (--relation, default replace-one: one record replaced). The total of a part of the records,
or of the records left in the domain by --outside drop, is not public: declare it (--part-sizes, --public-total)
or release it with noise (--total-epsilon). A domain file is JSON ({"sex": ["F", "M"]}) or CSV variable,category.

The output folder may be published whole: synthetic_1.csv ... synthetic_M.csv (the variables and 'count',
non-zero cells), dp_synthesis.json (the public description: mechanism, epsilon per implicate and in total,
relation, how the total was released, the domain's sha256, the ledger anchor) and manifest.json (the public
manifest: the files' sha256, no input hash, no seed, no command line). The custodian's record (input hashes,
seed, command line, records left out) is written beside the folder as DIR.custodian.json: never publish it.

Randomness comes from the operating system's cryptographic generator; --seed makes the release reproducible,
and anyone who knows the seed can then recompute the noise (a warning says so).  --epsilon is the budget of
the implicates together (M implicates share it equally); --total-epsilon and --prior-epsilon are added.  With
--budget-log the ledger is locked from the budget check until the release is written.
"""

_NO_DOMAIN = (
    "dp-synthesize needs --domain FILE, the public categories of every variable. Categories read from the "
    "confidential records would disclose which ones occur: one record with a category nobody else has would "
    "add it to the release, a privacy loss no epsilon covers. Write the categories as JSON "
    '({"var": ["cat1", "cat2"]}) or as a CSV with the header variable,category.'
)

_FIXED_TOTAL = ("poisson-gamma", "multinomial-dirichlet")


def _marginal_hook() -> Any:
    """The marginal synthesizers' options and plan (cli/_dp_marginal.py), when installed."""
    if importlib.util.find_spec(f"{__package__}._dp_marginal") is None:
        return None
    return importlib.import_module(f"{__package__}._dp_marginal")


def register(sub: argparse._SubParsersAction) -> None:
    hook = _marginal_hook()
    p = sub.add_parser(
        "dp-synthesize",
        help="differentially private synthesis (fixed-total synthesizers" + (", MST, AIM)" if hook else ")"),
        description="Release synthetic tables with differential privacy on a public domain of categories, as a "
        "folder that may be published whole; the custodian's provenance is written beside it.",
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
        help="records with a category outside the domain: an error (default) or left out (the total is then not "
        "public: --total-epsilon or --public-total)",
    )
    p.add_argument("--mechanism", required=True, choices=_FIXED_TOTAL + ("dirichlet",) + (("mst", "aim") if hook else ()),
                   help="the synthesizer (dirichlet is multinomial-dirichlet)")
    p.add_argument("--epsilon", required=True, type=float, help="privacy loss of the implicates together")
    p.add_argument("--delta", type=float, default=None,
                   help="delta of zCDP mechanisms' (epsilon, delta) statement (default: the ledger's delta)")
    p.add_argument("--relation", choices=("replace-one", "add-remove"), default=None,
                   help="neighbour relation of the guarantee (default: the ledger's, else replace-one)")
    p.add_argument("--total-epsilon", type=float, default=None,
                   help="release the total with geometric noise at this epsilon (added to the cost); needed for "
                   "a part without public sizes, --outside drop, and add-remove neighbours")
    p.add_argument("--public-total", type=int, default=None,
                   help="declare the number of records inside the domain public (with --outside drop); must be true")
    p.add_argument(
        "--population",
        metavar="COL",
        help="population-size column (poisson-gamma): of --population-file when given, otherwise of INPUT, which "
        "must then list every cell of the domain",
    )
    p.add_argument("--population-file", metavar="FILE",
                   help="public populations, one row per cell (the variables and --population): the support")
    p.add_argument(
        "--prior",
        default=None,
        metavar="national|regional:VAR",
        help="Poisson-gamma prior rates: the national rate (default) or the rate of each category of VAR",
    )
    p.add_argument("--prior-epsilon", type=float, default=None,
                   help="with --prior regional:VAR, release the regional totals with this epsilon (added to the cost)")
    p.add_argument("--prior-file", metavar="FILE",
                   help="with --prior regional:VAR, public rates: JSON {category: rate} or CSV category,rate")
    p.add_argument("--part", metavar="VAR=VALUE", help="synthesize only the records with VAR=VALUE (VAR in the domain)")
    p.add_argument("--part-sizes", metavar="FILE",
                   help="public size of every part: JSON {value: size} or CSV value,size; parts then compose in "
                   "parallel (no record may change part)")
    p.add_argument("-m", type=int, default=1, dest="m", help="number of synthetic tables (implicates), default 1")
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="DIR", help="folder for the release (publishable whole)")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv", help="output file format (default csv)")
    add_output_options(p)
    p.add_argument("--budget-log", metavar="LOG", help="privacy budget ledger (see 'cellsafe budget') to charge")
    p.add_argument("--quiet", action="store_true", help="no summary")
    if hook is not None:
        hook.add_marginal_options(p)
    p.set_defaults(func=run)


def _part(text: str | None) -> tuple[str, str] | None:
    from ..exceptions import InvalidArgumentError

    if text is None:
        return None
    var, sep, value = text.partition("=")
    if not sep or not var.strip() or not value:
        raise InvalidArgumentError(f"--part must be VAR=VALUE, for example region=North. Got {text!r}.")
    return var.strip(), value


def _mapping(path: str | None, what: str, keys: tuple[str, str]) -> dict[str, Any] | None:
    """A public mapping file: JSON {key: number} or a CSV with a header of two columns (key, number)."""
    import csv

    from ..exceptions import DataError

    if path is None:
        return None
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {what} {str(p)!r}: {exc}.") from None
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise DataError(f"{what} {str(p)!r} is not JSON: {exc}.") from None
        if not isinstance(data, dict):
            raise DataError(f"{what} {str(p)!r} must be a JSON object {{{keys[0]}: {keys[1]}}}.")
        return {str(k): v for k, v in data.items()}
    rows = list(csv.reader(text.splitlines()))
    if not rows or len(rows[0]) != 2:
        raise DataError(f"{what} {str(p)!r} must be a CSV with a header of two columns ({keys[0]},{keys[1]}).")
    out: dict[str, Any] = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != 2:
            raise DataError(f"{what} {str(p)!r}, line {line}: expected 2 fields. Got {len(row)}.")
        try:
            out[row[0]] = float(row[1]) if keys[1] == "rate" else int(row[1])
        except ValueError:
            raise DataError(f"{what} {str(p)!r}, line {line}: {row[1]!r} is not a {keys[1]}.") from None
    return out


def _check(args: argparse.Namespace) -> None:
    from ..exceptions import InvalidArgumentError

    if args.mechanism == "dirichlet":
        args.mechanism = "multinomial-dirichlet"
    if not (0 < args.epsilon < float("inf")):
        raise InvalidArgumentError(f"--epsilon must be a finite positive number. Got {args.epsilon}.")
    if args.m < 1:
        raise InvalidArgumentError(f"-m must be at least 1. Got {args.m}.")
    for opt in ("prior_epsilon", "total_epsilon"):
        v = getattr(args, opt)
        if v is not None and not (0 < v < float("inf")):
            raise InvalidArgumentError(f"--{opt.replace('_', '-')} must be a finite positive number. Got {v}.")
    if args.mechanism == "multinomial-dirichlet" and (args.population or args.prior is not None or args.prior_file):
        raise InvalidArgumentError("--population and --prior apply to --mechanism poisson-gamma only.")
    prior = (args.prior or "national").lower()
    regional = prior.startswith("regional:")
    if prior != "national" and not regional:
        raise InvalidArgumentError(f"--prior must be 'national' or 'regional:VAR'. Got {args.prior!r}.")
    if (args.prior_epsilon is not None or args.prior_file) and not regional:
        raise InvalidArgumentError("--prior-epsilon and --prior-file apply to --prior regional:VAR only.")
    if args.population_file and not args.population:
        raise InvalidArgumentError("--population-file needs --population COL, its population column.")
    if args.population and not args.count and not args.population_file:
        raise InvalidArgumentError("--population needs --count: INPUT must be a frequency table with one row per cell.")
    _part(args.part)
    if args.domain is None:
        raise InvalidArgumentError(_NO_DOMAIN)


def run(args: argparse.Namespace) -> int:
    from .._random import as_seed_sequence
    from ..table import Domain

    _check(args)
    domain = Domain.read(args.domain)
    seed, accountant, relation = dp_seed_and_ledger(args)
    delta = args.delta if args.delta is not None else (accountant.delta if accountant is not None and accountant.delta else None)
    files = [args.input, args.domain, args.population_file, args.part_sizes, args.prior_file]
    outputs = outputs_from_args(args, files, seed=seed, public=True)
    with outputs:  # the folder appears, with its manifest, only when every table is written
        out_dir = outputs.folder(args.output)
        root = as_seed_sequence("secure" if seed is None else seed)
        plan_rng, sample_rng = root.spawn(2)
        t0 = time.perf_counter()
        hook = _marginal_hook()
        if args.mechanism in ("mst", "aim") and hook is not None:
            plan = hook.marginal_plan(args, domain, relation, delta)
        else:
            plan = _plan(args, domain, relation, plan_rng)
        for line in plan.notices:
            note(line)
        part = _part(args.part)
        implicates = f"{args.m} implicate{'s' if args.m != 1 else ''}"
        reserve = (
            accountant.reserve(
                plan.loss,
                label=f"dp-synthesize {Path(args.input).name} ({implicates})",
                mechanism=args.mechanism,
                partition=None if part is None else part[0],
                part=None if part is None else part[1],
                public_parts=bool(getattr(plan, "public_parts", False)),
                output=str(Path(args.output).resolve()),
            )
            if accountant is not None
            else nullcontext()
        )
        with reserve as release:  # the ledger stays locked until the release is written; a failure withdraws it
            _write(args, plan, outputs, out_dir, sample_rng, release)
        if not args.quiet:
            said = plan.summary() if hasattr(plan, "summary") else f"{args.mechanism}: epsilon {plan.loss.epsilon:.4g} in total"
            print(f"{said}; wrote {implicates} to {args.output} in {time.perf_counter() - t0:.2f} s")
    return 0


def _plan(args: argparse.Namespace, domain: Any, relation: str, rng: Any) -> Any:
    from ..dp import plan_synthesis

    names = parse_list(args.variables)
    part = _part(args.part)
    count = args.count
    if not args.population or args.population_file:
        count = resolve_count(args.input, names + ([part[0]] if part else []), args.count)
    return plan_synthesis(
        args.input,
        domain,
        variables=names,
        mechanism=args.mechanism,
        epsilon=args.epsilon,
        m=args.m,
        count=count,
        outside=args.outside,
        relation=relation,
        public_total=args.public_total,
        total_epsilon=args.total_epsilon,
        part=part,
        part_sizes=_mapping(args.part_sizes, "the part sizes file", ("value", "size")),
        population=args.population,
        population_source=args.population_file,
        prior=args.prior or "national",
        prior_epsilon=args.prior_epsilon,
        prior_rates=_mapping(args.prior_file, "the prior rates file", ("category", "rate")),
        rng=rng,
    )


def _write(args: argparse.Namespace, plan: Any, outputs: Any, out_dir: Path, rng: Any, release: Any) -> None:
    """The implicates as drawn, the public description, the public manifest, the custodian's record."""
    from ..table import CountTable

    for i, syn in enumerate(plan.implicates(args.m, rng, progress_from_args(args)), start=1):
        frame = syn.to_frame() if isinstance(syn, CountTable) else syn
        outputs.write_frame(frame, Path(out_dir) / f"synthetic_{i}.{args.format}")
    description = dict(plan.description)
    description["ledger"] = None if release is None else release.anchor
    outputs.write_json(description, Path(out_dir) / "dp_synthesis.json")
    outputs.manifest.public_extra.update(description)
    synth = getattr(plan, "synthesizer", None)
    if synth is not None:
        outputs.manifest.set_mechanism(synth)
    outputs.manifest.extra["custodian"] = {
        "not_for_publication": "the input hashes, command line, seed and these facts about the confidential data",
        **getattr(plan, "custodian", {}),
    }
    outputs.commit()
