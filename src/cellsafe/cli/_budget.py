"""``cellsafe budget``: create or inspect a privacy budget audit log."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..exceptions import DataError, InvalidArgumentError
from ._common import EXAMPLES_FORMATTER, print_json

_EXAMPLES = """\
examples:
  # start a log with a total budget of epsilon 5 (and delta 1e-6)
  cellsafe budget budget.json --create --epsilon 5 --delta 1e-6

  # what has been released, and what is left
  cellsafe budget budget.json
  cellsafe budget budget.json --json

Releases are added by 'cellsafe dp-synthesize --budget-log LOG' or cellsafe.dp.PrivacyAccountant.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "budget",
        help="create or inspect a privacy budget log",
        description="Show the releases recorded in a privacy budget log, the budget spent (sequential "
        "composition on the same records, parallel on disjoint parts) and what remains.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("log", metavar="LOG", help="JSON audit log")
    p.add_argument("--create", action="store_true", help="start a new log (refused if LOG exists)")
    p.add_argument("--epsilon", type=float, help="total epsilon budget (with --create)")
    p.add_argument("--delta", type=float, default=0.0, help="total delta budget (with --create), default 0")
    p.add_argument("--json", action="store_true", help="print the log as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..dp import PrivacyAccountant

    path = Path(args.log)
    if args.create:
        if args.epsilon is None:
            raise InvalidArgumentError("--create needs --epsilon, the total budget.")
        if path.exists():
            raise DataError(f"{str(path)!r} already exists; inspect it without --create or choose another name.")
        acc = PrivacyAccountant(args.epsilon, args.delta)
        acc.save(path)
    else:
        acc = PrivacyAccountant.load(path, attach=False)
    if args.json:
        print_json(acc.to_dict())
        return 0
    print(acc.summary())
    return 0
