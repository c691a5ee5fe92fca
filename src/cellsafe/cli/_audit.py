"""``cellsafe audit``: the interval an attacker can compute for every withheld cell of a published table."""

from __future__ import annotations

import argparse


from ..exceptions import InvalidArgumentError
from ._common import add_allow_long_option, EXAMPLES_FORMATTER, add_input_options, add_output_options, load_table, outputs_from_args, parse_list, print_json
from ._publish import hierarchies_from_args

_EXAMPLES = """\
examples:
  cellsafe publish people.csv --variables geo,sex,age --hierarchy geo=geo.hrc:region,district \\
      --formula "region*sex + district*age" --method suppress --rule 'freq<=3' --output suppressed.csv
  cellsafe audit suppressed.csv people.csv --variables geo,sex,age --hierarchy geo=geo.hrc:region,district \\
      --formula "region*sex + district*age" --output intervals.csv
  # a magnitude table: the rules say which cells are sensitive and how wide their intervals must be
  cellsafe audit turnover.csv firms.parquet --variables nace,region --formula "nace*region" \\
      --value turnover --contributor firm_id --rule 'p%=15' --rule 'freq<=2'

Reads the published cells (empty count = withheld), rebuilds the publication from the original data, and
solves two linear programs per withheld cell (HiGHS) over non-negative inner cells.  Prints how many cells are
unsafe; exit status 1 when some are.  With --value (a magnitude table of sums) and --rule, each cell the rules make
sensitive needs the rule's protection on both sides (p%: (p/100) x1 - (total - x1 - x2); (n, k): (100/k) times
the n largest - total; the lower side at most down to 0), and a sensitive cell that is published is unsafe too.
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
    p.add_argument("--column", default=None, metavar="COL",
                   help="the published value column (default 'count', or the --value column)")
    p.add_argument("--required", type=float, default=0.0, metavar="W",
                   help="protection each withheld cell needs on both sides (default 0: not exact)")
    m = p.add_argument_group("magnitude tables")
    m.add_argument("--value", metavar="COL", help="the summed column (INPUT is microdata); published cells hold its sums")
    m.add_argument("--contributor", metavar="COL", help="contributor id (holdings), as given to cellsafe publish")
    m.add_argument("--rule", action="append", default=[], metavar="RULE",
                   help="primary rule whose protection the sensitive cells need: 'p%%=15', 'nk(1,85)', 'freq<=2' (repeatable)")
    p.add_argument("--output", metavar="FILE", help="write the intervals (.csv, .parquet or .json) and its manifest")
    add_output_options(p)
    add_allow_long_option(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # PUBLISHED, INPUT and the hierarchy files are inputs: --output is checked (and locked) before any work
    with outputs_from_args(args) as outputs:
        target = outputs.file(args.output) if args.output else None
        return _audit(args, outputs, target)


def _audit(args: argparse.Namespace, outputs, target) -> int:  # type: ignore[no-untyped-def]
    import numpy as np

    from ..io import read_records
    from ..mechanisms import primary_cells
    from ..metrics import audit_suppression
    from ..published import Publication, PublishedTable, magnitude_table

    names = parse_list(args.variables)
    hierarchies = hierarchies_from_args(args)
    published = read_records(args.published)
    if args.value:
        if args.count:
            raise InvalidArgumentError("--value needs microdata (one row per record); drop --count.")
        mt = magnitude_table(args.input, names, args.value, args.formula, contributor=args.contributor,
                             hierarchies=hierarchies or None)
        pub, original, column = mt.publication, mt.values, args.column or args.value
    else:
        if args.contributor or args.rule and any("%" in r or "(" in r for r in args.rule):
            raise InvalidArgumentError("--contributor and the p% and (n, k) rules need --value (a magnitude table).")
        table = load_table(args.input, args.variables, args.count)
        pub = Publication.from_formula(table, args.formula, hierarchies=hierarchies or None, zeros=False)
        original, column = pub.aggregate(table), args.column or "count"
    released = pub.align(published, count=column)
    status = None
    if "suppression" in published.columns:
        status = np.full(pub.n_published, "", dtype=object)
        mine = pub.align(published.assign(__s=published["suppression"].fillna("").map({"": 0, "primary": 1, "secondary": 2}).fillna(0)), count="__s")
        status[mine == 1] = "primary"
        status[mine == 2] = "secondary"
    release = PublishedTable(
        publication=pub, original=original, released=released, method="file", mechanism=str(args.published),
        suppression=status, measure=column,
    )
    required = np.full(pub.n_published, float(args.required))
    sensitive_published = 0
    if args.rule:
        freq = mt.n_contributors if args.value else original
        sensitive, need = primary_cells(args.rule, freq, mt.values if args.value else None, mt.top if args.value else None)
        required = np.maximum(required, np.where(sensitive, need, 0.0))
        sensitive_published = int(np.sum(sensitive & ~np.isnan(released)))
    # a magnitude table's inner sums let cells that need only a positive width skip the linear programs
    audit = audit_suppression(release, required=required, inner=mt.inner_values if args.value else None)
    if target is not None:
        outputs.write_frame(audit.to_frame(), target)
    passed = audit.passed and not sensitive_published
    if args.json:
        print_json({**audit.to_dict(), "n_sensitive_published": sensitive_published, "passed": passed})
    else:
        problems = [f"{audit.n_unsafe} cell(s) narrower than required"] if not audit.passed else []
        if sensitive_published:
            problems.append(f"{sensitive_published} cell(s) the rules make sensitive are published")
        flag = "FAILED: " + "; ".join(problems) if problems else "passed"
        print(f"{audit.cells.shape[0]:,} withheld cell(s) audited; {flag}")
    return 0 if passed else 1
