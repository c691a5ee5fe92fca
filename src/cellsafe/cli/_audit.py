"""``cellsafe audit``: the interval an attacker can compute for every withheld cell of a published table."""

from __future__ import annotations

import argparse

import numpy as np

from ..io import read_records, write_frame
from ..metrics import audit_suppression
from ..published import Publication, PublishedTable
from ._common import EXAMPLES_FORMATTER, add_input_options, load_table, parse_list, print_json
from ._publish import hierarchies_from_args

_EXAMPLES = """\
examples:
  cellsafe publish people.csv --variables geo,sex,age --hierarchy geo=geo.hrc:region,district \\
      --formula "region*sex + district*age" --method suppress --rule 'freq<=3' --output suppressed.csv
  cellsafe audit suppressed.csv people.csv --variables geo,sex,age --hierarchy geo=geo.hrc:region,district \\
      --formula "region*sex + district*age" --output intervals.csv

Reads the published cells (empty count = withheld), rebuilds the publication from the original data, and
solves two linear programs per withheld cell (HiGHS) over non-negative inner cells.  Prints how many cells are
unsafe; exit status 1 when some are.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit",
        help="intervals of the withheld cells of a published table (is the suppression safe?)",
        description="For every withheld (empty) cell of a published table, the interval an attacker can compute from "
        "the published cells and non-negativity, by linear programming; flags cells narrower than required.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("published", metavar="PUBLISHED", help="the published cells (output of cellsafe publish)")
    p.add_argument("input", metavar="INPUT", help="the original data: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument("--formula", required=True, metavar="F", help="the publication's formula")
    p.add_argument("--hierarchy", action="append", default=[], metavar="VAR=FILE[:LEVELS]",
                   help="hierarchy of a variable, as for cellsafe publish (repeatable)")
    p.add_argument("--column", default="count", metavar="COL", help="the published value column (default 'count')")
    p.add_argument("--required", type=float, default=0.0, metavar="W",
                   help="protection each withheld cell needs on both sides (default 0: not exact)")
    p.add_argument("--output", metavar="FILE", help="write the intervals (.csv or .parquet)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    parse_list(args.variables)
    table = load_table(args.input, args.variables, args.count)
    hierarchies = hierarchies_from_args(args)
    published = read_records(args.published)
    pub = Publication.from_formula(table, args.formula, hierarchies=hierarchies or None, zeros=False)
    released = pub.align(published, count=args.column)
    status = None
    if "suppression" in published.columns:
        status = np.full(pub.n_published, "", dtype=object)
        mine = pub.align(published.assign(__s=published["suppression"].fillna("").map({"": 0, "primary": 1, "secondary": 2}).fillna(0)), count="__s")
        status[mine == 1] = "primary"
        status[mine == 2] = "secondary"
    release = PublishedTable(
        publication=pub, original=pub.aggregate(table), released=released, method="file", mechanism=str(args.published),
        suppression=status,
    )
    audit = audit_suppression(release, required=args.required)
    if args.output:
        write_frame(audit.to_frame(), args.output, "parquet" if str(args.output).lower().endswith(".parquet") else "csv")
    if args.json:
        print_json(audit.to_dict())
    else:
        flag = "passed" if audit.passed else f"FAILED: {audit.n_unsafe} cell(s) narrower than required"
        print(f"{audit.cells.shape[0]:,} withheld cell(s) audited; {flag}")
    return 0 if audit.passed else 1
