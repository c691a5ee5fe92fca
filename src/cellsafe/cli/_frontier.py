"""``cellsafe frontier``: the a priori risk-utility frontier over count families, mechanisms and parameters."""

from __future__ import annotations

import argparse
from pathlib import Path

from ._common import (
    add_allow_long_option,
    EXAMPLES_FORMATTER,
    add_quiet_option,
    add_table_input,
    parse_list,
    progress_from_args,
    table_from_args,
)
from ._options import Renamed, family_names

_EXAMPLES = """\
examples:
  # 100 settings over every count family; points to CSV, plot to PNG
  cellsafe frontier pupils.parquet --variables area,ethnicity,sex,age,language \\
      --output frontier.csv --plot frontier.png

  # 40 NBI and PIG settings, Hellinger utility, pseudocount 0.01, SVG plot
  cellsafe frontier table.csv --variables a,b,c --count n --distributions nbi,pig --grid 40 \\
      --utility hellinger --alpha 0.01 --output frontier.csv --plot frontier.svg

  # your own settings: a CSV with columns family,sigma,nu,alpha
  cellsafe frontier table.csv --variables a,b,c --count n --grid settings.csv --output frontier.csv

  # MST and AIM beside geometric noise: privacy loss against the a priori error of the 2-way marginals
  cellsafe frontier table.csv --variables a,b,c --count n --output dp.csv --plot dp.png \
      --risk epsilon --utility 'marginal_tv(2)' --mechanism 'mst:epsilon=0.3' --mechanism 'mst:epsilon=1' \
      --mechanism 'aim:epsilon=0.3' --mechanism 'aim:epsilon=1' --mechanism 'geometric:epsilon=0.5'

  # saturated NBI, the cell key method and geometric noise on one yardstick
  cellsafe frontier table.csv --variables a,b,c --count n --output mixed.csv --utility hellinger \
      --mechanism 'nbi:sigma=0.5' --mechanism 'nbi:sigma=2' --mechanism 'ckm:D=5,V=3,js=2' \
      --mechanism 'geometric:epsilon=0.5' --mechanism 'geometric:epsilon=2'

Risk is tau4(1) (the share of synthetic uniques that are real uniques) unless --risk says otherwise;
utility is 1 - invlogit(expected squared error per cell) (000 Figure 7) or the expected Hellinger
utility.  The output has one row per setting and a column 'efficient' marking the frontier, with the
privacy loss of every DP setting (loss_epsilon, loss_delta, loss_rho).  A metric that does not apply
to a setting (tau4(1) or the MSE of mst and aim, the marginal error of cell-wise noise) is left
empty with the reason in the column 'undefined'.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "frontier",
        help="a priori risk-utility frontier over mechanisms and parameters",
        description="Evaluate a grid of mechanisms (saturated synthesizers by default; the cell key "
        "method, DP noise and the marginal synthesizers mst and aim with --mechanism) a priori and mark the "
        "non-dominated settings "
        "(003 section 4.5, 000 section 4.5).",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    add_table_input(p)
    p.add_argument("--distributions", default=None, metavar="F,F",
                   help="count families of the default grid (default: every one, " + ", ".join(family_names()) + ")")
    p.add_argument("--families", action=Renamed, new="--distributions", why="as --distribution names a count family")
    p.add_argument(
        "--grid", default="100", metavar="N|FILE", help="number of settings of the default grid (default 100), or a CSV"
        "/Parquet file of settings with columns family,sigma,nu,alpha"
    )
    p.add_argument(
        "--mechanism",
        action="append",
        default=None,
        metavar="SPEC",
        help="a setting as a spec, e.g. 'nbi:sigma=1' or 'ckm:D=5,V=3,js=2' or 'geometric:epsilon=1'; repeat it to "
        "build a grid of mixed mechanisms (instead of --grid)",
    )
    p.add_argument("--alpha", type=float, default=0.0, help="pseudocount of the default grid's nbi/pig/gaf settings")
    p.add_argument("--risk", default="tau4(1)", help="risk metric tauN(k) (default tau4(1)), or the privacy loss of one "
                   "release: epsilon or rho (DP mechanisms, mst and aim)")
    p.add_argument("--utility", default="mse", metavar="mse|hellinger|marginal_tv(k)",
                   help="utility measure (default mse); marginal_tv(k), k in 1..3: the expected average total-variation "
                   "error of the k-way marginals of the marginal synthesizers (mst, aim)")
    p.add_argument("--relation", choices=("replace-one", "add-remove"), default="replace-one",
                   help="neighbour relation of the privacy loss columns and of --risk epsilon|rho (default replace-one)")
    p.add_argument("--output", required=True, metavar="FILE", help="CSV or Parquet file for the points")
    p.add_argument("--plot", default=None, metavar="FILE", help="also draw the frontier (PNG or SVG)")
    from ._common import add_output_options

    add_output_options(p, csv=False)
    add_allow_long_option(p)
    add_quiet_option(p)
    p.set_defaults(func=run)


def _grid(text: str) -> tuple[int | None, list[dict] | None]:
    from ..exceptions import InvalidArgumentError

    try:
        n = int(text)
    except ValueError:
        n = None
    if n is not None:
        if n < 1:
            raise InvalidArgumentError(f"--grid must be a positive number of settings or a file. Got {text!r}.")
        return n, None
    if not Path(text).exists():
        raise InvalidArgumentError(f"--grid {text!r} is neither a number nor an existing file of settings.")
    from ..io import read_frame

    df = read_frame(text)
    if "family" not in df.columns and "mechanism" not in df.columns:
        raise InvalidArgumentError(
            f"the settings file {text!r} needs a 'family' (or 'mechanism') column, and the parameters (sigma, nu, "
            "alpha, epsilon, D, V, ...)."
        )
    return None, [{k: v for k, v in row.items() if v == v} for row in df.to_dict("records")]


def run(args: argparse.Namespace) -> int:
    from ._common import outputs_from_args

    outputs = outputs_from_args(args)  # INPUT (or its --glob matches), --structural-zeros, --grid FILE
    with outputs:  # checked before any work; the files appear with their manifests when the run completes
        out_path = outputs.file(args.output, "--output")
        plot_path = outputs.file(args.plot, "--plot", formats=("png", "svg")) if args.plot else None
        return _run(args, outputs, out_path, plot_path)


def _run(args: argparse.Namespace, outputs, out_path: Path, plot_path: Path | None) -> int:  # type: ignore[no-untyped-def]
    from ..exceptions import InvalidArgumentError
    from ..tuning import frontier

    families = parse_list(args.distributions, "--distributions") if args.distributions else None
    n, grid = _grid(args.grid)
    if args.mechanism:
        from ..mechanisms import make_mechanism

        if grid is not None:
            raise InvalidArgumentError("give either --grid FILE or --mechanism SPEC (repeated), not both.")
        grid = [make_mechanism(spec) for spec in args.mechanism]
    table = table_from_args(args)
    result = frontier(
        table, grid, families=families, n=n or 100, alpha=args.alpha, risk=args.risk, utility=args.utility,
        relation=args.relation, progress=progress_from_args(args),
    )
    outputs.write_frame(result.points, out_path)
    if plot_path is not None:
        from ..report import plot_frontier

        plot_frontier(result, path=plot_path)
    if args.quiet:
        return 0
    eff = result.efficient
    print(
        f"{len(result.points)} settings, {len(eff)} on the frontier (risk {result.risk}, utility {result.utility}); "
        f"wrote {args.output}" + (f" and {args.plot}" if args.plot else "")
    )
    for spec, why in zip(result.undefined["spec"], result.undefined["undefined"]):
        print(f"  {spec}: {why} (in the output with that value empty; drawn in the plot's margin)")
    return 0
