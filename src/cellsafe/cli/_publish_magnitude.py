"""``cellsafe publish --method ckm --value COL``: the cell key method for a magnitude table (sums of COL)."""

from __future__ import annotations

import argparse
from typing import Any

from typing import TYPE_CHECKING

from ..exceptions import InvalidArgumentError
from ._common import parse_float_list
from ._engine import uses_spark
from ._options import Renamed, add_param_option

if TYPE_CHECKING:
    from ..mechanisms import CellKeyMagnitude


def add_magnitude_ckm_options(p: argparse.ArgumentParser) -> None:
    """The options of the cell key method for magnitudes (with --method ckm --value COL)."""
    g = p.add_argument_group(
        "cell key method for a magnitude table (--method ckm --value COL)",
        "  noise scaled to each cell's largest contributions by the flex function (R's cellKey); the ptable\n"
        "  is --ptable FILE (ptable's create_num_ptable layout) or generated from --D and --V (e.g. --D 10\n"
        "  --V 3), --step and --icat",
    )
    method = ("mechanism", "ckm-magnitude")
    add_param_option(g, *method, "fp", metavar="X", text="flex point: contributions below X get noise --p-small times their size")
    add_param_option(g, *method, "top_k", metavar="K", text="largest contributions making noise, 1..6")
    add_param_option(g, *method, "p_small", metavar="P", text="noise share of contributions up to the flex point")
    add_param_option(g, *method, "p_large", metavar="P", text="noise share of very large contributions")
    add_param_option(g, *method, "q", metavar="Q", text="steepness of the flex function, >= 1")
    g.add_argument("--flex-weights", metavar="W,W,...",
                   help="weights of the --top-k components: 1 first, non-increasing (default all 1)")
    g.add_argument("--epsilon", action=Renamed, new="--flex-weights")
    add_param_option(g, *method, "use_zero_rkeys", text="cell keys also sum the keys of records whose value is 0")
    add_param_option(g, *method, "mu_c", metavar="MU",
                     text="extra noise for the cells the --rule options flag (e.g. --rule 'p%=15' --mu-c 2)")
    add_param_option(g, "part", "magnitude-ptable", "step", metavar="S", text="generated ptable: noise on a grid of 1/S")
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
    weights = tuple(parse_float_list(args.flex_weights, "--flex-weights")) if args.flex_weights else None
    given = {"fp": args.fp, "top_k": args.top_k, "p_small": args.p_small, "p_large": args.p_large, "q": args.q,
             "flex_weights": weights, "mu_c": args.mu_c, "use_zero_rkeys": args.use_zero_rkeys or None}
    own = {k: v for k, v in given.items() if v is not None}  # the library's defaults for the rest
    mech = _magnitude_method(args, own)
    res = mech.perturb(args.input, variables=names, value=args.value, contributor=args.contributor,
                       record_key=args.record_key, hierarchies=hierarchies or None, sensitive=args.rule or None, rng=rng)
    return res, mech


def _magnitude_method(args: argparse.Namespace, own: dict[str, Any]) -> CellKeyMagnitude:
    """The method with the ptable of --ptable FILE, or the one --D, --V, --step and --icat generate (as the spec
    'ckm-magnitude:D=..,V=..' builds it)."""
    from ..mechanisms import CellKeyMagnitude, MagnitudePTable, make_mechanism

    icat = tuple(parse_float_list(args.icat, "--icat")) if args.icat else None
    table = {k: v for k, v in (("D", args.D), ("V", args.V), ("step", args.step), ("icat", icat)) if v is not None}
    if args.ptable:
        if table:
            raise InvalidArgumentError("give either --ptable FILE or --D/--V/--step/--icat, not both.")
        return CellKeyMagnitude(MagnitudePTable.read(args.ptable), args.formula, **own)
    if "D" not in table or "V" not in table:
        raise InvalidArgumentError(
            "the cell key method for magnitude tables needs its ptable: --D and --V (e.g. --D 10 --V 3, with --step "
            "and --icat), or --ptable FILE."
        )
    mech = make_mechanism({"mechanism": "ckm-magnitude", **table, "publication": args.formula, **own})
    assert isinstance(mech, CellKeyMagnitude)
    return mech
