"""``cellsafe tune``: solve for alpha, sigma or nu so that an a priori metric meets a target."""

from __future__ import annotations

import argparse

from ._common import (
    EXAMPLES_FORMATTER,
    add_distribution_options,
    add_quiet_option,
    add_table_input,
    parse_float_list,
    print_json,
    progress_from_args,
    mechanism_from_args,
    table_from_args,
)
from ._options import tunable_ranges

_EXAMPLES = """\
examples:
  # pseudocount so that at most 40% of synthetic uniques are real uniques (Poisson noise)
  cellsafe tune pupils.parquet --variables area,ethnicity,sex,age,language \\
      --distribution poisson --solve alpha --target 'tau4(1)=0.4'

  # as many zeros released as in the original (003's closed form under the Poisson)
  cellsafe tune table.csv --variables a,b,c --count n --distribution poisson --solve alpha --target 'tau1(0)=tau2(0)'

  # NBI sigma for which 20% of real uniques stay unique
  cellsafe tune table.csv --variables a,b,c --count n --distribution nbi --sigma 1 --solve sigma --target 'tau3(1)=0.2'

  # GAF nu for an expected squared error of 1000, sigma fixed at 2
  cellsafe tune table.csv --variables a,b,c --count n --distribution gaf --sigma 2 --solve nu --target loss=1000

  # the privacy parameter of geometric noise, the noise variance V of the cell key method
  cellsafe tune table.csv --variables a,b,c --count n --mechanism 'geometric:epsilon=1' --solve epsilon --target 'tau3(1)=0.5'
  cellsafe tune table.csv --variables a,b,c --count n --mechanism 'ckm:D=3,V=1' --solve V --target 'tau3(1)=0.5'

The other parameters (--sigma, --nu, --alpha) stay as given; for --solve sigma the --sigma value is
only a starting family member.  Prints the solved value (with --json: {"alpha": ...}).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tune",
        help="solve for alpha, sigma or nu meeting an a priori target such as tau4(1)=0.4",
        description="Find the parameter value for which an a priori metric of the synthesizer equals a "
        "target (003 section 3.3.5): 'tau1(0)=tau2(0)', 'tauN(k)=p' with p in [0, 1], or 'loss=L'.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    add_table_input(p)
    add_distribution_options(p, mechanism=True)
    p.add_argument(
        "--solve",
        required=True,
        metavar="PARAM",
        help="parameter to solve for: alpha, sigma, nu, zeros_to_ones (saturated), epsilon (geometric), V (ckm), ...",
    )
    p.add_argument("--target", required=True, metavar="TARGET",
                   help="'tau4(1)=0.4', 'tau3(1)=0.2', 'loss=1000', 'tau1(0)=tau2(0)'; a report's bound such as "
                   "'tau4(1)<=0.4' is solved at its boundary, with the side that meets it")
    p.add_argument(
        "--bounds", default=None, metavar="LO,HI",
        help="range searched (default: the parameter's declared range, " + tunable_ranges() + ")",
    )
    p.add_argument("-m", type=int, default=1, dest="m", help="implicates averaged, for a loss target")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    add_quiet_option(p, summary=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..exceptions import InvalidArgumentError
    from ..tuning import parse_target, tune

    if args.mechanism is None:
        if args.solve == "sigma" and args.sigma is None and args.distribution not in (None, "poisson"):
            args.sigma = 1.0  # any member of the family: sigma is what we solve for
        if args.solve == "sigma" and args.distribution == "poisson":
            raise InvalidArgumentError("--solve sigma needs --distribution nbi, pig or gaf; the Poisson has no sigma.")
        if args.solve == "nu" and args.distribution != "gaf":
            raise InvalidArgumentError("--solve nu needs --distribution gaf; only the gamma family has nu.")
    target = parse_target(args.target, m=args.m)  # validate before reading data
    bounds = None
    if args.bounds:
        b = parse_float_list(args.bounds, "--bounds")
        if len(b) != 2:
            raise InvalidArgumentError(f"--bounds must be two numbers LO,HI. Got {args.bounds!r}.")
        bounds = (b[0], b[1])
    mech = mechanism_from_args(args)
    table = table_from_args(args)
    result = tune(table, mech, args.solve, target, bounds=bounds, m=args.m, progress=progress_from_args(args))
    if args.json:
        print_json(result.to_dict())
    else:
        meets = f"; {result.meets} meets it" if result.meets else ""
        print(f"{result.parameter} = {result.value:.10g}  ({result.target}; achieved {result.achieved:.6g}{meets}; "
              f"{result.mechanism!r})")
    return 0
