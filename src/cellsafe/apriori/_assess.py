"""All a priori metrics at once: :func:`assess` and its :class:`Assessment`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._frames import MetricGrid, pd, tau_dict, within_dict
from .._results import Result
from .._validation import check_integer, check_real
from ..exceptions import InvalidArgumentError
from ..mechanisms import CellwiseMechanism, mechanism_record
from ._risk import _tau_grid
from ._rows import TAIL_TOL, _moments
from ._sizes import DEFAULT_K, DEFAULT_P, _check_counts, _check_mechanism, _check_percentages, cell_sizes
from ._utility import ExpectedHellinger, SquaredError, TotalDistribution, _hellinger, _squared_error, _total, _within_grid


@dataclass(frozen=True)
class Assessment(Result):
    """A priori risk and utility of a mechanism on a cell-size distribution.

    Attributes
    ----------
    mechanism : str
        repr of the mechanism.
    n_cells, total : float
        Non-structural cells and original grand total.
    tau : pandas.DataFrame
        tau1..tau4 by k (see :func:`tau`); built on first use (JSON and text need no pandas).
    squared_error : SquaredError
    total_distribution : TotalDistribution
    hellinger : ExpectedHellinger or None
        None when not requested.
    within : pandas.DataFrame
        Expected share within p% (see :func:`expected_within`); built on first use.
    d : tuple of float
        Distances d for P(|n_syn - n| < d).
    spec : str or None
        The spec that rebuilds the mechanism (:func:`~cellsafe.mechanisms.mechanism_spec`).
    ptable_sha256 : str or None
        The sha256 of the mechanism's perturbation table, when it has one (as manifests record it).
    """

    mechanism: str
    n_cells: float
    total: float
    tau_grid: MetricGrid = field(repr=False)
    squared_error: SquaredError
    total_distribution: TotalDistribution
    hellinger: ExpectedHellinger | None
    within_grid: MetricGrid = field(repr=False)
    d: tuple[float, ...] = ()
    spec: str | None = None
    ptable_sha256: str | None = None

    @property
    def tau(self) -> pd.DataFrame:
        """tau1..tau4 by k (see :func:`tau`)."""
        return self.tau_grid.frame()

    @property
    def within(self) -> pd.DataFrame:
        """Expected share within p% by p, of all cells and of the non-zero ones (see :func:`expected_within`)."""
        return self.within_grid.frame()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the keys of ``cellsafe assess --json``)."""
        tot = self.total_distribution
        out: dict[str, Any] = {
            "mechanism": self.mechanism,
            "spec": self.spec,
            "n_cells": int(self.n_cells) if float(self.n_cells).is_integer() else self.n_cells,
            "tau": tau_dict(self.tau_grid),
            "expected_squared_error": self.squared_error.per_implicate,
            "expected_squared_error_mean_of_implicates": self.squared_error.mean_of_implicates,
            "m": self.squared_error.m,
            "mse_per_cell": self.squared_error.mse,
            "mse_utility": self.squared_error.utility(),
            "total": {
                "original": tot.original,
                "expected": tot.expected,
                "sd": tot.sd,
                "prob_within": {_num_key(d): tot.prob_within(d) for d in self.d},
            },
            "within_p": within_dict(self.within_grid),
        }
        if self.hellinger is not None:
            out["expected_hellinger_distance"] = self.hellinger.distance
            out["expected_hellinger_utility"] = self.hellinger.utility
        if self.ptable_sha256 is not None:
            out["ptable_sha256"] = self.ptable_sha256
        return out

    def to_frame(self) -> pd.DataFrame:
        """The risk table: tau1..tau4 by k (a copy of :attr:`tau`)."""
        return self.tau.copy()

    def _title(self) -> str:
        return f"A priori assessment of {self.mechanism}"

    def summary(self) -> str:
        """A plain-text report."""
        lines = [
            f"A priori assessment of {self.mechanism}",
            f"cells {self.n_cells:,.0f}, original total {self.total:,.0f}",
            "",
            self.tau_grid.to_string(lambda x: f"{x:.4f}"),
            "",
            f"expected squared error  {self.squared_error.per_implicate:,.6g} per implicate, "
            f"{self.squared_error.mean_of_implicates:,.6g} for the mean of m = {self.squared_error.m}",
            f"synthetic total         expected {self.total_distribution.expected:,.6g}, sd "
            f"{self.total_distribution.sd:,.6g}",
        ]
        for d in self.d:
            lines.append(f"  P(|n_syn - n| < {d:g}) = {self.total_distribution.prob_within(d):.4f}")
        if self.hellinger is not None:
            lines.append(
                f"Hellinger               distance {self.hellinger.distance:.6g}, utility {self.hellinger.utility:.6f}"
            )
        lines += ["", "share within p% of the original", self.within_grid.to_string(lambda x: f"{x:.4f}")]
        return "\n".join(lines)


def _num_key(x: float) -> str:
    return f"{float(x):g}"


def assess(
    table_or_cell_sizes: Any,
    mechanism: CellwiseMechanism,
    *,
    k: Any = DEFAULT_K,
    m: int = 1,
    p: Any = DEFAULT_P,
    d: Any = (),
    hellinger: bool = True,
    tol: float = TAIL_TOL,
) -> Assessment:
    """All a priori metrics of ``mechanism`` on a table or cell-size distribution.

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
    mechanism : CellwiseMechanism
    k : sequence of int
        Counts for the tau metrics.
    m : int
        Implicates averaged for the squared error of the mean.
    p : sequence of float
        Percentages for the share within p%.
    d : sequence of float
        Distances for P(|n_syn - n| < d).
    hellinger : bool
        Compute the expected Hellinger distance (for Poisson, NBI and PIG from fractional moments, a fixed
        cost per distinct count; other mechanisms sum whole transition rows, the slowest part).
    tol : float
        Tail mass left out of the row sums.

    Examples
    --------
    >>> from cellsafe.distributions import NBI
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> a = assess({0: 900, 1: 60, 2: 40}, SaturatedSynthesizer(NBI(sigma=0.5)))
    >>> round(float(a.tau.at[1, "tau4"]), 4)
    0.64
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "assess")
    kk = _check_counts(k, "k", "assess")
    m = check_integer(m, "m", "assess", low=1)
    pp = _check_percentages(p, "assess")
    dd = np.atleast_1d(np.asarray(d, dtype=np.float64))
    if np.any(~np.isfinite(dd) | (dd < 0)):
        raise InvalidArgumentError(f"The 'd' parameter of assess must hold distances >= 0. Got {d!r} instead.")
    tol = check_real(tol, "tol", "assess", low=0.0, high=1e-3, low_open=True)
    moments = _moments(mech, cs.values)
    record = mechanism_record(mech)
    return Assessment(
        mechanism=repr(mech),
        spec=record["spec"],
        ptable_sha256=record.get("ptable_sha256"),
        n_cells=cs.n_cells,
        total=cs.total,
        tau_grid=_tau_grid(cs, mech, kk),
        squared_error=_squared_error(cs, mech, m, moments),
        total_distribution=_total(cs, mech, moments),
        hellinger=_hellinger(cs, mech, tol, moments) if hellinger else None,
        within_grid=_within_grid(cs, mech, pp),
        d=tuple(float(x) for x in dd),
    )
