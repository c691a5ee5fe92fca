"""The risk-utility frontier over mechanisms and parameters (003 section 4.5, 000 section 4.5).

:func:`frontier` evaluates a grid of cell-wise mechanisms a priori on one cell-size distribution
and returns every (risk, utility) point with the non-dominated set: no other point has
lower-or-equal risk and higher-or-equal utility, one of them strictly.  The grid may mix classes:
saturated synthesis, the cell key method and geometric noise on one yardstick.
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
from ._targets import Metric, parse_metric

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


def _mechanism(point: Any) -> CellwiseMechanism:
    if isinstance(point, Mapping) and "mechanism" not in point and "family" not in point:
        raise InvalidArgumentError(f"every grid point needs a 'family' (or 'mechanism'). Got {dict(point)!r}.")
    fam = str(point.get("family", "")).lower() if isinstance(point, Mapping) else ""
    required = [p.name for p in entry("distribution", fam).params or () if p.default is REQUIRED] if fam in names(
        "distribution") else []
    for name in required:
        if _isnan(point.get(name, math.nan)):
            raise InvalidArgumentError(f"grid point {dict(point)!r}: family {fam!r} needs a {name!r}.")
    mech = make_mechanism(point)
    if not isinstance(mech, CellwiseMechanism):
        raise InvalidArgumentError(
            f"the frontier compares cell-wise mechanisms a priori; {mech!r} is not one (small count rounding has "
            "no cell-wise transition probabilities)."
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
        ``mse_per_cell``, the expected squared error per cell that the utility transforms; and
        ``undefined``, why the risk or utility of a setting is not a number ('' when both are: a
        setting is never dropped silently; the cell key method with js >= 1 has no tau4(1)).
    risk : str
        The risk metric, e.g. 'tau4(1)' (lower is safer).
    utility : str
        'mse' (1 - invlogit(MSE per cell), 000 Figure 7) or 'hellinger' (expected Hellinger utility).
    """

    points: pd.DataFrame = field(repr=False)
    risk: str
    utility: str

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
    grid: Sequence[Mapping[str, Any] | str | CellwiseMechanism] | None = None,
    *,
    families: Sequence[str] | None = None,
    n: int = 100,
    alpha: float = 0.0,
    risk: str = "tau4(1)",
    utility: str = "mse",
    progress: bool = False,
) -> Frontier:
    """Evaluate a grid of synthesizers a priori and find the risk-utility frontier.

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
    grid : sequence of dict, spec or CellwiseMechanism, optional
        Settings ``{"family": "nbi", "sigma": 1.0, "alpha": 0.0}`` (``nu`` for gaf,
        ``zeros_to_ones`` optional), ``{"mechanism": "ckm", "D": 5, "V": 3}``, specs such as
        ``'geometric:epsilon=1'``, or mechanisms; classes may be mixed.  Default
        :func:`default_grid(families, n, alpha)`.
    families : sequence of str, optional
        Families for the default grid (default: every registered family).
    n : int
        Size of the default grid.
    alpha : float
        Pseudocount of the default grid's NBI, PIG and GAF settings.
    risk : str
        Risk metric, 'tau4(1)' by default (any 'tauN(k)').
    utility : {'mse', 'hellinger'}
        1 - invlogit(expected squared error per cell) as in 000 Figure 7, or the expected
        Hellinger utility (slower: it sums whole transition rows).
    progress : bool, default False
        Show a progress bar over the grid on standard error.

    Returns
    -------
    Frontier

    Examples
    --------
    >>> f = frontier({0: 900, 1: 60, 2: 40, 30: 5}, families=["poisson", "nbi"], n=10)
    >>> f
    Frontier(risk='tau4(1)', utility='mse', points=10, efficient=6)
    """
    cs = apriori.cell_sizes(table_or_cell_sizes)
    risk_m = parse_metric(risk)
    if risk_m.kind != "tau":
        raise InvalidArgumentError(f"the risk metric must be 'tauN(k)', for example 'tau4(1)'. Got {risk!r}.")
    if str(utility).lower() not in ("mse", "hellinger"):
        raise InvalidArgumentError(f"unknown utility {utility!r}; use 'mse' or 'hellinger'.")
    util_m: Metric = parse_metric(str(utility).lower())
    if grid is None:
        grid = default_grid(families, n, alpha)
    rows = []
    mse = util_m.kind == "mse_utility"
    grid = list(grid)
    from .._work import projected

    started = time.perf_counter()
    with progress_bar(len(grid), progress, "frontier", unit="setting") as bar:
        for done, point in enumerate(grid):
            projected(f"a frontier of {len(grid):,} settings", done, len(grid), started, "use a smaller grid (--grid N)")
            mech = _mechanism(point)
            params = {k: float(v) for k, v in mech.flat_params().items() if _numeric(v)}
            name = mechanism_family(mech)
            if mse:
                # 1 - invlogit(MSE) is 0 in floating point once the MSE passes about 745: keep the MSE
                # itself for ranking and plotting, so that large-noise settings stay apart
                err = apriori._squared_error(cs, mech, 1)
                util, extra = err.utility(), {"mse_per_cell": err.mse}
            else:
                util, extra = util_m(cs, mech), {}
            risk_value = risk_m(cs, mech)
            rows.append(
                {
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
                    "undefined": "; ".join(filter(None, (risk_m.undefined(cs, mech, risk_value),
                                                         util_m.undefined(cs, mech, util)))),
                }
            )
            bar.update(1)
    if not rows:
        raise InvalidArgumentError("the grid is empty; give at least one setting.")
    points = pd.DataFrame(rows)
    tail = ["spec", "label", "risk", "utility"] + (["mse_per_cell"] if mse else []) + ["undefined"]
    points = points[[c for c in points.columns if c not in tail] + tail]
    # the same order as the utility's (it decreases in the MSE), without its ties at 0
    goodness = -points["mse_per_cell"].to_numpy(float) if mse else points["utility"].to_numpy(float)
    points["efficient"] = _efficient(points["risk"].to_numpy(float), goodness)
    return Frontier(points=points, risk=risk_m.name, utility=util_m.name if util_m.kind == "hellinger" else "mse")


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
