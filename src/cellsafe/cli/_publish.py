"""``cellsafe publish``: published cells of a formula, protected by the cell key method or small count rounding."""

from __future__ import annotations

import argparse

from ..exceptions import InvalidArgumentError
from ..io import write_frame
from ..mechanisms.cellkey import CellKeyMethod
from ..mechanisms.ptable import PTable
from ..mechanisms.rounding import SmallCountRounding
from ..published import Publication
from ._common import EXAMPLES_FORMATTER, add_input_options, add_seed_option, load_table, parse_list, seed_from_args

_EXAMPLES = """\
examples:
  # cell key method with the ptable of 001 (D=5, V=3, js=2), keys drawn from a seed
  cellsafe publish people.csv --variables party,age,sex --formula "party*age + party*sex" \\
      --method ckm --D 5 --V 3 --js 2 --seed 1 --output published.csv

  # the ONS convention: integer record keys in a column, their 10-5 ptable, threshold 10
  cellsafe publish people.parquet --variables region,age,sex --formula "region:age:sex - 1" \\
      --method ckm --ptable ptable_10_5_rule.csv --record-key record_key --output ons.csv

  # small count rounding to base 3 of a frequency table
  cellsafe publish table.csv --variables party,age,sex --count n --formula "party*age + party*sex" \\
      --method scr --base 3 --seed 1 --output rounded.csv

Writes the published cells in long format: the variables ('Total' where a cell aggregates) and 'count'
(empty where the cell key method suppressed a cell).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish",
        help="protect the published cells of a formula (cell key method or small count rounding)",
        description="Build the published cells of a formula (totals, subtotals, crossings) and protect them "
        "with the cell key method or small count rounding (001 section 2).",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("input", metavar="INPUT", help="CSV or Parquet file: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument("--formula", required=True, metavar="F", help="published crossings in R notation, e.g. 'a*b + a*c'")
    p.add_argument("--method", required=True, choices=("ckm", "scr"), help="cell key method or small count rounding")
    g = p.add_argument_group("cell key method")
    g.add_argument("--D", type=int, default=None, metavar="D", help="ptable: largest deviation (default 5)")
    g.add_argument("--V", type=float, default=None, metavar="V", help="ptable: noise variance (default 3)")
    g.add_argument("--js", type=int, default=None, metavar="JS", help="ptable: released 1..JS forbidden (default 2)")
    g.add_argument("--ptable", metavar="FILE", help="read the ptable (sdcTools or ONS layout) instead of generating it")
    g.add_argument("--record-key", metavar="COL", help="column of record keys in INPUT (otherwise drawn from --seed)")
    g.add_argument("--threshold", type=int, default=None, metavar="T",
                   help="suppress released counts below T (default 10 for an ONS ptable, else 0)")
    r = p.add_argument_group("small count rounding")
    r.add_argument("--base", type=int, default=3, help="rounding base (default 3)")
    r.add_argument("--zeros", action="store_true",
                   help="also round the empty combinations of the variables (R's extend0; default: non-zero cells only)")
    add_seed_option(p)
    p.add_argument("--output", required=True, metavar="FILE", help="output file (.csv or .parquet)")
    p.add_argument("--quiet", action="store_true", help="no summary line")
    p.set_defaults(func=run)


def _ptable(args: argparse.Namespace) -> PTable:
    generated = any(x is not None for x in (args.D, args.V, args.js))
    if args.ptable and generated:
        raise InvalidArgumentError("give either --ptable FILE or --D/--V/--js, not both.")
    if args.ptable:
        return PTable.read(args.ptable)
    return PTable.generate(
        D=5 if args.D is None else args.D, V=3.0 if args.V is None else args.V, js=2 if args.js is None else args.js
    )


def run(args: argparse.Namespace) -> int:
    names = parse_list(args.variables)
    fmt = "parquet" if str(args.output).lower().endswith(".parquet") else "csv"
    rng = seed_from_args(args)
    if args.method == "ckm":
        if args.zeros:
            raise InvalidArgumentError("--zeros applies to --method scr; the cell key method publishes empty cells already.")
        ckm = CellKeyMethod(_ptable(args), args.formula, threshold=args.threshold)
        if args.count:
            if args.record_key:
                raise InvalidArgumentError("--record-key needs microdata (one row per record); drop --count.")
            res = ckm.perturb(load_table(args.input, args.variables, args.count), rng=rng)
        else:
            # DuckDB counts the records and sums their keys straight from the file (never loaded whole)
            res = ckm.perturb(args.input, variables=names, record_key=args.record_key, rng=rng)
    else:
        if any(x is not None for x in (args.D, args.V, args.js, args.ptable, args.record_key, args.threshold)):
            raise InvalidArgumentError("--D, --V, --js, --ptable, --record-key and --threshold apply to --method ckm only.")
        table = load_table(args.input, args.variables, args.count)
        publication = Publication.from_formula(table, args.formula, zeros=True) if args.zeros else args.formula
        [res] = SmallCountRounding(publication, base=args.base).sample(table, rng=rng)
    out = res.to_frame()
    summary = f"{res!r}"
    path = write_frame(out, args.output, fmt)
    if not args.quiet:
        print(f"{summary}; wrote {len(out):,} published cells to {path}")
    return 0
