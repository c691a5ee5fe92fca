"""``cellsafe dp-synthesize --mechanism mst|aim``: the marginal synthesizers' options and plan.

``dp-synthesize`` adds these options and, for ``--mechanism mst`` or ``aim``, builds its plan here: a
:class:`cellsafe.MarginalSynthesizer` from the options, planned on the input and the public domain
(``MarginalSynthesizer.plan``).  The command then charges the plan's loss to the ledger and writes its
implicates: synthetic records, one file each.  Nothing here computes a statistic.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..exceptions import InvalidArgumentError

__all__ = ["add_marginal_options", "marginal_plan"]

_NOT_FOR_MARGINALS = (
    ("population", "--population"), ("population_file", "--population-file"), ("prior", "--prior"),
    ("prior_epsilon", "--prior-epsilon"), ("prior_file", "--prior-file"), ("part", "--part"),
    ("part_sizes", "--part-sizes"), ("public_total", "--public-total"), ("total_epsilon", "--total-epsilon"),
)


def add_marginal_options(p: argparse.ArgumentParser) -> None:
    """Options of ``--mechanism mst|aim`` (the budget options are dp-synthesize's own)."""
    g = p.add_argument_group("marginal synthesis (--mechanism mst or aim): synthetic records from noisy marginals")
    g.add_argument("--rows", type=int, default=None, metavar="N",
                   help="records per implicate (default: the total estimated from the noisy marginals)")
    g.add_argument("--rounds", type=int, default=None, metavar="T", help="aim: planned rounds (default 16 per variable)")
    g.add_argument("--max-cells", type=float, default=None, metavar="N",
                   help="aim: largest model, in cells of its clique tables (default 1e5)")
    g.add_argument("--degree", type=int, default=None, metavar="K",
                   help="aim: the workload, every marginal of K variables (default 3)")


def marginal_plan(args: argparse.Namespace, domain: Any, relation: str, delta: float | None) -> Any:
    """The plan of one marginal release from the parsed options (see ``MarginalSynthesizer.plan``)."""
    from ..mechanisms import MarginalSynthesizer
    from ._common import parse_list, resolve_count

    for dest, option in _NOT_FOR_MARGINALS:
        if getattr(args, dest, None) not in (None, False):
            raise InvalidArgumentError(f"{option} does not apply to --mechanism {args.mechanism}.")
    own = {"rounds": args.rounds, "max_cells": args.max_cells, "degree": args.degree}
    given = {k: v for k, v in own.items() if v is not None}
    if args.mechanism == "mst" and given:
        raise InvalidArgumentError(
            f"{', '.join('--' + k.replace('_', '-') for k in given)} appl{'ies' if len(given) == 1 else 'y'} to "
            "--mechanism aim only."
        )
    if args.rows is not None and args.rows < 1:
        raise InvalidArgumentError(f"--rows must be at least 1. Got {args.rows}.")
    synth = MarginalSynthesizer(args.epsilon, delta=1e-9 if delta is None else delta, selection=args.mechanism,
                                relation=relation, **given)
    names = parse_list(args.variables) if args.variables else list(domain.names)
    count = resolve_count(args.input, names, args.count)
    return synth.plan(args.input, domain, names=names, count=count, outside=args.outside, rows=args.rows, delta=delta)
