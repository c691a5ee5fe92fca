"""``cellsafe budget``: create, inspect, verify or upgrade a privacy budget ledger."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..exceptions import DataError, InvalidArgumentError
from ._common import EXAMPLES_FORMATTER, print_json

_EXAMPLES = """\
examples:
  # a ledger with a total budget of epsilon 5 (and delta 1e-6); releases are stated for one record replaced
  cellsafe budget budget.jsonl --create --epsilon 5 --delta 1e-6 --relation replace-one

  # zCDP accounting: every release must be zCDP, rho adds up, the total is stated as (epsilon, delta)
  cellsafe budget zbudget.jsonl --create --epsilon 1 --delta 1e-9 --accounting zcdp

  # what has been released, and what is left
  cellsafe budget budget.jsonl
  cellsafe budget budget.jsonl --json

  # check every release folder the ledger lists still carries its anchor, and a release folder against the ledger
  cellsafe budget budget.jsonl --verify dp/

  # a format-2 log of an earlier version, converted once (its hash chain is checked first)
  cellsafe budget budget.json --upgrade --relation replace-one

The ledger is JSON lines, append-only and hash-chained; its head is anchored in LOG.lock and in every
release's manifest, so a truncated, edited, replaced or downgraded log is refused with the line at fault.
Releases are added by 'cellsafe dp-synthesize --budget-log LOG' or cellsafe.dp.PrivacyAccountant.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "budget",
        help="create, inspect or verify a privacy budget ledger",
        description="Show the releases recorded in a privacy budget ledger, the budget spent (sequential "
        "composition on the same records, parallel on disjoint parts) and what remains; create a ledger with its "
        "neighbour relation and accounting; verify it against release folders.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("log", metavar="LOG", help="the ledger (JSON lines)")
    p.add_argument("--create", action="store_true", help="start a new ledger (refused if LOG exists)")
    p.add_argument("--epsilon", type=float, help="total epsilon budget (with --create)")
    p.add_argument("--delta", type=float, default=0.0, help="total delta budget (with --create), default 0")
    p.add_argument(
        "--relation",
        choices=("replace-one", "add-remove"),
        default=None,
        help="neighbour relation of every release (with --create, default replace-one; required with --upgrade)",
    )
    p.add_argument(
        "--accounting",
        choices=("approximate", "zcdp"),
        default="approximate",
        help="compose (epsilon, delta) (default) or rho of zCDP releases (with --create)",
    )
    p.add_argument("--verify", nargs="*", metavar="RELEASE_DIR", default=None,
                   help="check the release folders the ledger lists, and the folders given, against the ledger")
    p.add_argument("--upgrade", action="store_true", help="convert a format-2 log to the current format, once")
    p.add_argument("--anchor", metavar="RELEASE_DIR", help="restore a lost lock-file anchor from the latest release")
    p.add_argument("--json", action="store_true", help="print the ledger as JSON")
    p.set_defaults(func=run)


def _release_anchor(folder: str) -> dict:
    from ..exceptions import DataError

    path = Path(folder) / "manifest.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        raise DataError(f"no readable manifest at {str(path)!r}; give the folder of a release.") from None
    anchor = (data.get("details") or {}).get("ledger") or data.get("ledger")
    if anchor is None:
        raise DataError(f"{str(path)!r} records no ledger anchor: the release was not charged to a ledger.")
    return anchor


def run(args: argparse.Namespace) -> int:
    from ..dp import PrivacyAccountant

    path = Path(args.log)
    if args.create:
        if args.epsilon is None:
            raise InvalidArgumentError("--create needs --epsilon, the total budget.")
        acc = PrivacyAccountant.create(path, args.epsilon, args.delta, relation=args.relation or "replace-one",
                                       accounting=args.accounting)
    elif args.upgrade:
        if args.relation is None:
            raise InvalidArgumentError(
                "--upgrade needs --relation: the neighbour relation the old log's releases were stated under "
                "(replace-one for dp-synthesize releases)."
            )
        acc = PrivacyAccountant.upgrade(path, args.relation)
        print(f"upgraded {str(path)!r}; the old file is kept as {str(path) + '.format2'!r}.")
    elif args.anchor:
        acc = PrivacyAccountant.anchor_from(path, _release_anchor(args.anchor))
        print(f"the anchor of {str(path)!r} was restored from {args.anchor!r}.")
    else:
        acc = PrivacyAccountant.load(path, attach=False)
    if args.verify is not None:
        problems = acc.verify()
        for folder in args.verify:
            try:
                rel = acc.check_anchor(_release_anchor(folder), f"the release in {folder!r}")
                print(f"{folder}: release {rel.entry} of ledger {acc.ledger} ({rel.label}): ok")
            except DataError as exc:
                problems.append(str(exc))
        for p in problems:
            print(f"problem: {p}")
        if problems:
            raise DataError(f"{len(problems)} problem(s) found verifying {str(path)!r} (listed above).")
        print(f"verified: {len(acc.releases)} release(s) of ledger {acc.ledger}, head {acc.head[:16]}...")
        return 0
    if args.json:
        print_json(acc.to_dict())
        return 0
    print(acc.summary())
    return 0
