"""``cellsafe publish --method suppress --table NAME:FORMULA[:VALUE] ... --earlier FILE``: linked tables as one system."""

from __future__ import annotations

import argparse
import re
from typing import Any

from ..exceptions import InvalidArgumentError

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def add_linked_options(group: Any) -> None:
    """--table and --earlier (in the cell suppression group)."""
    group.add_argument("--table", dest="tables", action="append", default=[], metavar="NAME:FORMULA[:VALUE]",
                       help="a table of a linked system (repeatable, instead of --formula): counts of FORMULA, or sums of "
                       "the column VALUE; the tables are protected together and --output is a folder with NAME.csv each")
    group.add_argument("--earlier", action="append", default=[], metavar="FILE",
                       help="a release published before from the same records (a cellsafe publish output, checked by "
                       "its manifest's sha256): what it published stays published, what it withheld stays withheld "
                       "(repeatable; with --table)")


def parse_table(spec: str, terms: set[str]) -> tuple[str, str, str | None]:
    """``NAME:FORMULA[:VALUE]`` as (name, formula, value).

    A formula may hold ':' (``a:b``); its terms are variables or hierarchy levels (``terms``), so a last part that is
    neither is the summed column.
    """
    parts = spec.split(":")
    if len(parts) < 2 or not parts[0].strip() or not ":".join(parts[1:]).strip():
        raise InvalidArgumentError(f"--table takes NAME:FORMULA[:VALUE], e.g. 'counts:region*nace'. Got {spec!r}.")
    name, rest = parts[0].strip(), [x.strip() for x in parts[1:]]
    if not _NAME.match(name):
        raise InvalidArgumentError(f"--table's NAME names a file: letters, digits, '_', '-' and '.' only. Got {name!r}.")
    value = None
    if len(rest) > 1 and re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", rest[-1]) and rest[-1] not in terms:
        value = rest.pop()
    return name, ":".join(rest), value


def publish_linked(args: argparse.Namespace, names: list[str], outputs: Any, secondary: dict[str, Any]) -> int:
    """Protect the --table tables (and --earlier releases) as one system; write NAME.csv each into the --output folder."""
    from ..io import read_records
    from ..mechanisms import CellSuppression, LinkedTable, protect_linked, read_earlier_release
    from ..metrics import audit_linked
    from ._common import progress_from_args
    from ._publish import hierarchies_from_args

    if args.formula or args.value or args.count or args.forced or args.hidden:
        raise InvalidArgumentError(
            "--table replaces --formula and --value (each table says its own) and needs microdata (no --count); "
            "--forced and --hidden do not apply to linked tables."
        )
    if args.method != "suppress":
        raise InvalidArgumentError("--table protects linked tables by cell suppression: give --method suppress.")
    hierarchies = hierarchies_from_args(args)
    terms = set(names) | {level for h in hierarchies.values() for level in h.levels}
    tables = [LinkedTable(*parse_table(s, terms)) for s in args.tables]
    if len({t.name for t in tables}) != len(tables):
        raise InvalidArgumentError("the --table names must differ (each is a file of --output).")
    folder = outputs.folder(args.output)
    values = {t.value for t in tables if t.value}
    earlier = []
    for path in args.earlier:
        columns = set(read_records(path).columns)
        value = next((v for v in sorted(values) if v in columns), None) if "count" not in columns else None
        earlier.append(read_earlier_release(path, value=value))
    rules = {"rules": args.rule} if args.rule else {}
    mech = CellSuppression(tables[0].formula, **rules, protect_zeros=bool(args.protect_zeros), **secondary)
    linked = protect_linked(mech, args.input, tables, variables=names, contributor=args.contributor,
                            hierarchies=hierarchies or None, earlier=earlier,
                            progress=progress_from_args(args))
    audit = audit_linked(linked)
    for t in tables:
        res = linked.tables[t.name]
        out = res.release_frame()
        outputs.write_frame(out, folder / f"{t.name}.csv")
    outputs.manifest.set_mechanism(mech)
    described = {f"{t.name}.csv": {"formula": t.formula, "value": t.value} for t in tables}
    for extra in (outputs.manifest.extra, outputs.manifest.public_extra):
        extra.update({"method": "suppress", "tables": described, "joint_audit": "passed" if audit.passed else audit.problems()})
    if not args.quiet:
        verdict = "passed" if audit.passed else "FAILED: " + "; ".join(audit.problems())
        print(f"{len(tables)} linked table(s), {len(earlier)} earlier release(s); joint audit {verdict}; wrote "
              f"{', '.join(t.name + '.csv' for t in tables)} to {args.output} (and its manifest)")
    return 0 if audit.passed else 1
