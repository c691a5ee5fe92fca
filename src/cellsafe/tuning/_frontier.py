"""The risk-utility frontier over mechanisms and parameters (003 section 4.5, 000 section 4.5).

:func:`frontier` evaluates a grid of mechanisms a priori on one table and returns every (risk,
utility) point with the non-dominated set: no other point has lower-or-equal risk and
higher-or-equal utility, one of them strictly.  The grid may mix classes: saturated synthesis,
the cell key method and geometric noise on one yardstick, and the marginal synthesizers (MST,
AIM) beside the DP mechanisms on the privacy loss (see :mod:`cellsafe.tuning._axes` for which
axis is defined for which mechanism).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import apriori
from .._progress import progress_bar
from .._results import Result
from .._catalog import Grid, entry
from .._params import REQUIRED
from .._registry import names
from ..exceptions import InvalidArgumentError
from ..mechanisms import CellwiseMechanism, make_mechanism, mechanism_family, mechanism_spec
from ._axes import check_risk, check_utility, is_marginal, marginal_tv, privacy_columns, why_undefined
from ._targets import Metric

__all__ = ["Frontier", "frontier", "default_grid", "FAMILIES"]


def family_names() -> tuple[str, ...]:
    """The registered count families."""
    return names("distribution")

#: The built-in count families (the default grid spreads over every registered family).
FAMILIES = ("poisson", "nbi", "pig", "gaf")


def default_grid(families: Sequence[str] | None = None, n: int = 100, alpha: float = 0.0) -> list[dict[str, Any]]:
    """About ``n`` parameter settings spread over ``families`` (default: every registered family).

    Each family declares its part of the grid in the catalog (:class:`cellsafe._catalog.Grid`): its
    share of the points and the parameters it varies.  Poisson varies alpha (0 and a log grid to
    0.1); NBI and PIG vary sigma on a log grid from 0.01 to 10 (003 Table 4's range); GAF crosses
    sigma (0.25..4) with nu (0..-1, 000 section 4.2's values included).  Families that do not vary
    alpha use the given ``alpha``.

    Examples
    --------
    >>> len(default_grid())
    100
    """
    fams = _check_families(family_names() if families is None else families)
    grids = {f: _grid_of(f) for f in fams}
    total = sum(g.share for g in grids.values())
    out: list[dict[str, Any]] = []
    budget = n
    for i, fam in enumerate(fams):
        size = budget if i == len(fams) - 1 else max(2, round(n * grids[fam].share / total))
        budget -= size
        fixed = {} if any(ax[0] == "alpha" for ax in grids[fam].axes) else {"alpha": alpha}
        out += [{"family": fam, **point, **fixed} for point in _points(grids[fam].axes, size)]
    return out


def _grid_of(family: str) -> Grid:
    grid = entry("distribution", family).grid
    if grid is None:
        raise InvalidArgumentError(f"family {family!r} declares no part of the default grid; give the grid's settings.")
    return grid


def _axis(first: float, last: float, log: bool, size: int) -> np.ndarray:
    """``size`` values from ``first`` to ``last``; a log axis from 0 is 0 and a log grid over the last two decades."""
    if size < 1:
        return np.zeros(0)
    if not log:
        return np.linspace(first, last, size)
    if first == 0:
        return np.r_[0.0, np.geomspace(last * 1e-2, last, max(size - 1, 1))][:size]
    return np.geomspace(first, last, size)


def _points(axes: tuple[tuple[str, float, float, bool], ...], size: int) -> list[dict[str, float]]:
    """``size`` settings over one axis, or two crossed (five values of the second; the rest on the first at the
    second's midpoint)."""
    (name, first, last, log), *rest = axes
    if not rest:
        return [{name: float(v)} for v in _axis(first, last, log, size)]
    name2, first2, last2, log2 = rest[0]
    n2 = 5 if size >= 10 else 1
    n1 = max(1, size // n2)
    pts = [{name: float(v), name2: float(w)} for w in _axis(first2, last2, log2, n2) for v in _axis(first, last, log, n1)]
    middle = float(_axis(first2, last2, log2, 3)[1])
    pts += [{name: float(v), name2: middle} for v in _axis(first, last, log, max(size - len(pts), 0))]
    return pts[:size]


def _check_families(families: Iterable[str]) -> list[str]:
    fams = [str(f).lower() for f in families]
    known = family_names()
    if not fams:
        raise InvalidArgumentError(f"families must name at least one of {', '.join(map(repr, known))}.")
    for f in fams:
        if f not in known:
            raise InvalidArgumentError(f"unknown family {f!r}; choose from {', '.join(map(repr, known))}.")
    return fams


def _mechanism(point: Any) -> Any:
    if isinstance(point, Mapping) and "mechanism" not in point and "family" not in point:
        raise InvalidArgumentError(f"every grid point needs a 'family' (or 'mechanism'). Got {dict(point)!r}.")
    fam = str(point.get("family", "")).lower() if isinstance(point, Mapping) else ""
    required = [p.name for p in entry("distribution", fam).params or () if p.default is REQUIRED] if fam in names(
        "distribution") else []
    for name in required:
        if _isnan(point.get(name, math.nan)):
            raise InvalidArgumentError(f"grid point {dict(point)!r}: family {fam!r} needs a {name!r}.")
    mech = make_mechanism(point)
    if not isinstance(mech, CellwiseMechanism) and not is_marginal(mech):
        raise InvalidArgumentError(
            f"the frontier compares cell-wise mechanisms and the marginal synthesizers (mst, aim) a priori; {mech!r} "
            "is neither (small count rounding has no cell-wise transition probabilities)."
        )
    return mech


def _isnan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


@dataclass(frozen=True)
class Frontier(Result):
    """Risk and utility of a grid of mechanisms, with the non-dominated set.

    Attributes
    ----------
    points : pandas.DataFrame
        One row per setting: ``mechanism`` (the spec's name: 'nbi', 'ckm', 'geometric'...),
        ``family`` (the same, kept for grids of count families), one column per numeric
        parameter of any mechanism in the grid (``sigma``, ``nu``, ``alpha``, ``zeros_to_ones``,
        ``epsilon``, ``V``...; NaN where a mechanism has no such parameter), ``spec`` (e.g.
        'nbi:sigma=1,alpha=0.01', to label points and rebuild the mechanism), ``label`` (repr),
        ``risk``, ``utility``, ``efficient`` (True when non-dominated); with the MSE utility also
        ``mse_per_cell``, the expected squared error per cell that the utility transforms; with
        'marginal_tv(k)' also ``marginal_tv``, the expected error itself (``utility`` is 1 minus
        it); ``loss_epsilon``, ``loss_delta``, ``loss_rho``: the privacy loss of one release under
        :attr:`relation` (NaN without a DP guarantee); and ``undefined``, why the risk or utility of
        a setting is not a number ('' when both are: a setting is never dropped silently; the cell
        key method with js >= 1 has no tau4(1), MST and AIM have no cell-wise metric).
    risk : str
        The risk metric, e.g. 'tau4(1)', or a privacy loss 'epsilon' or 'rho' (lower is safer).
    utility : str
        'mse' (1 - invlogit(MSE per cell), 000 Figure 7), 'hellinger' (expected Hellinger utility)
        or 'marginal_tv(k)' (1 minus the expected average TV error of the k-way marginals).
    relation : str
        The neighbour relation of the privacy loss columns.
    """

    points: pd.DataFrame = field(repr=False)
    risk: str
    utility: str
    relation: str = "replace-one"

    @property
    def efficient(self) -> pd.DataFrame:
        """The non-dominated points, by increasing risk."""
        return self.points[self.points["efficient"]].sort_values("risk")

    @property
    def undefined(self) -> pd.DataFrame:
        """The points whose risk or utility is undefined, with the reason in ``undefined``: never on the frontier,
        never left out."""
        return self.points[self.points["undefined"] != ""]

    def to_frame(self) -> pd.DataFrame:
        """The points (a copy)."""
        return self.points.copy()

    def to_dict(self) -> dict[str, Any]:
        return {
            "risk": self.risk,
            "utility": self.utility,
            "relation": self.relation,
            "n_points": len(self.points),
            "n_efficient": int(self.points["efficient"].sum()),
            "undefined": {s: why for s, why in zip(self.undefined["spec"], self.undefined["undefined"])},
            "mechanisms": sorted(self.points["mechanism"].unique().tolist()),
        }

    def __repr__(self) -> str:
        return (
            f"Frontier(risk={self.risk!r}, utility={self.utility!r}, points={len(self.points)}, "
            f"efficient={int(self.points['efficient'].sum())}"
            + (f", undefined={len(self.undefined)})" if len(self.undefined) else ")")
        )


def _efficient(risk: np.ndarray, util: np.ndarray) -> np.ndarray:
    """True for points no other point dominates (lower-or-equal risk, higher-or-equal utility)."""
    ok = np.isfinite(risk) & np.isfinite(util)
    out = np.zeros(risk.size, dtype=bool)
    idx = np.flatnonzero(ok)
    if not idx.size:
        return out
    order = idx[np.lexsort((-util[idx], risk[idx]))]  # by risk, ties: best utility first
    best = -np.inf
    prev_r, prev_u, prev_i = None, None, -1
    for i in order.tolist():
        if util[i] > best:
            out[i] = True
            best = util[i]
        elif prev_r is not None and risk[i] == prev_r and util[i] == prev_u and out[prev_i]:
            out[i] = True  # exact duplicate of an efficient point
        prev_r, prev_u, prev_i = risk[i], util[i], i
    return out


def frontier(
    table_or_cell_sizes: Any,
    grid: Sequence[Mapping[str, Any] | str | Any] | None = None,
    *,
    families: Sequence[str] | None = None,
    n: int = 100,
    alpha: float = 0.0,
    risk: str = "tau4(1)",
    utility: str = "mse",
    relation: str = "replace-one",
    delta: float = 1e-9,
    progress: bool = False,
) -> Frontier:
    """Evaluate a grid of synthesizers a priori and find the risk-utility frontier.

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
        The original table, or its cell-size distribution when every setting is cell-wise (a
        marginal synthesizer reads the table's marginals: give the table).
    grid : sequence of dict, spec or mechanism, optional
        Settings ``{"family": "nbi", "sigma": 1.0, "alpha": 0.0}`` (``nu`` for gaf,
        ``zeros_to_ones`` optional), ``{"mechanism": "ckm", "D": 5, "V": 3}``, specs such as
        ``'geometric:epsilon=1'``, ``'mst:epsilon=1'`` or ``'aim:epsilon=1'``, or mechanisms;
        classes may be mixed.  Default :func:`default_grid(families, n, alpha)`.
    families : sequence of str, optional
        Families for the default grid (default: every registered family).
    n : int
        Size of the default grid.
    alpha : float
        Pseudocount of the default grid's NBI, PIG and GAF settings.
    risk : str
        'tau4(1)' by default (any 'tauN(k)': cell-wise mechanisms), or the privacy loss of one
        release under ``relation``: 'epsilon' (of (epsilon, delta)-DP) or 'rho' (of zCDP), for
        every mechanism with a differential-privacy guarantee, MST and AIM included.
    utility : {'mse', 'hellinger', 'marginal_tv(k)'}
        1 - invlogit(expected squared error per cell) as in 000 Figure 7, or the expected
        Hellinger utility (slower: it sums whole transition rows), both cell-wise; or, for the
        marginal synthesizers, 'marginal_tv(k)' (k in 1..3): the expected average total-variation
        error of the released k-way marginals (:func:`cellsafe.apriori.marginal_error`; lower is
        better, ``utility`` is 1 minus it).
    relation : {'replace-one', 'add-remove'}
        The neighbour relation of the privacy loss columns (and of risk 'epsilon' or 'rho').
    delta : float
        The delta at which a zCDP mechanism without its own (the discrete Gaussian) states epsilon.
    progress : bool, default False
        Show a progress bar over the grid on standard error.

    Returns
    -------
    Frontier

    Notes
    -----
    Every point carries every axis that is defined for it: the cell-wise ``risk`` and utility of
    a cell-wise mechanism; ``loss_epsilon``, ``loss_delta`` and ``loss_rho`` of any DP mechanism;
    ``marginal_tv`` of a marginal synthesizer.  A metric that does not apply (tau4(1) or the MSE
    per cell of MST, whose records come from a model and have no cell-wise transition; the
    marginal error of geometric noise, for which cellsafe has no a priori formula; epsilon of
    saturated synthesis) is NaN with the reason in ``undefined``: such a point is never on the
    frontier and never left out.

    Examples
    --------
    >>> f = frontier({0: 900, 1: 60, 2: 40, 30: 5}, families=["poisson", "nbi"], n=10)
    >>> f
    Frontier(risk='tau4(1)', utility='mse', points=10, efficient=6)
    """
    risk_m = check_risk(risk)
    util_m = check_utility(utility)
    from .._privacy import check_relation

    relation = check_relation(relation, "frontier")
    if grid is None:
        grid = default_grid(families, n, alpha)
    grid = list(grid)
    mechs = [_mechanism(point) for point in grid]
    marginal = any(is_marginal(m) for m in mechs)
    table = table_or_cell_sizes
    if marginal:
        from ..table import CountTable

        if not isinstance(table, CountTable):
            raise InvalidArgumentError(
                "a marginal synthesizer (mst, aim) on the frontier reads the table's marginals: give the CountTable, "
                f"not its cell sizes. Got {type(table).__name__}.")
    cs = apriori.cell_sizes(table) if not all(is_marginal(m) for m in mechs) else None
    mse = util_m.kind == "mse_utility"
    tv = util_m.kind == "marginal_tv"
    rows = []
    from .._work import projected

    started = time.perf_counter()
    with progress_bar(len(grid), progress, "frontier", unit="setting") as bar:
        for done, mech in enumerate(mechs):
            projected(f"a frontier of {len(grid):,} settings", done, len(grid), started, "use a smaller grid (--grid N)")
            rows.append(_point(mech, table, cs, risk_m, util_m, relation, delta))
            bar.update(1)
    if not rows:
        raise InvalidArgumentError("the grid is empty; give at least one setting.")
    points = pd.DataFrame(rows)
    tail = (["spec", "label", "risk", "utility"] + (["mse_per_cell"] if mse else []) + (["marginal_tv"] if tv else [])
            + ["loss_epsilon", "loss_delta", "loss_rho", "undefined"])
    points = points[[c for c in points.columns if c not in tail] + tail]
    # the same order as the utility's (it decreases in the MSE), without its ties at 0
    goodness = (-points["mse_per_cell"].to_numpy(float) if mse else -points["marginal_tv"].to_numpy(float) if tv
                else points["utility"].to_numpy(float))
    points["efficient"] = _efficient(points["risk"].to_numpy(float), goodness)
    risk_name = risk_m if isinstance(risk_m, str) else risk_m.name
    util_name = "mse" if mse else util_m.name
    return Frontier(points=points, risk=risk_name, utility=util_name, relation=relation)


def _point(mech: Any, table: Any, cs: Any, risk_m: Any, util_m: Metric, relation: str, delta: float) -> dict[str, Any]:
    """One row of the frontier: the mechanism's parameters, every axis defined for it, and why the others are not."""
    params = {k: float(v) for k, v in mech.flat_params().items() if _numeric(v)}
    name = mechanism_family(mech)
    privacy = privacy_columns(mech, relation, delta)
    why_risk, why_util = why_undefined(risk_m, util_m, mech, name)
    util_undefined = bool(why_util) or (bool(why_risk) and is_marginal(mech) and not util_m.on_marginals)
    extra: dict[str, Any] = {}
    util = math.nan
    if util_m.kind == "mse_utility":
        extra["mse_per_cell"] = math.nan
    if util_m.kind == "marginal_tv":
        extra["marginal_tv"] = math.nan
    if not util_undefined:
        if util_m.kind == "mse_utility":
            # 1 - invlogit(MSE) is 0 in floating point once the MSE passes about 745: keep the MSE
            # itself for ranking and plotting, so that large-noise settings stay apart
            err = apriori._squared_error(cs, mech, 1)
            util, extra["mse_per_cell"] = err.utility(), err.mse
        elif util_m.kind == "marginal_tv":
            extra["marginal_tv"] = marginal_tv(table, mech, util_m.k)
            util = 1.0 - extra["marginal_tv"]
        else:
            util = util_m(cs, mech)
        why_util = util_m.undefined(cs, mech, util) if util_m.kind != "marginal_tv" and not math.isfinite(util) else ""
    risk_value = math.nan
    if not why_risk:
        if isinstance(risk_m, str):
            risk_value = privacy["loss_epsilon" if risk_m == "epsilon" else "loss_rho"]
            if not math.isfinite(risk_value):
                why_risk = f"{name} states no finite {risk_m} under {relation} neighbours"
        else:
            risk_value = risk_m(cs, mech)
            why_risk = risk_m.undefined(cs, mech, risk_value)
    return {
        "mechanism": name,
        "family": name,
        "sigma": math.nan,
        "nu": math.nan,
        "alpha": math.nan,
        "zeros_to_ones": math.nan,
        **params,
        "spec": mechanism_spec(mech),
        "label": repr(mech),
        "risk": risk_value,
        "utility": util,
        **extra,
        **privacy,
        "undefined": "; ".join(filter(None, (why_risk, why_util))),
    }


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
