"""Tune one parameter of any cell-wise mechanism to an a priori target (003 section 3.3.5, 000 3.3).

:func:`tune` solves ``metric(parameter) = target`` for one numeric parameter of a
:class:`~cellsafe.mechanisms.CellwiseMechanism` (``alpha``, ``sigma`` or ``nu`` of a saturated
synthesizer, ``epsilon`` of geometric noise, ``V`` of the cell key method's generated ptable...),
the others held fixed: the mechanism declares which of its parameters are tunable and over which
range (``mechanism.tunable_params()``), ``mechanism.with_params`` builds each candidate, a scan
over the range finds where the target is crossed and Brent's method refines it.  Targets outside
the values the scan reaches are an error that states the reachable range.
:func:`poisson_alpha_for_zero_share` is 003's closed form for tau1(0) = tau2(0) under the Poisson.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from .. import apriori
from .._params import Param
from .._progress import progress_bar
from .._results import Result
from ..exceptions import CellsafeError, InvalidArgumentError
from ..mechanisms import CellwiseMechanism
from ._targets import Target, parse_target

__all__ = ["TuningResult", "tune", "poisson_alpha_for_zero_share"]

_N_SCAN = 48
#: Parameters whose every evaluation is slow (GAF's exact moments depend on nu): a coarser scan.
_COARSE = {"nu": 16}
#: A marginal synthesizer's metric plans a whole run per evaluation: a coarser scan.
_N_SCAN_MARGINAL = 16
#: Default tolerances: absolute on a cell-wise mechanism's parameter; relative on a marginal synthesizer's.
_XTOL = 1e-10
_RTOL_MARGINAL = 1e-4
#: How far from a marginal synthesizer's solution the side that meets an inequality is judged (relative).
_SIDE_MARGINAL = 1e-2


@dataclass(frozen=True)
class TuningResult(Result):
    """The solved parameter value.

    Attributes
    ----------
    parameter : str
        The tuned parameter, e.g. 'alpha', 'sigma', 'epsilon', 'V'.
    value : float
        The solution.
    target : str
        The target as text, e.g. 'tau4(1)=0.4'.
    achieved : float
        The metric at the solution (for 'tau1(0)=tau2(0)': tau1(0) - tau2(0), about 0).
    mechanism : CellwiseMechanism
        The tuned mechanism.
    method : str
        'closed form' or 'brentq'.
    n_evaluations : int
        Metric evaluations used.
    converged : bool
    meets : str or None
        For an inequality target, the side of the solution that meets it ('sigma >= 1.234'), found
        by evaluating the metric just above the solution; None for '='.
    """

    parameter: str
    value: float
    target: str
    achieved: float
    mechanism: CellwiseMechanism
    method: str
    n_evaluations: int
    converged: bool = True
    meets: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            self.parameter: self.value,
            "target": self.target,
            "meets": self.meets,
            "achieved": self.achieved,
            "mechanism": repr(self.mechanism),
            "method": self.method,
            "n_evaluations": self.n_evaluations,
        }


def poisson_alpha_for_zero_share(table_or_cell_sizes: Any) -> float:
    """alpha giving tau1(0) = tau2(0) under Poisson synthesis (003 section 3.3.5).

    alpha = -log(1 - sum_{j >= 1} exp(-j) tau2(j) / tau2(0)).

    Examples
    --------
    >>> round(poisson_alpha_for_zero_share({0: 90, 1: 6, 2: 4}), 6)
    0.031016
    """
    cs = apriori.cell_sizes(table_or_cell_sizes)
    w0 = cs.n_zero
    if w0 == 0:
        raise InvalidArgumentError("the table has no random zeros: tau1(0) = tau2(0) needs some cells of count 0.")
    pos = cs.values > 0
    s = float(np.exp(-cs.values[pos].astype(np.float64)) @ cs.cells[pos]) / w0
    if s >= 1:
        raise InvalidArgumentError(
            "no alpha makes tau1(0) = tau2(0): the non-zero cells that become zero already outnumber the zeros "
            f"(sum_j exp(-j) tau2(j) / tau2(0) = {s:.4g} >= 1)."
        )
    return -math.log1p(-s)


def _scan_grid(parameter: str, decl: Param, lo: float, hi: float, n_scan: int | None = None) -> np.ndarray:
    n = n_scan or _COARSE.get(parameter, _N_SCAN)
    if decl.log and lo >= 0 and hi / max(lo, 1e-300) > 100:
        first = max(lo, hi * 1e-7)
        grid = np.geomspace(first, hi, n)
        return np.r_[lo, grid] if lo < first else grid
    return np.linspace(lo, hi, n)


def _tunable(mechanism: CellwiseMechanism, solve: str) -> Param:
    params = mechanism.tunable_params()
    if solve not in params:
        raise InvalidArgumentError(
            f"The 'solve' parameter of tune must be a tunable parameter of {type(mechanism).__name__}: "
            f"{', '.join(map(repr, params)) or 'it has none'}. Got {solve!r} instead."
        )
    return params[solve]


def tune(
    table_or_cell_sizes: Any,
    mechanism: CellwiseMechanism,
    solve: str,
    target: str | Target,
    *,
    bounds: tuple[float, float] | None = None,
    m: int = 1,
    xtol: float | None = None,
    progress: bool = False,
) -> TuningResult:
    """Solve for the parameter that meets an a priori target.

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
        The original table or its cell-size distribution (the table itself for a marginal
        synthesizer).
    mechanism : CellwiseMechanism or MarginalSynthesizer
        Any cell-wise mechanism, or MST / AIM (``MarginalSynthesizer``, tuned to
        ``'marginal_tv(k)'`` from :func:`cellsafe.apriori.marginal_error` on the table's
        marginals); its other parameters stay fixed.
    solve : str
        The parameter to solve for, one of ``mechanism.tunable_params()``: 'alpha', 'sigma',
        'nu', 'zeros_to_ones' of a saturated synthesizer, 'epsilon' of geometric noise, 'V' of
        the cell key method's generated ptable, ...
    target : str or Target
        'tau1(0)=tau2(0)' (as many zeros released as in the original), 'tau4(1)=p',
        'tau3(1)=p' (any 'tauN(k)=p', p in [0, 1]), 'loss=L' (expected squared error of the mean
        of ``m`` implicates), 'hellinger=u', 'within(5)=s', 'marginal_tv(2)=0.05' (marginal
        synthesizers); an inequality ('tau4(1)<=0.4', 'marginal_tv(2)<=0.05', the report's syntax)
        is solved at its boundary, and ``meets`` says which side meets it.
    bounds : (float, float), optional
        Range searched; default the parameter's declared scan range (alpha [0, 10], sigma
        [1e-4, 1e3], nu [-2, 1], zeros_to_ones [0, 1], ...).
    m : int
        Implicates for a loss target.
    xtol : float, optional
        Tolerance on the parameter.  Default: 1e-10 (absolute) for a cell-wise mechanism, whose
        metrics cost little; for a marginal synthesizer, whose every evaluation plans a whole MST or
        AIM run, a relative 1e-4 (epsilon to four significant digits: 1.2746 +- 0.00013), which on
        AIM takes about 27 evaluations where 1e-10 took 42.  A given ``xtol`` is absolute.
    progress : bool, default False
        Show a progress bar over the scan on standard error.

    Returns
    -------
    TuningResult

    Raises
    ------
    InvalidArgumentError
        Unknown parameter or metric, a target out of [0, 1], or a target no value in ``bounds``
        reaches (the message gives the reachable range).

    Notes
    -----
    003 section 3.3.5: under the Poisson, tau1(0) = tau2(0) has the closed form of
    :func:`poisson_alpha_for_zero_share`, used here; everything else is a scan of 48 points
    (log-spaced for scale parameters such as alpha, sigma and epsilon; 16 for nu) followed by
    Brent's method on the first bracket where the target is crossed (tau4(1) is not monotone in
    alpha: the scan finds the smallest alpha).  A candidate the mechanism cannot be built with
    (a ptable with no solution) counts as undefined and is skipped.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> r = tune({0: 900, 1: 60, 2: 40}, SaturatedSynthesizer(Poisson()), "alpha", "tau4(1)=0.4")
    >>> round(r.value, 4), round(r.achieved, 6)
    (0.0254, 0.4)
    """
    tgt = target if isinstance(target, Target) else parse_target(target, m=m)
    from ..mechanisms import MarginalSynthesizer

    if isinstance(mechanism, MarginalSynthesizer) or tgt.metric.on_marginals:
        return _tune_marginal(table_or_cell_sizes, mechanism, solve, tgt, bounds, xtol, progress)
    xtol = _XTOL if xtol is None else float(xtol)
    cs = apriori.cell_sizes(table_or_cell_sizes)
    apriori.check_mechanism(mechanism, "tune")
    decl = _tunable(mechanism, solve)
    lo, hi = _bounds(decl, solve, bounds)

    from ..distributions import Poisson

    if tgt.zero_share and solve == "alpha" and isinstance(getattr(mechanism, "distribution", None), Poisson):
        value = poisson_alpha_for_zero_share(cs)
        if not lo <= value <= hi:
            raise InvalidArgumentError(
                f"tau1(0) = tau2(0) needs alpha = {value:.6g}, outside the bounds [{lo:g}, {hi:g}]."
            )
        mech = mechanism.with_params(alpha=value)
        return TuningResult("alpha", value, tgt.text, _zero_gap(cs, mech), mech, "closed form", 1)

    f, n_eval = _counted(
        mechanism, solve, lambda mech: _zero_gap(cs, mech) if tgt.zero_share else tgt.metric(cs, mech) - tgt.value
    )
    result = _root(f, solve, decl, lo, hi, tgt, mechanism, xtol, n_eval, progress)
    if tgt.op == "=":
        return result
    return replace(result, meets=_side(f, tgt, solve, result.value, lo, hi))



def _counted(mechanism: Any, solve: str, gap: Callable[[Any], float]) -> tuple[Callable[[float], float], Callable[[], int]]:
    """The function tuned (``gap`` of the mechanism with ``solve`` set to x; NaN where that value is refused)
    and the number of times it was evaluated."""
    calls = [0]

    def f(x: float) -> float:
        calls[0] += 1
        try:
            mech = mechanism.with_params(**{solve: x})
        except CellsafeError:
            return math.nan
        return gap(mech)

    return f, lambda: calls[0]

def _bounds(decl: Param, solve: str, bounds: tuple[float, float] | None) -> tuple[float, float]:
    lo, hi = decl.scan if bounds is None else (float(bounds[0]), float(bounds[1]))  # type: ignore[misc]
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidArgumentError(f"bounds must be two finite numbers lo < hi. Got {bounds!r}.")
    if lo < decl.low or hi > decl.high:
        raise InvalidArgumentError(
            f"bounds {bounds!r} leave the range of {solve!r} ({decl.low:g} to {decl.high:g}); narrow them."
        )
    if decl.low_open and lo == decl.low:
        lo = decl.scan[0] if decl.scan and decl.scan[0] > decl.low else np.nextafter(lo, hi)
    return lo, hi


def _tune_marginal(table: Any, mechanism: Any, solve: str, tgt: Target, bounds: tuple[float, float] | None,
                   xtol: float | None, progress: bool) -> TuningResult:
    """A marginal synthesizer (MST, AIM) tuned on the table's marginals by :func:`apriori.marginal_error`.

    Its metric needs the table itself (the structure MST or AIM would choose, and the marginals'
    sizes), never cell sizes; each evaluation plans the run without noise.
    """
    from ..mechanisms import MarginalSynthesizer
    from ..table import CountTable

    if not isinstance(mechanism, MarginalSynthesizer):
        raise InvalidArgumentError(
            f"{tgt.metric.name} is a metric of a marginal synthesizer (MST, AIM). Got {type(mechanism).__name__}."
        )
    if not tgt.metric.on_marginals or tgt.zero_share:
        raise InvalidArgumentError(
            f"a marginal synthesizer is tuned to 'marginal_tv(k)' (k in 1..3), e.g. 'marginal_tv(2)<=0.05'. "
            f"Got {tgt.text!r}."
        )
    if not isinstance(table, CountTable):
        raise InvalidArgumentError(
            f"tuning a marginal synthesizer reads the table's marginals: give the CountTable. Got {type(table).__name__}."
        )
    decl = _tunable(mechanism, solve)
    lo, hi = _bounds(decl, solve, bounds)
    k = tgt.metric.k
    f, n_eval = _counted(mechanism, solve, lambda mech: apriori.marginal_error(table, mech, degrees=(k,)).tv(k) - tgt.value)
    rtol = _RTOL_MARGINAL if xtol is None else None
    result = _root(f, solve, decl, lo, hi, tgt, mechanism, 1e-12 if xtol is None else float(xtol), n_eval,
                   progress, n_scan=_N_SCAN_MARGINAL, rtol=rtol)
    if tgt.op == "=":
        return result
    # a marginal synthesizer's metric wobbles by about 1e-3 of itself over epsilons 1e-5 apart (the fit stops
    # by a tolerance): the side is judged 1% of epsilon away, where the trend dominates
    return replace(result, meets=_side(f, tgt, solve, result.value, lo, hi, step=_SIDE_MARGINAL * abs(result.value)))


def _side(f: Callable[[float], float], tgt: Target, solve: str, x: float, lo: float, hi: float,
          step: float | None = None) -> str | None:
    """Which side of the boundary ``x`` meets an inequality target: the metric just above ``x`` decides."""
    step = max(abs(x), hi - lo) * 1e-6 if step is None else step
    above = min(x + step, hi)
    below = max(x - step, lo)
    if tgt.met(f(above) + tgt.value):
        return f"{solve} >= {x:.6g}"
    if tgt.met(f(below) + tgt.value):
        return f"{solve} <= {x:.6g}"
    return None


def _zero_gap(cs: apriori.CellSizes, mech: CellwiseMechanism) -> float:
    """tau1(0) - tau2(0): zeros released minus zeros in the original, as shares of the cells."""
    t = apriori.tau(cs, mech, k=[0])
    return float(t.tau1.iloc[0] - t.tau2.iloc[0])


def _root(
    f: Callable[[float], float],
    solve: str,
    decl: Param,
    lo: float,
    hi: float,
    tgt: Target,
    mechanism: CellwiseMechanism,
    xtol: float,
    count: Callable[[], int],
    progress: bool = False,
    n_scan: int | None = None,
    rtol: float | None = None,
) -> TuningResult:
    grid = _scan_grid(solve, decl, lo, hi, n_scan)
    with progress_bar(len(grid), progress, f"scanning {solve}", unit="value") as bar:
        vals = np.empty(len(grid))
        for i, x in enumerate(grid):
            vals[i] = f(float(x))
            bar.update(1)
    finite = np.isfinite(vals)
    if not finite.any():
        raise InvalidArgumentError(f"{tgt.metric.name} is undefined for every {solve} in [{lo:g}, {hi:g}].")
    exact = np.flatnonzero(finite & (vals == 0))
    sign = np.sign(vals)
    cross = np.flatnonzero(finite[:-1] & finite[1:] & (sign[:-1] * sign[1:] < 0))
    if exact.size and (not cross.size or exact[0] <= cross[0]):
        x = float(grid[exact[0]])
    elif cross.size:
        i = int(cross[0])
        from scipy.optimize import brentq  # imported here: scipy.optimize is slow to import

        x = float(brentq(f, float(grid[i]), float(grid[i + 1]), xtol=xtol, rtol=rtol or 4 * np.finfo(float).eps))
    else:
        offset = 0.0 if tgt.zero_share else tgt.value
        reach = vals[finite] + offset
        what = "tau1(0) - tau2(0)" if tgt.zero_share else tgt.metric.name
        want = "0" if tgt.zero_share else f"{tgt.value:g}"
        raise InvalidArgumentError(
            f"target {tgt.text} is unreachable by {solve} in [{lo:g}, {hi:g}] with {mechanism!r}: "
            f"{what} ranges over [{reach.min():.6g}, {reach.max():.6g}] there, not {want}. "
            "Choose a target in that range, another parameter, or wider bounds."
        )
    mech = mechanism.with_params(**{solve: x})
    achieved = f(x) + (0.0 if tgt.zero_share else tgt.value)
    return TuningResult(solve, x, tgt.text, achieved, mech, "brentq", count())
