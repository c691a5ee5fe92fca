"""``cellsafe audit``: the interval an attacker can compute for every withheld cell of a published table."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..exceptions import DataError, InvalidArgumentError
from ._common import add_allow_long_option, EXAMPLES_FORMATTER, add_input_options, add_output_options, load_table, note, outputs_from_args, parse_list, print_json
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
  # linked tables (the folder publish --table wrote) and the release published before them, read back together
  cellsafe audit linked firms.parquet --variables nace,region,size --contributor firm_id --earlier last/regions.csv

Reads the published cells (empty count = withheld), rebuilds the publication from the original data, and computes
what a reader of the whole file can: every withheld cell's interval over non-negative inner cells (HiGHS, one model
shared by all the programs), with what the listing reveals (--list nonzero: each listed cell at least 1).  The rules
(--rule, default the ones the release's manifest records) say what each sensitive cell needs: freq<=T an upper bound
above T; p%: (p/100) x1 - (total - x1 - x2) and (n, k): (100/k) times the n largest - total on both sides (the lower
side at most down to 0).  Fails (exit status 1) when a withheld cell misses that or is computable exactly, a sum of
withheld primaries is derivable within the rule, a contributor alone in a withheld cell (the record of a count of 1)
narrows another's primary, a cell the file marks withheld shows its value, or a sensitive cell is published.
With --earlier FILE, or a linked release's folder as PUBLISHED, the files are audited as one system (each file's
formula, value and listing from its manifest, the files checked by their sha256): a cell any of them shows is
published, and what one file withholds must stay protected against all of them.
Without rules (no --rule, no --required, and no manifest listing the file, as for another tool's output) the audit is
refused (exit status 2): it could only say whether a cell is exact.  A file changed since its manifest recorded it is
audited as it is now, with a note.
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
    p.add_argument("--formula", metavar="F", help="the publication's formula (a linked release's folder records its own)")
    p.add_argument("--hierarchy", action="append", default=[], metavar="VAR=FILE[:LEVELS]",
                   help="hierarchy of a variable, as for cellsafe publish (repeatable)")
    p.add_argument("--column", default=None, metavar="COL",
                   help="the published value column (default 'count', or the --value column)")
    p.add_argument("--required", type=float, default=0.0, metavar="W",
                   help="instead of the rules: the protection each withheld cell needs on both sides")
    p.add_argument("--list", choices=("frame", "nonzero"), default=None, dest="listing",
                   help="which cells the release lists (default: what its manifest says, else frame); with nonzero "
                   "every listed withheld cell is at least 1")
    m = p.add_argument_group("magnitude tables")
    m.add_argument("--value", metavar="COL", help="the summed column (INPUT is microdata); published cells hold its sums")
    m.add_argument("--contributor", metavar="COL", help="contributor id (holdings), as given to cellsafe publish")
    m.add_argument("--rule", action="append", default=[], metavar="RULE",
                   help="primary rule whose protection the sensitive cells need: 'p%%=15', 'nk(1,85)', 'freq<=2' "
                   "(repeatable; default: the rules the release's manifest records)")
    linked = p.add_argument_group("linked tables and earlier releases")
    linked.add_argument("--earlier", action="append", default=[], metavar="FILE",
                        help="a release published before from the same records (a cellsafe publish output, checked by its "
                        "manifest's sha256), audited together with PUBLISHED (repeatable); PUBLISHED may also be the "
                        "folder of a linked release (publish --table), whose tables are audited together")
    p.add_argument("--output", metavar="FILE", help="write the intervals (.csv, .parquet or .json) and its manifest")
    add_output_options(p)
    add_allow_long_option(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def _made_with(path: str) -> dict:
    """The suppression parameters the release's manifest records (empty without a manifest)."""
    from ..io import find_manifest

    found = find_manifest(path)
    if found is None:
        return {}
    mech = found[1].get("mechanism") or {}
    return mech.get("parameters") or {} if mech.get("class") == "CellSuppression" else {}


def _rules(args: argparse.Namespace, made: dict) -> list[str]:
    """The rules the audit judges by: --rule, else the manifest's; refused when neither they nor --required are given."""
    rules = args.rule or list(made.get("rules") or [])
    if not rules and not args.required:
        # without what each withheld cell needs, "passed" would only say that no cell is exact
        raise InvalidArgumentError(
            f"the audit needs the rules {args.published!r} was protected by, and no manifest beside it records them: give "
            "them with --rule (for example --rule 'freq<=3', or 'p%=15' with --value), or the protection every "
            "withheld cell needs with --required W."
        )
    return rules


def run(args: argparse.Namespace) -> int:
    # PUBLISHED, INPUT and the hierarchy files are inputs: --output is checked (and locked) before any work
    with outputs_from_args(args) as outputs:
        target = outputs.file(args.output) if args.output else None
        if args.earlier or Path(args.published).is_dir():
            return _audit_together(args, outputs, target)
        if not args.formula:
            raise InvalidArgumentError("audit needs --formula F, the formula the release was published with.")
        return _audit(args, outputs, target)


