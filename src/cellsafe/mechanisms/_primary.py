"""Primary suppression rules: which published cells are sensitive on their own.

- frequency rule ``freq<=3`` (or ``freq<4``): cells with 1..3 units (records in a frequency table,
  contributors in a magnitude table) are sensitive; empty cells only with ``protect_zeros``;
- (n, k)-dominance ``nk(1,85)``: the n largest contributions make more than k% of the cell's total;
- p% rule ``p%=15``: the second largest contributor could estimate the largest to within p%, that is
  ``total - x1 - x2 < (p/100) x1`` (Hundepool et al. 2012, Statistical Disclosure Control,
  section 4.2.2).  A single contributor (x2 = 0) is always sensitive under both dominance rules.

A rule also says how much protection a suppressed cell needs (:func:`protection_requirements`),
as bounds the attacker's interval must reach:

- p% rule: upper and lower protection ``(p/100) x1 - (total - x1 - x2)`` (the same reference), the
  (n, k) rule: ``(100/k) sum of n largest - total``, on both sides of the value (the lower side at
  most down to 0);
- frequency rule ``freq<=T`` on a frequency table: the attacker's upper bound must reach ``T + 1``.
  A bound within the rule tells the attacker the cell holds at most T units, the very fact the rule
  protects; and since every other cell is non-negative, an upper bound of ``T + 1`` on each primary
  also means that no sum of primaries the attacker can derive (``B + C`` published implicitly as a
  margin less its published cells) is within the rule.  An empty primary (``protect_zeros``) needs
  only that it is not computable; ``min_width`` asks further that the interval be that wide (in
  counts), as tau-Argus's safety range and GaussSuppression's ``rangeMin`` do;
- frequency rule on a magnitude table (contributors): an interval of positive width.

Every withheld cell, primary or not, must in any case not be computable exactly (positive width).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import InvalidArgumentError

__all__ = ["Rule", "Requirements", "parse_rule", "primary_cells", "protection_requirements"]


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


@dataclass(frozen=True, eq=False)
class Requirements:
    """What the attacker's interval of each published cell must reach when the cell is withheld.

    Attributes
    ----------
    primary : ndarray of bool
        The cells some rule makes sensitive.
    upper : ndarray of float64
        The attacker's upper bound must be at least this (``-inf``: no requirement).
    lower : ndarray of float64
        The attacker's lower bound must be at most this (``inf``: no requirement).
    width : ndarray of float64
        ``upper bound - lower bound`` must be at least this; every withheld cell needs a positive width
        whatever this says.
    threshold : float
        The largest count the frequency rules make sensitive (0 without a frequency rule on counts):
        a derivable sum of primaries in ``1..threshold`` is a disclosure.
    """

    primary: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    width: np.ndarray
    threshold: float = 0.0

    @property
    def n(self) -> int:
        return int(self.primary.shape[0])

    def met(self, value: np.ndarray, lower: np.ndarray, upper: np.ndarray, cells: np.ndarray, tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
        """Whether the lower and the upper side of each cell's interval ``[lower, upper]`` meet the requirements.

        A cell meets the width requirement on both sides (``upper - lower`` at least ``width`` and
        positive); comparisons allow ``tol * max(1, |value|)``.
        """
        cells = np.asarray(cells, dtype=np.int64)
        value = np.asarray(value, dtype=np.float64)
        slack = tol * np.maximum(1.0, np.abs(value))
        with np.errstate(invalid="ignore"):
            up = upper >= self.upper[cells] - slack
            low = lower <= self.lower[cells] + slack
            wide = (upper - lower > slack) & (upper - lower >= self.width[cells] - slack)
        return low & wide, up & wide


def protection_requirements(
    rules: Any,
    counts: np.ndarray,
    values: np.ndarray | None = None,
    top: np.ndarray | None = None,
    *,
    protect_zeros: bool = False,
    min_width: float = 0.0,
) -> Requirements:
    """The primary cells of ``rules`` and what each one's attacker interval must reach (module notes).

    Parameters
    ----------
    rules : rule or list of rules
    counts : array over the published cells
        What the frequency rule counts (records in a frequency table, contributors in a magnitude table).
    values, top : arrays, optional
        A magnitude table's sums and largest contributions; without them ``counts`` are the published values.
    protect_zeros : bool
        The frequency rule also makes empty cells primary.
    min_width : float
        Frequency tables: the least width of a frequency-rule primary's interval, in counts.

    Examples
    --------
    Counts 1, 3, 7 with ``freq<=3``: the first two are primary and the attacker's upper bound on each
    must reach 4.

    >>> req = protection_requirements(["freq<=3"], np.array([1, 3, 7]))
    >>> req.primary.tolist(), req.upper.tolist()
    ([True, True, False], [4.0, 4.0, -inf])
    """
    parsed = [parse_rule(r) for r in ([rules] if isinstance(rules, (str, Rule)) else rules)]
    counts = np.asarray(counts)
    n = counts.shape[0]
    if not np.isfinite(min_width) or min_width < 0:
        raise InvalidArgumentError(f"min_width must be a non-negative number of counts. Got {min_width!r}.")
    primary, required = primary_cells(parsed, counts, values, top, protect_zeros)
    upper = np.full(n, -np.inf)
    lower = np.full(n, np.inf)
    width = np.zeros(n)
    threshold = 0.0
    value = np.asarray(counts if values is None else values, dtype=np.float64)
    dominance = primary & (required > 0)
    upper[dominance] = value[dominance] + required[dominance]
    lower[dominance] = value[dominance] - np.minimum(required[dominance], np.maximum(value[dominance], 0.0))
    if values is None:
        for rule in parsed:
            if rule.kind != "freq":
                continue
            threshold = max(threshold, rule.threshold)
            small = (counts >= 1) & (counts <= rule.threshold)
            upper[small] = np.maximum(upper[small], rule.threshold + 1.0)
            width[small] = np.maximum(width[small], float(min_width))
    elif min_width:
        raise InvalidArgumentError("min_width applies to frequency tables; a magnitude table's rules say its protection.")
    return Requirements(primary, upper, lower, width, threshold)
