"""Primary suppression rules: which published cells are sensitive on their own.

- frequency rule ``freq<=3`` (or ``freq<4``): cells with 1..3 units (records in a frequency table,
  contributors in a magnitude table) are sensitive; empty cells only with ``protect_zeros``;
- (n, k)-dominance ``nk(1,85)``: the n largest contributions make more than k% of the cell's total;
- p% rule ``p%=15``: the second largest contributor could estimate the largest to within p%, that is
  ``total - x1 - x2 < (p/100) x1`` (Hundepool et al. 2012, Statistical Disclosure Control,
  section 4.2.2).  A single contributor (x2 = 0) is always sensitive under both dominance rules.

A rule also says how much protection a suppressed cell needs, for the audit: the p% rule's upper
and lower protection ``(p/100) x1 - (total - x1 - x2)`` (the same reference), the (n, k) rule's
``(100/k) sum of n largest - total``, and for the frequency rule any interval of positive width.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import InvalidArgumentError

__all__ = ["Rule", "parse_rule", "primary_cells"]


@dataclass(frozen=True)
class Rule:
    """One primary suppression rule.

    Attributes
    ----------
    kind : {'freq', 'nk', 'p'}
    threshold : float
        freq: the largest sensitive count; p: the percentage p; nk: the percentage k.
    n : int
        nk: how many largest contributions.
    """

    kind: str
    threshold: float
    n: int = 1

    @property
    def needs_contributions(self) -> bool:
        return self.kind in ("nk", "p")

    def sensitive(self, counts: np.ndarray, values: np.ndarray | None, top: np.ndarray | None, protect_zeros: bool = False) -> np.ndarray:
        """Bool array: the cells this rule makes primary suppressions."""
        if self.kind == "freq":
            c = np.asarray(counts)
            low = 0 if protect_zeros else 1
            return (c >= low) & (c <= self.threshold)
        assert values is not None and top is not None
        v = np.asarray(values, dtype=np.float64)
        if self.kind == "p":
            x1, x2 = top[:, 0], top[:, 1]
            return (v > 0) & (v - x1 - x2 < self.threshold / 100.0 * x1)
        largest = top[:, : self.n].sum(axis=1)
        return (v > 0) & (largest > self.threshold / 100.0 * v)

    def protection(self, values: np.ndarray | None, top: np.ndarray | None) -> np.ndarray | None:
        """The interval half-width (upper and lower) a suppressed cell needs; None for the frequency rule."""
        if self.kind == "freq" or values is None or top is None:
            return None
        v = np.asarray(values, dtype=np.float64)
        if self.kind == "p":
            x1, x2 = top[:, 0], top[:, 1]
            return np.maximum(self.threshold / 100.0 * x1 - (v - x1 - x2), 0.0)
        return np.maximum(100.0 / self.threshold * top[:, : self.n].sum(axis=1) - v, 0.0)

    def __str__(self) -> str:
        if self.kind == "freq":
            return f"freq<={self.threshold:g}"
        if self.kind == "p":
            return f"p%={self.threshold:g}"
        return f"nk({self.n},{self.threshold:g})"


_FREQ = re.compile(r"^\s*freq\s*(<=|<)\s*(\d+)\s*$", re.I)
_P = re.compile(r"^\s*p\s*%?\s*=\s*(\d+(?:\.\d+)?)\s*$", re.I)
_NK = re.compile(r"^\s*(?:nk|dom)\s*\(\s*(\d+)\s*,\s*(\d+(?:\.\d+)?)\s*\)\s*$", re.I)


def parse_rule(spec: Any) -> Rule:
    """A rule from its text: ``'freq<=3'``, ``'freq<4'``, ``'p%=15'``, ``'nk(1,85)'`` (or a Rule).

    Examples
    --------
    >>> parse_rule("p%=15"), parse_rule("nk(2, 90)"), str(parse_rule("freq<4"))
    (Rule(kind='p', threshold=15.0, n=1), Rule(kind='nk', threshold=90.0, n=2), 'freq<=3')
    """
    if isinstance(spec, Rule):
        return spec
    if not isinstance(spec, str):
        raise InvalidArgumentError(f"a suppression rule is a string such as 'freq<=3', 'p%=15' or 'nk(1,85)'. Got {spec!r}.")
    m = _FREQ.match(spec)
    if m:
        t = int(m.group(2)) - (1 if m.group(1) == "<" else 0)
        if t < 0:
            raise InvalidArgumentError(f"rule {spec!r} suppresses nothing; use freq<=N with N >= 0.")
        return Rule("freq", float(t))
    m = _P.match(spec)
    if m:
        p = float(m.group(1))
        if not 0 < p < 100:
            raise InvalidArgumentError(f"The p of rule {spec!r} must be a percentage in (0, 100). Got {p:g}.")
        return Rule("p", p)
    m = _NK.match(spec)
    if m:
        n, k = int(m.group(1)), float(m.group(2))
        if n < 1 or not 0 < k <= 100:
            raise InvalidArgumentError(f"rule {spec!r} needs n >= 1 and k in (0, 100].")
        return Rule("nk", k, n)
    raise InvalidArgumentError(
        f"cannot read suppression rule {spec!r}; write 'freq<=3' (counts 1..3), 'p%=15' (p% rule) or 'nk(1,85)' "
        "((n, k)-dominance)."
    )


def primary_cells(
    rules: Any,
    counts: np.ndarray,
    values: np.ndarray | None = None,
    top: np.ndarray | None = None,
    protect_zeros: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The cells some rule makes primary, and the protection each needs (the largest its rules ask).

    ``counts`` are what the frequency rule counts (records, or contributors in a magnitude table).
    The protection is 0 for cells only the frequency rule flags (an interval of positive width).

    Examples
    --------
    >>> top = np.array([[80.0, 15.0], [50.0, 30.0]])
    >>> primary_cells(["p%=15", "freq<=1"], np.array([3, 3]), np.array([100.0, 100.0]), top)
    (array([ True, False]), array([7., 0.]))
    """
    parsed = [parse_rule(r) for r in ([rules] if isinstance(rules, (str, Rule)) else rules)]
    counts = np.asarray(counts)
    primary = np.zeros(counts.shape[0], dtype=bool)
    required = np.zeros(counts.shape[0])
    for rule in parsed:
        if rule.needs_contributions and (values is None or top is None):
            raise InvalidArgumentError(
                f"rule {str(rule)!r} needs a magnitude table (a value and its contributions); frequency tables take "
                "'freq<=N' rules."
            )
        flagged = rule.sensitive(counts, values, top, protect_zeros)
        primary |= flagged
        need = rule.protection(values, top)
        if need is not None:
            required = np.where(flagged, np.maximum(required, need), required)
    return primary, required
