"""One call for the whole microdata evaluation: general utility and disclosure risk.

:func:`evaluate_microdata` runs, for each synthetic implicate, the propensity metrics, the
table-based metrics over all one-, two- and three-way tables, and (given keys and a target) the
attribute-disclosure measures; for the first implicate the univariate and bivariate comparisons;
and, given a holdout set, the distance to the closest record and the membership-inference test.
The scalar summaries average over implicates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._frames import as_pandas
from ..._random import as_seed_sequence, stream
from ..._results import Result
from ...exceptions import InvalidArgumentError
from ._attribute import AttributeDisclosure, attribute_disclosure
from ._bivariate import BivariateComparison, compare_bivariate
from ._data import as_frames, check_columns, mark_missing, parse_numeric
from ._missing import MissingnessComparison, compare_missingness
from ._distance import DistanceToClosestRecord, MembershipInference, distance_to_closest_record, membership_inference
from ._propensity import PropensityResult, propensity_metrics
from ._regression import RegressionUtility, regression_utility
from ._tables import table_utilities
from ._univariate import UnivariateComparison, compare_univariate

__all__ = ["MicrodataEvaluation", "evaluate_microdata"]

_WAYS = {1: "oneway", 2: "twoway", 3: "threeway"}


@dataclass(frozen=True)
class MicrodataEvaluation(Result):
    """Utility and risk of synthetic microdata (see :func:`evaluate_microdata`).

    Attributes
    ----------
    propensity : tuple of PropensityResult
        One per implicate.
    tables : dict of str to list of DataFrame
        ``"oneway"``, ``"twoway"``, ``"threeway"``: per implicate, one row per table.
    univariate : UnivariateComparison
        Against the first implicate.
    bivariate : BivariateComparison
        Against the first implicate.
    disclosure : tuple of AttributeDisclosure
        One per implicate (empty without keys and target).
    dcr : DistanceToClosestRecord or None
        First implicate, with a holdout.
    membership : MembershipInference or None
        First implicate, with a holdout.
    regression : RegressionUtility or None
        With a formula: CI overlap and SSO combined over all implicates.
    missingness : MissingnessComparison or None
        Shares of missing values per column and by category, original against the implicates.
    rules : tuple of dict
        With rules: per rule, the records breaking it in the original (``broken_original``) and
        in each implicate (``broken_synthetic``).
    skipped : tuple of str
        Parts left out, with the reason (for example three-way tables of too many columns).
    """

    propensity: tuple[PropensityResult, ...]
    tables: dict[str, list[pd.DataFrame]] = field(repr=False)
    univariate: UnivariateComparison = field(repr=False)
    bivariate: BivariateComparison = field(repr=False)
    disclosure: tuple[AttributeDisclosure, ...] = field(repr=False)
    dcr: DistanceToClosestRecord | None = field(repr=False)
    membership: MembershipInference | None = field(repr=False)
    regression: RegressionUtility | None = field(default=None, repr=False)
    skipped: tuple[str, ...] = ()
    missingness: MissingnessComparison | None = field(default=None, repr=False)
    rules: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: ``{"utility": {...}, "risk": {...}}`` (means over implicates)."""

        def mean(values: Sequence[float]) -> float:
            arr = np.asarray(values, dtype=float)
            return float(np.nanmean(arr)) if arr.size and not np.all(np.isnan(arr)) else float("nan")

        util: dict[str, Any] = {
            "method": self.propensity[0].method,
            "pmse": mean([p.pmse for p in self.propensity]),
            "pmse_ratio": mean([p.pmse_ratio for p in self.propensity]),
            "standardized_pmse": mean([p.standardized_pmse for p in self.propensity]),
            "specks": mean([p.specks for p in self.propensity]),
            "auc": mean([p.auc for p in self.propensity]),
            "n_params": self.propensity[0].n_params,
            "implicates": [p.to_dict() for p in self.propensity],
        }
        tabs: dict[str, Any] = {}
        for name, frames in self.tables.items():
            tabs[name] = {
                "n_tables": int(len(frames[0])),
                **{f"mean_{k}": mean([float(f[k].mean()) for f in frames]) for k in ("S_pMSE", "S_FT", "S_JSD", "JSD", "VW")},
                "worst": frames[0].sort_values("S_pMSE", ascending=False).head(5)[["variables", "S_pMSE"]].to_dict("records"),
            }
        util["tables"] = tabs
        if self.regression is not None:
            util["regression"] = {k: v for k, v in self.regression.to_dict().items() if k != "m"}
        if self.skipped:
            util["skipped"] = list(self.skipped)
        if self.missingness is not None:
            util["missingness"] = self.missingness.to_dict()
        if self.rules:
            util["rules"] = [dict(r) for r in self.rules]
        tv = self.univariate.total_variation
        util["univariate"] = {"total_variation": tv, "mean_total_variation": mean(list(tv.values())) if tv else None}
        util["bivariate"] = {
            "correlation_mae": self.bivariate.correlation.mae if self.bivariate.correlation else None,
            "cramers_v_mae": self.bivariate.cramers_v.mae if self.bivariate.cramers_v else None,
        }
        risk: dict[str, Any] = {}
        if self.disclosure:
            summaries = [d.to_dict() for d in self.disclosure]
            for k in summaries[0]:
                if k not in ("keys", "target", "n_original", "n_synthetic"):
                    risk[k] = mean([d[k] for d in summaries])
            risk["keys"] = list(self.disclosure[0].keys)
            risk["target"] = self.disclosure[0].target
        if self.dcr is not None:
            risk["dcr"] = self.dcr.to_dict()
        if self.membership is not None:
            risk["membership"] = self.membership.to_dict()
        return {"utility": util, "risk": risk}

    def summary(self) -> str:
        """A plain-text report of the headline utility and risk measures (means over implicates)."""
        summary = self.to_dict()
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
        if self.missingness is not None:
            lines.append(self.missingness.summary())
        if self.rules:
            lines.append("Rules (records breaking each rule: original; synthetic, most in one implicate)")
            for rule in self.rules:
                lines.append(f"  {rule['rule']:<50} {rule['broken_original']:>6}; {max(rule['broken_synthetic']):>6}")
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


