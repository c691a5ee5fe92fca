"""``cellsafe compare``: fair risk-utility comparison of published tables (001).

Every published table is post-processed the same way: additivity restored by least squares when
needed, expected inner frequencies by IPF, then Hellinger utility and the F-beta disclosure risk
against the original inner table.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from ..exceptions import InvalidArgumentError
from ..fitting import expected_inner, restore_additivity
from ..io import read_frame
from ..metrics import disclosure_risk, hellinger_utility
from ..published import DEFAULT_MAX_INNER, Publication
from ._common import EXAMPLES_FORMATTER, add_input_options, load_table, parse_list, print_json

_EXAMPLES = """\
examples:
  # compare a cell key perturbed and a small count rounded version of the same published cells
  cellsafe compare inner.csv --variables party,age,sex --count count --formula "party*age + party*sex" \\
      --published ckm=published_cell_key.csv --published scr=published_small_count_rounding.csv \\
      --sensitive party --keys age,sex --json

Each published file is in long format: the variables ('Total' where a cell aggregates) and 'count'
(empty for a suppressed cell).  JSON output per NAME: additive, hellinger_utility {published, restored},
risk {plain, know_yourself} with a, b, c and f_beta, restored and expected_inner cells.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare protected published tables by post-processing to expected inner frequencies",
        description="Restore additivity, fit expected inner frequencies, and measure Hellinger utility and "
        "F-beta disclosure risk of each published table against the original (001).",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("input", metavar="INNER", help="the original data: microdata, or a frequency table with --count")
    add_input_options(p)
    p.add_argument("--formula", required=True, metavar="F", help="the published crossings, e.g. 'a*b + a*c'")
    p.add_argument("--published", required=True, action="append", metavar="NAME=FILE",
                   help="a protected published table (repeat for several)")
    p.add_argument("--sensitive", required=True, metavar="VAR", help="the sensitive variable")
    p.add_argument("--keys", required=True, metavar="VAR,VAR", help="the quasi-identifiers")
    p.add_argument("--beta", type=float, default=0.5, help="F-beta weight of recall (default 0.5)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _cells(frame: Any) -> list[dict]:
    recs = frame.to_dict(orient="records")
    for r in recs:
        r["count"] = _num(r["count"])
    return recs


def compare_one(table, pub: Publication, values: np.ndarray, sensitive: str, keys: list[str], beta: float) -> dict:
    """The comparison of one published table (a plain dict, the JSON of the command)."""
    original = pub.aggregate(table).astype(np.float64)
    total = float(original.sum())
    observed = ~np.isnan(values)
    additive = bool(observed.all() and np.all(values >= 0) and pub.additivity_error(values) <= 1e-9 * max(1.0, total))
    restored = values if additive else restore_additivity(pub.X, values).fitted
    fit = expected_inner(pub, restored)
    plain = disclosure_risk(table, fit.fitted, sensitive, keys, beta=beta)
    know = disclosure_risk(table, fit.fitted, sensitive, keys, beta=beta, know_yourself=True)

    def risk(r) -> dict:
        probs = r.protected.to_frame()
        probs["probability"] = probs["probability"].astype(object).where(probs["probability"].notna(), None)
        return {
            "a": r.a, "b": r.b, "c": r.c, "f_beta": r.f_beta,
            "precision": _num(r.precision), "recall": _num(r.recall),
            "probabilities": probs.to_dict(orient="records"),
        }

    exp_frame = fit.fitted.to_frame(zeros=True)
    for v in pub.variables:
        exp_frame[v.name] = exp_frame[v.name].astype(object)
    return {
        "additive": additive,
        "hellinger_utility": {
            "published": hellinger_utility(original, np.where(observed, values, 0.0)),
            "restored": hellinger_utility(original, restored),
        },
        "risk": {"plain": risk(plain), "know_yourself": risk(know)},
        "restored": _cells(pub.frame(restored)),
        "expected_inner": _cells(exp_frame),
    }


def run(args: argparse.Namespace) -> int:
    keys = parse_list(args.keys, "--keys")
    names = parse_list(args.variables)
    for v in [args.sensitive, *keys]:
        if v not in names:
            raise InvalidArgumentError(f"{v!r} (--sensitive/--keys) is not among --variables {names}.")
    pairs = []
    for item in args.published:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InvalidArgumentError(f"--published must be NAME=FILE. Got {item!r}.")
        pairs.append((name, path))
    if len({n for n, _ in pairs}) != len(pairs):
        raise InvalidArgumentError("--published names must be distinct.")
    table = load_table(args.input, args.variables, args.count)
    # expected inner frequencies spread mass over the zero combinations too (001 section 7), where they fit
    zeros = table.n_cells - table.n_structural_zeros <= DEFAULT_MAX_INNER
    pub = Publication.from_formula(table, args.formula, zeros=zeros)
    out = {}
    for name, path in pairs:
        values = pub.align(read_frame(path))
        out[name] = compare_one(table, pub, values, args.sensitive, keys, args.beta)
    if args.json:
        print_json(out)
        return 0
    for name, r in out.items():
        hu = r["hellinger_utility"]
        print(f"{name}: additive={r['additive']}  Hellinger utility published={hu['published']:.4f} "
              f"restored={hu['restored']:.4f}")
        for kind in ("plain", "know_yourself"):
            k = r["risk"][kind]
            print(f"  risk ({kind}): a={k['a']} b={k['b']} c={k['c']}  F_beta={k['f_beta']:.4f}")
            for row in k["probabilities"]:
                cell = ", ".join(f"{key}={row[key]}" for key in keys)
                p = row["probability"]  # None: nobody left to guess from (know_yourself)
                shown = "n/a" if p is None else f"{p:.4f}"
                print(f"    {cell}: {shown} ({args.sensitive}={row['guess']})")
    return 0
