"""``cellsafe report``: one HTML dossier (and its JSON) a disclosure-review panel can sign off."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..exceptions import InvalidArgumentError
from ._common import EXAMPLES_FORMATTER, add_output_options, add_table_input, outputs_from_args, parse_counts, parse_float_list, parse_list, table_from_args
from ._options import Renamed
from ._publish import hierarchies_from_args

_EXAMPLES = """\
examples:
  # three candidate mechanisms, a priori only, judged against two targets
  cellsafe report pupils.parquet --variables area,ethnicity,sex,age,language --name "School census" \\
      --mechanism 'nbi:sigma=1' --mechanism 'ckm:D=5,V=3' --mechanism 'geometric:epsilon=1' \\
      --target 'tau4(1)<=0.4' --target 'hellinger>=0.9' --output report.html

  # a release written by 'cellsafe synthesize': empirical values beside the a priori ones
  cellsafe report pupils.parquet --variables area,ethnicity,sex,age,language \\
      --release synthetic/ --target 'tau4(1)<=0.4' --budget-log budget.json --output report.html

  # synthetic records from 'cellsafe synthesize-microdata': pMSE ratio, CI overlap, DiSCO and TCAP
  cellsafe report adult.csv --variables sex,race --release synth/ --keys age,sex,race \\
      --sensitive 'income>50K' --model 'income>50K ~ age + sex' --family binomial --output adult.html

  # published tables from 'cellsafe publish': F-beta risk and Hellinger utility, as cellsafe compare
  cellsafe report inner.csv --variables party,age,sex --count count --published ckm=published_ckm.csv \
      --formula 'party*age + party*sex' --sensitive party --keys age,sex --output pub.html

