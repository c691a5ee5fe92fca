"""Tuning any cell-wise mechanism to a priori targets, and the risk-utility frontier (003 sections 3.3.5, 4.5)."""

from ._frontier import FAMILIES, Frontier, default_grid, frontier
from ._solve import TuningResult, poisson_alpha_for_zero_share, tune
from ._targets import Metric, Target, parse_metric, parse_target

__all__ = [
    "FAMILIES",
    "Frontier",
    "Metric",
    "Target",
    "TuningResult",
    "default_grid",
    "frontier",
    "parse_metric",
    "parse_target",
    "poisson_alpha_for_zero_share",
    "tune",
]
