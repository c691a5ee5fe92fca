"""The risk-utility frontier over families and parameters (003 section 4.5, 000 section 4.5).

:func:`frontier` evaluates a grid of saturated synthesizers a priori on one cell-size
distribution and returns every (risk, utility) point with the non-dominated set: no other point
has lower-or-equal risk and higher-or-equal utility, one of them strictly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import apriori
from ..exceptions import InvalidArgumentError
from ._targets import Metric, parse_metric

__all__ = ["Frontier", "frontier", "default_grid", "FAMILIES"]

FAMILIES = ("poisson", "nbi", "pig", "gaf")


def default_grid(families: Sequence[str] = FAMILIES, n: int = 100, alpha: float = 0.0) -> list[dict[str, Any]]:
    """About ``n`` parameter settings spread over ``families``.

    Poisson varies alpha (0 and a log grid to 0.1); NBI and PIG vary sigma on a log grid from
    0.01 to 10 (003 Table 4's range); GAF crosses sigma (0.25..4) with nu (0..-1, 000 section
    4.2's values included).  Other families use the given ``alpha``.

    Examples
    --------
    >>> len(default_grid())
    100
    """
    fams = _check_families(families)
    shares = {"poisson": 1, "nbi": 3, "pig": 3, "gaf": 3}
    total = sum(shares[f] for f in fams)
    out: list[dict[str, Any]] = []
    budget = n
    for i, fam in enumerate(fams):
        size = budget if i == len(fams) - 1 else max(2, round(n * shares[fam] / total))
        budget -= size
        if fam == "poisson":
            alphas = np.r_[0.0, np.geomspace(1e-3, 0.1, max(size - 1, 1))][:size]
            out += [{"family": "poisson", "alpha": float(a)} for a in alphas]
        elif fam in ("nbi", "pig"):
            out += [{"family": fam, "sigma": float(s), "alpha": alpha} for s in np.geomspace(0.01, 10.0, size)]
        else:
            n_nu = 5 if size >= 10 else 1
            n_sigma = max(1, size // n_nu)
            nus = np.linspace(0.0, -1.0, n_nu)
            sigmas = np.geomspace(0.25, 4.0, n_sigma)
            pts = [{"family": "gaf", "sigma": float(s), "nu": float(v), "alpha": alpha} for v in nus for s in sigmas]
            extra = size - len(pts)
            pts += [
                {"family": "gaf", "sigma": float(s), "nu": -0.5, "alpha": alpha}
                for s in np.geomspace(0.3, 3.0, max(extra, 0))
            ]
            out += pts[:size]
    return out


def _check_families(families: Iterable[str]) -> list[str]:
    fams = [str(f).lower() for f in families]
    if not fams:
        raise InvalidArgumentError("families must name at least one of 'poisson', 'nbi', 'pig', 'gaf'.")
    for f in fams:
        if f not in FAMILIES:
            raise InvalidArgumentError(f"unknown family {f!r}; choose from {', '.join(map(repr, FAMILIES))}.")
    return fams


def _mechanism(point: Mapping[str, Any]) -> Any:
    from ..distributions import make_distribution
    from ..mechanisms.saturated import SaturatedSynthesizer

    fam = str(point["family"]).lower()
    kwargs = {}
    if fam != "poisson":
        if point.get("sigma") is None:
            raise InvalidArgumentError(f"grid point {dict(point)!r}: family {fam!r} needs a 'sigma'.")
        kwargs["sigma"] = point["sigma"]
    if fam == "gaf" and point.get("nu") is not None and not _isnan(point.get("nu")):
        kwargs["nu"] = point["nu"]
    return SaturatedSynthesizer(
        make_distribution(fam, **kwargs),
        alpha=float(point.get("alpha", 0.0) or 0.0),
        zeros_to_ones=float(point.get("zeros_to_ones", 0.0) or 0.0),
    )


def _isnan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


@dataclass(frozen=True)
class Frontier:
    """Risk and utility of a grid of mechanisms, with the non-dominated set.

    Attributes
    ----------
    points : pandas.DataFrame
        One row per setting: ``family``, ``sigma``, ``nu``, ``alpha``, ``zeros_to_ones``,
        ``mechanism`` (repr), ``risk``, ``utility``, ``efficient`` (True when non-dominated).
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

    def __repr__(self) -> str:
        return (
            f"Frontier(risk={self.risk!r}, utility={self.utility!r}, points={len(self.points)}, "
            f"efficient={int(self.points['efficient'].sum())})"
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
    prev_r, prev_u = None, None
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
    grid: Sequence[Mapping[str, Any]] | None = None,
    *,
    families: Sequence[str] = FAMILIES,
    n: int = 100,
    alpha: float = 0.0,
    risk: str = "tau4(1)",
    utility: str = "mse",
) -> Frontier:
    """Evaluate a grid of synthesizers a priori and find the risk-utility frontier.

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
    grid : sequence of dict, optional
        Settings ``{"family": "nbi", "sigma": 1.0, "alpha": 0.0}`` (``nu`` for gaf,
        ``zeros_to_ones`` optional); default :func:`default_grid(families, n, alpha)`.
    families : sequence of str
        Families for the default grid.
    n : int
        Size of the default grid.
    alpha : float
        Pseudocount of the default grid's NBI, PIG and GAF settings.
    risk : str
        Risk metric, 'tau4(1)' by default (any 'tauN(k)').
    utility : {'mse', 'hellinger'}
        1 - invlogit(expected squared error per cell) as in 000 Figure 7, or the expected
        Hellinger utility (slower: it sums whole transition rows).

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
    for point in grid:
        if "family" not in point:
            raise InvalidArgumentError(f"every grid point needs a 'family'. Got {dict(point)!r}.")
        mech = _mechanism(point)
        params = mech.distribution.params()
        rows.append(
            {
                "family": str(point["family"]).lower(),
                "sigma": params.get("sigma", math.nan),
                "nu": params.get("nu", math.nan),
                "alpha": float(mech.alpha),
                "zeros_to_ones": float(mech.zeros_to_ones),
                "mechanism": repr(mech),
                "risk": risk_m(cs, mech),
                "utility": util_m(cs, mech),
            }
        )
    points = pd.DataFrame(rows)
    if points.empty:
        raise InvalidArgumentError("the grid is empty; give at least one setting.")
    points["efficient"] = _efficient(points["risk"].to_numpy(float), points["utility"].to_numpy(float))
    return Frontier(points=points, risk=risk_m.name, utility=util_m.name if util_m.kind == "hellinger" else "mse")