def _audit_together(args: argparse.Namespace, outputs, target) -> int:  # type: ignore[no-untyped-def]
    """A linked release's folder and/or earlier releases: every file read back, one joint audit."""
    import pandas as pd

    from ..io import MANIFEST_NAME
    from ..mechanisms import read_earlier_release
    from ..metrics import audit_releases

    if args.formula or args.count or args.column or args.listing:
        raise InvalidArgumentError(
            "a joint audit reads each file's formula, value and listing from its manifest: drop --formula, --count, "
            "--column and --list (INPUT is the records)."
        )
    folder = Path(args.published)
    if folder.is_dir():
        manifest = folder / MANIFEST_NAME
        try:
            tables = (json.loads(manifest.read_text()).get("details") or {}).get("tables") or {}
        except (OSError, ValueError):
            tables = {}
        if not tables:
            raise InvalidArgumentError(
                f"{args.published!r} is a folder without the manifest of a linked release (cellsafe publish --table): "
                "give a published file, or the folder publish --table wrote."
            )
        paths = [folder / name for name in tables] + [Path(e) for e in args.earlier]
    else:
        paths = [folder] + [Path(e) for e in args.earlier]
    releases = [read_earlier_release(p) for p in paths]
    made = _made_with(str(paths[0]))
    rules = _rules(args, made)
    audit = audit_releases(releases, args.input, rules=rules, variables=parse_list(args.variables),
                           contributor=args.contributor, hierarchies=hierarchies_from_args(args) or None,
                           protect_zeros=bool(made.get("protect_zeros", False)),
                           min_width=float(made.get("min_width") or 0.0), required=args.required or None)
    if target is not None:
        frames = [a.to_frame().assign(measure=m) for m, a in audit.audits.items()]
        outputs.write_frame(pd.concat(frames, ignore_index=True), target)
    if args.json:
        print_json(audit.to_dict())
    else:
        n = sum(a.cells.shape[0] for a in audit.audits.values())
        flag = "FAILED: " + "; ".join(audit.problems()) if not audit.passed else "passed"
        print(f"{len(releases)} release(s) audited together, {n:,} withheld cell(s); {flag}")
    return 0 if audit.passed else 1


def _audit(args: argparse.Namespace, outputs, target) -> int:  # type: ignore[no-untyped-def]
    import dataclasses

    import numpy as np

    from ..io import provenance_notes, read_records
    from ..mechanisms import frame_magnitude, protection_requirements
    from ..metrics import audit_suppression
    from ..published import Publication, PublishedTable, magnitude_table

    names = parse_list(args.variables)
    hierarchies = hierarchies_from_args(args)
    published = read_records(args.published)
    made = _made_with(args.published)
    for text in provenance_notes([args.published]):
        note(text)  # a changed file is audited as it is now, by the rules the release was made with
    rules = _rules(args, made)
    listing = args.listing or made.get("list") or "frame"
    protect_zeros = bool(made.get("protect_zeros", False))
    min_width = float(made.get("min_width") or 0.0)
    if args.value:
        if args.count:
            raise InvalidArgumentError("--value needs microdata (one row per record); drop --count.")
        mt = magnitude_table(args.input, names, args.value, args.formula, contributor=args.contributor,
                             hierarchies=hierarchies or None)
        if listing == "frame":
            mt, _ = frame_magnitude(mt)
        pub, original, column = mt.publication, mt.values, args.column or args.value
        inner = mt.inner_values
        req = protection_requirements(rules, mt.n_contributors, mt.values, mt.top, protect_zeros=protect_zeros) if rules else None
        sole = None if mt.largest is None else np.where(mt.n_contributors == 1, mt.largest, -1)
    else:
        if args.contributor or args.rule and any("%" in r or "(" in r for r in args.rule):
            raise InvalidArgumentError("--contributor and the p% and (n, k) rules need --value (a magnitude table).")
        table = load_table(args.input, args.variables, args.count)
        pub = Publication.from_formula(table, args.formula, hierarchies=hierarchies or None, zeros=listing == "frame")
        original, column = pub.aggregate(table), args.column or "count"
        inner = pub.inner_counts(table)
        req = protection_requirements(rules, original, protect_zeros=protect_zeros, min_width=min_width) if rules else None
        sole = None
    listed = ~np.isnan(pub.align(published.assign(__listed=1.0), count="__listed"))
    if not listed.all():
        raise DataError(
            f"{args.published!r} lists {int(listed.sum()):,} of the {pub.n_published:,} cells the publication has with "
            f"--list {listing}; give the formula, hierarchies and --list the release was made with."
        )
    release = PublishedTable.from_frame(published, pub, original, column=column, mechanism=str(args.published))
    release = dataclasses.replace(release, listing=listing)
    audit = audit_suppression(release, requirements=req, required=args.required or None, list=listing, sole=sole, inner=inner)
    if target is not None:
        outputs.write_frame(audit.to_frame(), target)
    if args.json:
        print_json(audit.to_dict())
    else:
        flag = "FAILED: " + "; ".join(audit.problems()) if not audit.passed else "passed"
        scope = "" if audit.exact else " (intervals from the withheld cells' neighbourhood: a large system)"
        print(f"{audit.cells.shape[0]:,} withheld cell(s) audited{scope}; {flag}")
    return 0 if audit.passed else 1
