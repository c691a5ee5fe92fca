"""``cellsafe compare``: fair risk-utility comparison of published tables (001).

A thin command over :func:`cellsafe.metrics.compare_published`, which post-processes every
published table the same way (additivity restored by least squares when needed, expected inner
frequencies by IPF) before the Hellinger utility and the F-beta disclosure risk.
"""

from __future__ import annotations

import argparse
from ..exceptions import InvalidArgumentError
from ._common import EXAMPLES_FORMATTER, add_input_options, load_table, note, parse_list, print_json
from ._publish import hierarchies_from_args

_EXAMPLES = """\
examples:
  # compare a cell key perturbed and a small count rounded version of the same published cells
  cellsafe compare inner.csv --variables party,age,sex --count count --formula "party*age + party*sex" \\
      --published ckm=published_cell_key.csv --published scr=published_small_count_rounding.csv \\
      --sensitive party --keys age,sex --json

Each published file is in long format: the variables ('Total' where a cell aggregates) and 'count'
(empty for a suppressed cell).  JSON output per NAME: additive, hellinger_utility {published, restored},
risk {plain, know_yourself} with a, b, c and f_beta, restored and expected_inner cells.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare protected published tables by post-processing to expected inner frequencies",
        description="Restore additivity, fit expected inner frequencies, and measure Hellinger utility and "
        "F-beta disclosure risk of each published table against the original (001).",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("input", metavar="INNER", help="the original data: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument("--formula", required=True, metavar="F", help="the published crossings, e.g. 'a*b + a*c'")
    p.add_argument("--hierarchy", action="append", default=[], metavar="VAR=FILE[:LEVELS]",
                   help="hierarchy of a published variable, as for cellsafe publish (repeatable)")
    p.add_argument("--published", required=True, action="append", metavar="NAME=FILE",
                   help="a protected published table (repeat for several)")
    p.add_argument("--sensitive", required=True, metavar="VAR", help="the sensitive variable")
    p.add_argument("--keys", required=True, metavar="VAR,VAR", help="the quasi-identifiers")
    p.add_argument("--beta", type=float, default=0.5, help="F-beta weight of recall (default 0.5)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..io import provenance_notes, read_records
    from ..metrics import compare_published

    keys = parse_list(args.keys, "--keys")
    names = parse_list(args.variables)
    for v in [args.sensitive, *keys]:
        if v not in names:
            raise InvalidArgumentError(f"{v!r} (--sensitive/--keys) is not among --variables {names}.")
    pairs = []
    for item in args.published:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InvalidArgumentError(f"--published must be NAME=FILE. Got {item!r}.")
        pairs.append((name, path))
    if len({n for n, _ in pairs}) != len(pairs):
        raise InvalidArgumentError("--published names must be distinct.")
    table = load_table(args.input, args.variables, args.count)
    for text in provenance_notes([path for _, path in pairs]):
        note(text)
    hierarchies = hierarchies_from_args(args) or None
    results = {  # one code path with the library: the publication each file holds, as compare_published reads it
        name: compare_published(table, read_records(path), args.sensitive, keys, formula=args.formula,
                                hierarchies=hierarchies, beta=args.beta)
        for name, path in pairs
    }
    if args.json:
        print_json({name: r.to_dict() for name, r in results.items()})
        return 0
    for name, r in results.items():
        print(f"{name}: {r.summary()}")
    return 0