Writes the HTML file (figures inline as SVG, nothing fetched when opened; prints to A4), the same
content as JSON beside it (report.json), and the manifest of the run.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="a release report: data, mechanisms, a priori and empirical risk and utility, budget, provenance (HTML)",
        description="One self-contained HTML report (and its JSON) on candidate mechanisms (a priori) and released "
        "outputs (empirical beside a priori), with a verdict per mechanism against the targets given.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    add_table_input(p)
    p.add_argument("--mechanism", action="append", default=[], metavar="SPEC",
                   help="a candidate mechanism, e.g. 'nbi:sigma=1,alpha=0.01', 'ckm:D=5,V=3', 'geometric:epsilon=1' (repeat)")
    p.add_argument("--release", action="append", default=[], metavar="DIR",
                   help="a folder of released outputs with its manifest (repeat)")
    p.add_argument("--target", action="append", default=[], metavar="T",
                   help="a target such as 'tau4(1)<=0.4', 'hellinger>=0.9', 'within(5)>=0.8', 'loss<=1000' (repeat)")
    p.add_argument("--name", default=None, help="the data's name in the title and figures (default: INPUT's file name)")
    p.add_argument("--budget-log", default=None, metavar="FILE", help="a privacy budget log: spent and left")
    p.add_argument("--k", default="1,2", metavar="K,K", help="counts for the tau metrics (default 1,2)")
    p.add_argument("--p", default="1,5,10,50", metavar="P,P", help="percentages for 'within p%%' (default 1,5,10,50)")
    p.add_argument("--no-hellinger", action="store_true", help="skip the expected Hellinger utility (faster)")
    p.add_argument("--no-frontier", action="store_true", help="skip the risk-utility frontier")
    g = p.add_argument_group("published tables and synthetic microdata releases")
    g.add_argument("--published", action="append", default=[], metavar="NAME=FILE",
                   help="a protected published table (as cellsafe publish writes it): F-beta risk and Hellinger utility")
    g.add_argument("--formula", default=None, metavar="F", help="the published crossings, e.g. 'a*b + a*c'")
    g.add_argument("--publication-formula", action=Renamed, new="--formula",
                   why="--formula is the published crossings in every command")
    g.add_argument("--hierarchy", action="append", default=[], metavar="VAR=FILE[:LEVELS]",
                   help="hierarchy of a published variable, as for cellsafe publish (repeatable)")
    g.add_argument("--beta", type=float, default=0.5, help="F-beta weight of recall (default 0.5)")
    g.add_argument("--keys", default=None, metavar="A,B", help="key variables an intruder knows (F-beta, DiSCO, TCAP)")
    g.add_argument("--sensitive", default=None, metavar="T", help="the variable an intruder wants to learn")
    g.add_argument("--model", default=None, metavar="'Y ~ X'", help="a regression for the CI overlap")
    g.add_argument("--family", choices=("gaussian", "binomial"), default="gaussian", help="its family (default gaussian)")
    g.add_argument("--seed", type=int, default=0, help="seed of the microdata measures that draw (default 0)")
    p.add_argument("--output", required=True, metavar="FILE.html", help="the HTML report (the JSON goes beside it)")
    add_output_options(p, csv=False)
    p.add_argument("--quiet", action="store_true", help="no summary line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import Report, load_release, parse_requirement

    if not args.mechanism and not args.release and not args.published:
        raise InvalidArgumentError("give at least one --mechanism SPEC, --release DIR or --published NAME=FILE to report on.")
    published = {}
    for item in args.published:
        name, sep, path = item.partition("=")
        if not sep or not name or not path or name in published:
            raise InvalidArgumentError(f"--published must be NAME=FILE with distinct names. Got {item!r}.")
        published[name] = path
    if Path(args.output).suffix.lower() not in (".html", ".htm"):
        raise InvalidArgumentError(f"--output must be an .html file. Got {args.output!r}.")
    if (args.keys is None) != (args.sensitive is None):
        raise InvalidArgumentError("--keys and --sensitive go together: give both for DiSCO and TCAP, or neither.")
    if args.formula is not None and "~" in args.formula:
        raise InvalidArgumentError(
            f"--formula is the published crossings (e.g. 'a*b + a*c'); a regression such as {args.formula!r} is --model."
        )
    requirements = [parse_requirement(t) for t in args.target]  # refused before any work
    k = parse_counts(args.k, "--k")
    p = parse_float_list(args.p, "--p")
    t0 = time.perf_counter()
    html_path = Path(args.output)
    json_path = html_path.with_suffix(".json")
    _not_in_a_public_release(html_path)
    # every file the options name is an input (INPUT, --release folders, --published, --hierarchy, --budget-log)
    with outputs_from_args(args) as out:
        tmp_html = out.file(html_path, "--output", formats=("html",))
        tmp_json = out.file(json_path, "--output (its JSON)", formats=("json",))
        table = table_from_args(args)
        releases = [load_release(d, table) for d in args.release]  # their files are inputs, with their sha256
        records = None
        if any(r.kind == "microdata" for r in releases):
            from ..io import read_frame

            records = read_frame(args.input)
        report = Report(
            table,
            args.mechanism,
            releases,
            name=args.name or Path(args.input).name,
            targets=requirements,
            budget_log=args.budget_log,
            records=records,
            keys=parse_list(args.keys, "--keys") if args.keys else None,
            sensitive=args.sensitive,
            formula=args.model,
            family=args.family,
            published=published,
            publication_formula=args.formula,
            hierarchies=hierarchies_from_args(args) or None,
            beta=args.beta,
            k=k,
            p=p,
            hellinger=not args.no_hellinger,
            frontier=not args.no_frontier,
            inputs=dict(out.manifest.inputs),
            rng=args.seed,
        )
        report.to_html(tmp_html)
        out.write_json(report.to_dict(), tmp_json)
        out.manifest.extra["report"] = {"sections": [s for s in report.to_dict()["sections"]],
                                        "mechanisms": [{k: m[k] for k in ("spec", "class", "ptable_sha256") if k in m}
                                                       for m in report.sections["mechanisms"]]}
    if not args.quiet:
        verdicts = report.sections["summary"]["verdicts"]
        passed = sum(v["passed"] is True for v in verdicts)
        judged = f"; {passed} of {len(verdicts)} mechanism(s) meet every target" if requirements else ""
        print(f"wrote {args.output} and {json_path} in {time.perf_counter() - t0:.2f} s{judged}")
    return 0


def _not_in_a_public_release(path: Path) -> None:
    """Refuse to write the report into a folder that is published whole (a DP release folder).

    The report reads the original data and hashes the inputs: it is the custodian's and the
    panel's document, and inside a public release folder it would be published with it.
    """
    import json

    for folder in [path.resolve().parent, *path.resolve().parent.parents]:
        manifest = folder / "manifest.json"
        if not manifest.is_file():
            continue
        try:
            public = "custodian_record" in json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        if public:
            raise InvalidArgumentError(
                f"--output {str(path)!r} lies in the release folder {str(folder)!r}, which may be published whole; the "
                "report names and hashes the confidential inputs. Write it outside the release folder."
            )
