"""``cellsafe evaluate-microdata``: general utility and disclosure risk of synthetic records."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ._common import EXAMPLES_FORMATTER, parse_list, print_json, seed_from_args, add_seed_option

_EXAMPLES = """\
examples:
  # one synthetic file, attribute disclosure of income from four keys, JSON out
  cellsafe evaluate-microdata adult.csv synthetic.csv --keys age,sex,race,occupation \\
      --target 'income>50K' --json

  # three implicates, a holdout for distance and membership tests, figures in plots/
  cellsafe evaluate-microdata train.parquet syn_1.parquet syn_2.parquet syn_3.parquet \\
      --holdout holdout.parquet --keys age,sex --target income --plot plots/ --seed 7

  # specific utility of a logistic regression (CI overlap and SSO)
  cellsafe evaluate-microdata adult.csv synthetic.csv --formula 'income ~ age + sex' --family binomial

Utility: pMSE, pMSE ratio, SPECKS and AUC of a propensity model (logistic regression with
pairwise interactions, or --method cart), table statistics over all one-, two- and three-way
tables, univariate and correlation comparisons.  Risk: replicated uniques (repU), disclosive
shares in original and synthetic data, DiSCO, TCAP and the CAP measures for --keys and --target;
with --holdout, distance to the closest record and a membership-inference test.  Columns of text
or category type are categorical; list numeric columns to treat as categories with --categorical.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate-microdata",
        help="utility and disclosure risk of synthetic microdata (pMSE, SPECKS, AUC, repU, DiSCO, TCAP)",
        description="Compare ORIGINAL records with one or more SYNTHETIC data sets (implicates): general "
        "utility and disclosure risk.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("original", metavar="ORIGINAL", help="CSV or Parquet file of the original records")
    p.add_argument("synthetic", metavar="SYNTHETIC", nargs="+", help="one CSV or Parquet file per synthetic implicate")
    p.add_argument("--holdout", metavar="FILE", default=None, help="records not used to synthesize (enables DCR and membership)")
    p.add_argument("--keys", metavar="A,B", default=None, help="key variables an intruder knows (with --target)")
    p.add_argument("--target", metavar="T", default=None, help="the variable an intruder wants to learn (with --keys)")
    p.add_argument("--columns", metavar="A,B,C", default=None, help="columns to evaluate (default: all shared columns)")
    p.add_argument(
        "--categorical",
        metavar="A,B",
        default=None,
        help="numeric columns to treat as categorical ('all' for every column, e.g. integer-coded data)",
    )
    p.add_argument("--method", choices=("logit", "cart"), default="logit", help="propensity model (default logit)")
    p.add_argument(
        "--max-params", type=int, default=200, metavar="K", help="cap on the logistic propensity model's parameters (default 200)"
    )
    p.add_argument(
        "--tables", metavar="1,2,3", default="1,2,3", help="orders of the tables for the table statistics (default 1,2,3)"
    )
    p.add_argument("--formula", metavar="'Y ~ X'", default=None, help="regression for CI overlap and SSO, e.g. 'y ~ a + b'")
    p.add_argument("--family", choices=("gaussian", "binomial"), default="gaussian", help="regression family (default gaussian)")
    p.add_argument("--sample", type=int, default=1000, metavar="N", help="records sampled for distance measures (default 1000)")
    add_seed_option(p)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--plot", metavar="DIR", default=None, help="write univariate.png and propensity.png into DIR")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _clean(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _text(summary: dict[str, Any]) -> str:
    u, r = summary["utility"], summary["risk"]
    lines = [
        "General utility (mean over implicates)",
        f"  propensity model      {u['method']} ({u['n_params']} parameters)",
        f"  pMSE                  {u['pmse']:.6g}",
        f"  pMSE ratio            {u['pmse_ratio']:.4g}   (1 = indistinguishable)",
        f"  SPECKS                {u['specks']:.4f}",
        f"  AUC (held-out)        {u['auc']:.4f}   (0.5 = indistinguishable)",
    ]
    for name, t in u["tables"].items():
        lines.append(f"  {name:<8} tables      {t['n_tables']:>4}: mean S_pMSE {t['mean_S_pMSE']:.4g}, mean S_FT {t['mean_S_FT']:.4g}")
    if u["bivariate"]["correlation_mae"] is not None:
        lines.append(f"  correlation MAE       {u['bivariate']['correlation_mae']:.4f}")
    if u["bivariate"]["cramers_v_mae"] is not None:
        lines.append(f"  Cramer's V MAE        {u['bivariate']['cramers_v_mae']:.4f}")
    if "regression" in u:
        g = u["regression"]
        lines.append(f"  regression {g['formula']}: mean CI overlap {g['mean_overlap']:.4f}, SSO {g['sso_share']:.2%}")
    if "DiSCO" in r:
        lines += [
            f"Disclosure risk: keys {', '.join(r['keys'])}; target {r['target']} (shares of original records)",
            f"  unique in original    UiO   {r['UiO']:.4f}",
            f"  replicated uniques    repU  {r['repU']:.4f}",
            f"  disclosive, original  DiO   {r['DiO']:.4f}",
            f"  disclosive, synthetic DiS   {r['DiS']:.4f}",
            f"  DiSCO                       {r['DiSCO']:.4f}   (chance level {r['DiSCO_chance']:.4f})",
            f"  TCAP                        {r['TCAP']:.4f}",
        ]
    if "dcr" in r:
        d = r["dcr"]
        lines += [
            "Distance to closest record (synthetic -> original vs holdout)",
            f"  exact copies          {d['share_exact_original']:.4f} vs {d['share_exact_holdout']:.4f}",
            f"  closer to original    {d['share_closer_to_original']:.4f}   (0.5 expected)",
        ]
    if "membership" in r:
        lines.append(f"Membership inference AUC {r['membership']['auc']:.4f}   (0.5 = no information)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..exceptions import InvalidArgumentError
    from ..io import read_frame
    from ..metrics.microdata import evaluate_microdata

    if (args.keys is None) != (args.target is None):
        raise InvalidArgumentError("--keys and --target go together: give both for disclosure measures, or neither.")
    keys = parse_list(args.keys, "--keys") if args.keys else None
    columns = parse_list(args.columns, "--columns") if args.columns else None
    categorical = (
        parse_list(args.categorical, "--categorical") if args.categorical and args.categorical != "all" else None
    )
    try:
        tables = [int(t) for t in parse_list(args.tables, "--tables")]
    except ValueError:
        raise InvalidArgumentError(f"--tables must list table orders among 1, 2, 3. Got {args.tables!r}.") from None
    if args.sample < 1:
        raise InvalidArgumentError(f"--sample must be a positive integer. Got {args.sample}.")
    seed = seed_from_args(args)
    original = read_frame(args.original)
    synthetic = [read_frame(p) for p in args.synthetic]
    holdout = read_frame(args.holdout) if args.holdout else None
    if args.categorical == "all":
        categorical = [str(c) for c in original.columns]
    ev = evaluate_microdata(
        original,
        synthetic,
        keys=keys,
        target=args.target,
        holdout=holdout,
        columns=columns,
        categorical=categorical,
        method=args.method,
        max_params=args.max_params,
        tables=tables,
        n_sample=args.sample,
        formula=args.formula,
        family=args.family,
        rng=seed,
        progress=not args.quiet and sys.stderr.isatty(),
    )
    result = ev.to_dict()
    summary = _clean(result)
    if args.plot:
        from ..report._microdata_plots import write_microdata_plots

        paths = write_microdata_plots(ev, original, synthetic[0], args.plot, columns, categorical=categorical)
        summary["plots"] = [str(p) for p in paths]
    if args.json:
        print_json(summary)
    else:
        print(_text(result))
        if args.plot:
            print("figures: " + ", ".join(summary["plots"]))
    return 0
