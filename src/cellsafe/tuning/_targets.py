"""Metric names and targets, in one syntax for tuning, the frontier and the report.

A target is ``METRIC OP VALUE``: ``tau4(1)<=0.4``, ``hellinger>=0.9``, ``within(5)>=0.8``,
``loss<=1000``, with ``=`` where a value is solved for (``tune``: ``tau4(1)=0.4``,
``tau1(0)=tau2(0)``).  ``tune`` solves for the boundary of an inequality too; the report checks
inequalities.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .. import apriori
from ..exceptions import InvalidArgumentError
from ..mechanisms import CellwiseMechanism

__all__ = ["Metric", "Target", "parse_metric", "parse_target"]

_TAU = re.compile(r"^tau([1-4])\((\d+)\)$")
_WITHIN = re.compile(r"^within\(([0-9.]+)\)$")
_MARGINAL_TV = re.compile(r"^marginal_tv\((\d+)\)$")
_TARGET = re.compile(r"^\s*(.+?)\s*(<=|>=|=|<|>)\s*(.+?)\s*$")
_METRIC_HELP = (
    "'tau1(k)'..'tau4(k)' (k a count >= 0), 'loss' (expected squared error), 'hellinger' (expected utility) or "
    "'within(p)' (expected share of cells within p%); for a marginal synthesizer 'marginal_tv(k)' (expected "
    "average total-variation error of the released k-way marginals, k in 1..3)"
)
_TARGET_HELP = "'tau4(1)<=0.4', 'hellinger>=0.9', 'within(5)>=0.8', 'loss<=1000' (tune: also 'tau4(1)=0.4', 'tau1(0)=tau2(0)')"
_OPS = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}


@dataclass(frozen=True)
class Metric:
    """An a priori metric of a mechanism on a cell-size distribution.

    ``kind`` is 'tau' (with ``which`` in 1..4 and count ``k``), 'loss' (expected squared error
    of the mean of ``m`` implicates), 'mse_utility' (1 - invlogit(MSE per cell), 000 Figure 7),
    'hellinger' (expected Hellinger utility), 'within' (expected share of all cells within ``p``%
    of their original count) or, for a marginal synthesizer, 'marginal_tv' (the expected average
    total-variation error of the released ``k``-way marginals, :func:`cellsafe.apriori.marginal_error`).
    """

    kind: str
    which: int = 0
    k: int = 0
    m: int = 1
    p: float = 0.0

    @property
    def name(self) -> str:
        if self.kind == "tau":
            return f"tau{self.which}({self.k})"
        if self.kind == "within":
            return f"within({self.p:g})"
        if self.kind == "marginal_tv":
            return f"marginal_tv({self.k})"
        return self.kind

    @property
    def is_probability(self) -> bool:
        return self.kind in ("tau", "mse_utility", "hellinger", "within", "marginal_tv")

    @property
    def on_marginals(self) -> bool:
        """A metric of a marginal synthesizer on the table (not of a cell-wise mechanism on cell sizes)."""
        return self.kind == "marginal_tv"

    def __call__(self, cs: apriori.CellSizes, mech: CellwiseMechanism) -> float:
        if self.kind == "tau":
            return float(apriori._tau_frame(cs, mech, np.array([self.k], dtype=np.int64)).iloc[0, self.which - 1])
        if self.kind == "loss":
            return apriori._squared_error(cs, mech, self.m).mean_of_implicates
        if self.kind == "mse_utility":
            return apriori._squared_error(cs, mech, 1).utility()
        if self.kind == "hellinger":
            return apriori._hellinger(cs, mech, apriori.TAIL_TOL).utility
        if self.kind == "within":
            return float(apriori._within(cs, mech, np.array([self.p]))["all"].iloc[0])
        raise AssertionError(self.kind)

    def undefined(self, cs: apriori.CellSizes, mech: CellwiseMechanism, value: float) -> str:
        """Why ``value`` (this metric of ``mech``) is not a number: '' when it is one.

        tau4(k) = P(original k | released k) is undefined when no cell is ever released as k: a
        ptable with js >= k forbids released values 1..js, so the cell key method has no tau4(1).
        """
        if value is not None and math.isfinite(value):
            return ""
        if self.kind == "tau" and self.which == 4:
            tau1 = float(apriori._tau_frame(cs, mech, np.array([self.k], dtype=np.int64))["tau1"].iloc[0])
            if tau1 == 0:
                return (f"{self.name} is undefined: no cell is ever released as {self.k} "
                        f"(P(released = {self.k}) = 0), so there is no released {self.k} to condition on")
        return f"{self.name} is not a number for this mechanism"


def parse_metric(text: str, *, m: int = 1) -> Metric:
    """'tau4(1)' -> Metric('tau', 4, 1); 'loss', 'mse' (utility), 'hellinger'.

    Examples
    --------
    >>> parse_metric("tau4(1)").name
    'tau4(1)'
    """
    if not isinstance(text, str):
        raise InvalidArgumentError(f"a metric name must be a string such as 'tau4(1)'. Got {text!r} instead.")
    t = text.strip().lower().replace(" ", "")
    hit = _TAU.match(t)
    if hit:
        return Metric("tau", int(hit.group(1)), int(hit.group(2)), m)
    if t in ("loss", "squared_error", "expected_squared_error"):
        return Metric("loss", m=m)
    if t in ("mse", "mse_utility"):
        return Metric("mse_utility")
    if t in ("hellinger", "hellinger_utility"):
        return Metric("hellinger")
    hit = _WITHIN.match(t)
    if hit:
        return Metric("within", p=float(hit.group(1)), m=m)
    hit = _MARGINAL_TV.match(t)
    if hit:
        k = int(hit.group(1))
        if not 1 <= k <= 3:
            raise InvalidArgumentError(f"marginal_tv(k) assesses the 1-, 2- or 3-way marginals. Got {text!r}.")
        return Metric("marginal_tv", k=k)
    if t.startswith("tau") and "(-" in t:
        raise InvalidArgumentError(f"unknown metric {text!r}: the count k in tauN(k) must be >= 0.")
    raise InvalidArgumentError(f"unknown metric {text!r}; use {_METRIC_HELP}.")


@dataclass(frozen=True)
class Target:
    """A target on one metric: ``metric op value`` (op '=', '<=', '>=', '<' or '>'), or tau1(0) = tau2(0)
    (``zero_share``).  ``text`` is the target as written back ('tau4(1)<=0.4')."""

    metric: Metric
    value: float
    text: str
    zero_share: bool = False
    op: str = "="

    def met(self, value: float) -> bool | None:
        """True when ``value`` meets an inequality, False when not, None when it is missing (NaN) or for '='."""
        if self.op == "=" or value is None or not math.isfinite(value):
            return None
        return bool(_OPS[self.op](value, self.value))


def parse_target(text: str, *, m: int = 1) -> Target:
    """Parse a target in the one syntax: ``'tau4(1)<=0.4'``, ``'hellinger>=0.9'``, ``'within(5)>=0.8'``,
    ``'loss<=1000'``, ``'tau4(1)=0.4'``, ``'tau1(0)=tau2(0)'``.

    A proportion's target (tau, Hellinger, within) must lie in [0, 1]; a loss target must be >= 0.

    Examples
    --------
    >>> parse_target("tau4(1)=0.4").value
    0.4
    >>> parse_target("tau4(1) <= 0.4").text
    'tau4(1)<=0.4'
    >>> parse_target("tau1(0)=tau2(0)").zero_share
    True
    """
    hit = _TARGET.match(text) if isinstance(text, str) else None
    if hit is None:
        raise InvalidArgumentError(f"a target must look like {_TARGET_HELP}. Got {text!r}.")
    left, op, right = hit.group(1).lower().replace(" ", ""), hit.group(2), hit.group(3).lower().replace(" ", "")
    if op == "=" and {left, right} == {"tau1(0)", "tau2(0)"}:
        return Target(Metric("tau", 1, 0, m), math.nan, "tau1(0)=tau2(0)", zero_share=True)
    if "=" in right or "<" in right or ">" in right:
        raise InvalidArgumentError(f"a target must look like {_TARGET_HELP}. Got {text!r}.")
    metric = parse_metric(left, m=m)
    try:
        value = float(right)
    except ValueError:
        raise InvalidArgumentError(f"the target value in {text!r} must be a number. Got {right!r}.") from None
    if not math.isfinite(value):
        raise InvalidArgumentError(f"the target value in {text!r} must be finite.")
    if metric.is_probability and not 0.0 <= value <= 1.0:
        raise InvalidArgumentError(f"{metric.name} is a proportion: its target must lie in [0, 1]. Got {value!r}.")
    if metric.kind == "loss" and value < 0:
        raise InvalidArgumentError(f"the loss target must be >= 0. Got {value!r}.")
    return Target(metric, value, f"{metric.name}{op}{value:g}", op=op)