def evaluate_microdata(
    original: Any,
    synthetic: Any,
    *,
    keys: Sequence[str] | None = None,
    target: str | None = None,
    holdout: Any = None,
    columns: Sequence[str] | None = None,
    categorical: Sequence[str] | None = None,
    numeric: Sequence[str] | None = None,
    method: str = "logit",
    max_params: int = 200,
    tables: Sequence[int] = (1, 2, 3),
    ngroups: int = 5,
    n_sample: int | None = 1000,
    formula: str | None = None,
    family: str = "gaussian",
    max_tables: int = 3000,
    rules: Any = None,
    missing_values: Any = None,
    rng: Any = None,
    progress: bool = False,
) -> MicrodataEvaluation:
    """General utility and disclosure risk of synthetic microdata in one call.

    Parameters
    ----------
    original : DataFrame
    synthetic : DataFrame or list of DataFrame
        One synthetic data set or ``m`` implicates.
    keys, target : sequence of str, str, optional
        Key variables and target for the attribute-disclosure measures (both or neither).
    holdout : DataFrame, optional
        Records not used for synthesis: enables distance to closest record and membership
        inference.
    columns : sequence of str, optional
        Columns to evaluate (default: all shared columns).
    categorical : sequence of str, optional
        Numeric columns to treat as categorical.
    numeric : sequence of str, optional
        Text columns to parse as numbers (continuous variables), in every frame; a value that is
        not a number is an error.  Text stays categorical as written otherwise ("0.50" and "0.5"
        are two categories).
    method : {"logit", "cart"}
        Propensity model (:func:`propensity_metrics`).
    max_params : int
        Cap on the logistic propensity model's parameters.
    tables : sequence of int
        Table orders for :func:`table_utilities` (1, 2 and/or 3).
    ngroups : int
        Groups for numeric columns in the tables.
    n_sample : int or None
        Records sampled for the distance-based measures.
    formula, family : str, optional
        A regression ``"y ~ x1 + x2"`` (gaussian or binomial) for the specific utility
        (:func:`regression_utility`, fully synthetic combining rule).
    max_tables : int
        Table orders with more tables than this are skipped (and listed in ``skipped``).
    rules : dict, optional
        ``{column: "CONDITION -> CONSEQUENCE"}`` (the rules of
        :class:`~cellsafe.synthesis.SequentialSynthesizer`): the records breaking each, in the
        original and in every implicate.
    missing_values : list or dict, optional
        Markers of missing values (for every column, or ``{column: [markers]}``), made missing in
        every frame before anything is measured.
    rng : None, int, SeedSequence or Generator
    progress : bool
        Show a progress bar on standard error.

    Returns
    -------
    MicrodataEvaluation

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"a": list("xxyyxy"), "b": list("uvuvvv")})
    >>> ev = evaluate_microdata(o, o, keys=["a"], target="b", rng=1)
    >>> ev.to_dict()["risk"]["DiSCO"] == ev.disclosure[0].DiO
    True
    """
    orig, syns = as_frames(original, synthetic, "evaluate_microdata")
    if missing_values:
        orig = mark_missing(orig, missing_values, "the original")
        syns = [mark_missing(s, missing_values, f"synthetic[{i}]") for i, s in enumerate(syns)]
        if holdout is not None:
            holdout = mark_missing(as_pandas(holdout, "holdout"), missing_values, "the holdout")
    if numeric:
        orig = parse_numeric(orig, numeric, "the original")
        syns = [parse_numeric(s, numeric, f"synthetic[{i}]") for i, s in enumerate(syns)]
        if holdout is not None:
            holdout = parse_numeric(as_pandas(holdout, "holdout"), numeric, "the holdout")
    if (keys is None) != (target is None):
        raise InvalidArgumentError("evaluate_microdata: give both keys and target for disclosure measures, or neither.")
    ways = sorted(set(int(t) for t in tables))
    if any(w not in _WAYS for w in ways):
        raise InvalidArgumentError(f"The 'tables' parameter of evaluate_microdata must hold 1, 2 or 3. Got {list(tables)}.")
    frames = {"original": orig, **{f"synthetic[{i}]": s for i, s in enumerate(syns)}}
    cols = check_columns(frames, columns, "evaluate_microdata")
    ways = [w for w in ways if w <= len(cols)]
    skipped: list[str] = []
    for w in list(ways):
        n_tab = math.comb(len(cols), w)
        if n_tab > max_tables:
            ways.remove(w)
            skipped.append(f"{_WAYS[w]} tables: {n_tab} tables exceed max_tables={max_tables}")
    root = as_seed_sequence(rng)
    steps = len(syns) * (2 + (keys is not None)) + 2 + (2 if holdout is not None else 0)
    bar = _progress(steps, progress)
    try:
        prop, disc = [], []
        tabs: dict[str, list[pd.DataFrame]] = {_WAYS[w]: [] for w in ways}
        for i, s in enumerate(syns):
            prop.append(
                propensity_metrics(
                    orig, s, cols, method=method, max_params=max_params, categorical=categorical, rng=stream(root, 0, i)
                )
            )
            bar.update(1)
            for w in ways:
                tabs[_WAYS[w]].append(
                    table_utilities(orig, s, cols, tables=_WAYS[w], ngroups=ngroups, categorical=categorical)
                )
            bar.update(1)
            if keys is not None:
                disc.append(attribute_disclosure(orig, s, list(keys), str(target)))
                bar.update(1)
        uni = compare_univariate(orig, syns[0], cols, categorical=categorical)
        bar.update(1)
        biv = compare_bivariate(orig, syns[0], cols, categorical=categorical)
        bar.update(1)
        dcr = mi = None
        if holdout is not None:
            dcr = distance_to_closest_record(
                orig, syns[0], holdout, cols, categorical=categorical, n_sample=n_sample, rng=stream(root, 1)
            )
            bar.update(1)
            mi = membership_inference(orig, syns[0], holdout, cols, categorical=categorical, n_sample=n_sample, rng=stream(root, 2))
            bar.update(1)
        reg = None
        if formula is not None:
            reg = regression_utility(orig, syns, formula, family=family, categorical=categorical)
        missing = compare_missingness(orig, syns, cols, categorical=categorical)
        checks: list[dict[str, Any]] = []
        if rules:
            from ...synthesis import check_rules

            base = check_rules(orig, rules)
            per = [check_rules(s, rules) for s in syns]
            for j, c in enumerate(base):
                checks.append(
                    {"rule": c["rule"], "broken_original": c["broken"], "broken_synthetic": [p[j]["broken"] for p in per]}
                )
    finally:
        bar.close()
    return MicrodataEvaluation(
        propensity=tuple(prop),
        tables=tabs,
        univariate=uni,
        bivariate=biv,
        disclosure=tuple(disc),
        dcr=dcr,
        membership=mi,
        regression=reg,
        skipped=tuple(skipped),
        missingness=missing,
        rules=tuple(checks),
    )


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, show: bool) -> Any:
    if not show:
        return _NoBar()
    import sys

    from tqdm import tqdm

    return tqdm(total=total, desc="evaluate-microdata", file=sys.stderr, leave=False)
