"""``cellsafe publish --method ckm --value COL``: the cell key method for a magnitude table (sums of COL)."""

from __future__ import annotations

import argparse
from typing import Any

from ..exceptions import InvalidArgumentError
from ..mechanisms.cellkey_magnitude import CellKeyMagnitude
from ..mechanisms.magnitude_ptable import MagnitudePTable
from ._common import parse_float_list
from ._engine import uses_spark
from ._options import Renamed


def add_magnitude_ckm_options(p: argparse.ArgumentParser) -> None:
    """The options of the cell key method for magnitudes (with --method ckm --value COL)."""
    g = p.add_argument_group(
        "cell key method for a magnitude table (--method ckm --value COL)",
        "noise scaled to each cell's largest contributions by the flex function (R's cellKey); the ptable is "
        "--ptable FILE (ptable's create_num_ptable layout) or generated from --D (default 10), --V (default 3), "
        "--step and --icat",
    )
    g.add_argument("--fp", type=float, metavar="X", help="flex point: contributions below X get noise --p-small times their size")
    g.add_argument("--top-k", type=int, default=1, metavar="K", help="largest contributions making noise, 1..6 (default 1)")
    g.add_argument("--p-small", type=float, default=0.25, metavar="P", help="noise share of contributions up to the flex point (default 0.25)")
    g.add_argument("--p-large", type=float, default=0.05, metavar="P", help="noise share of very large contributions (default 0.05)")
    g.add_argument("--q", type=float, default=3.0, metavar="Q", help="steepness of the flex function, >= 1 (default 3)")
    g.add_argument("--flex-weights", metavar="W,W,...",
                   help="weights of the --top-k components: 1 first, non-increasing (default all 1)")
    g.add_argument("--epsilon", action=Renamed, new="--flex-weights")
    g.add_argument("--use-zero-rkeys", action="store_true", help="cell keys also sum the keys of records whose value is 0")
    g.add_argument("--mu-c", type=float, default=None, metavar="MU",
                   help="extra noise for the cells the --rule options flag (e.g. --rule 'p%%=15' --mu-c 2)")
    g.add_argument("--step", type=int, default=None, metavar="S", help="generated ptable: noise on a grid of 1/S (default 2)")
    g.add_argument("--icat", metavar="I,I,...", help="generated ptable: reference rows, with 1 and D (default 1,D)")


def publish_magnitude_ckm(args: argparse.Namespace, names: list[str], rng: Any, hierarchies: dict) -> tuple[Any, Any]:
    """The perturbed magnitude table and its mechanism, from the command's arguments."""
    if uses_spark(args):
        raise InvalidArgumentError("the cell key method for magnitude tables runs locally; drop --engine spark.")
    if args.count:
        raise InvalidArgumentError(f"--value needs microdata (one row per record); drop --count {args.count!r}.")
    if bool(args.rule) != (args.mu_c is not None):
        raise InvalidArgumentError(
            "with the cell key method for magnitude tables, --rule says which cells get the extra noise --mu-c: "
            "give both (e.g. --rule 'p%=15' --mu-c 2) or neither."
        )
    for flag, given in (("--protect-zeros", args.protect_zeros), ("--js", args.js is not None),
                        ("--threshold", args.threshold is not None), ("--zeros", args.zeros)):
        if given:
            raise InvalidArgumentError(f"{flag} does not apply to the cell key method for magnitude tables (--method ckm --value).")
    if args.fp is None:
        raise InvalidArgumentError(
            "the cell key method for magnitude tables needs --fp X, the flex point (contributions below X get noise "
            "--p-small times their size; choose it near the size of a typical large contribution)."
        )
    ptable = _magnitude_ptable(args)
    weights = tuple(parse_float_list(args.flex_weights, "--flex-weights")) if args.flex_weights else None
    mech = CellKeyMagnitude(
        ptable, args.formula, fp=args.fp, top_k=args.top_k, p_small=args.p_small, p_large=args.p_large, q=args.q,
        flex_weights=weights, mu_c=0.0 if args.mu_c is None else args.mu_c, use_zero_rkeys=args.use_zero_rkeys,
    )
    res = mech.perturb(args.input, variables=names, value=args.value, contributor=args.contributor,
                       record_key=args.record_key, hierarchies=hierarchies or None, sensitive=args.rule or None, rng=rng)
    return res, mech


def _magnitude_ptable(args: argparse.Namespace) -> MagnitudePTable:
    generated = any(x is not None for x in (args.D, args.V, args.step, args.icat))
    if args.ptable:
        if generated:
            raise InvalidArgumentError("give either --ptable FILE or --D/--V/--step/--icat, not both.")
        return MagnitudePTable.read(args.ptable)
    icat = tuple(parse_float_list(args.icat, "--icat")) if args.icat else None
    return MagnitudePTable.generate(
        D=10 if args.D is None else args.D, V=3.0 if args.V is None else args.V, step=2 if args.step is None else args.step, icat=icat
    )
