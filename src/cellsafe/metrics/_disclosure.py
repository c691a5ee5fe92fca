"""Attribute disclosure from (expected) frequency tables: probabilities and the F-beta risk (001 section 6).

For a sensitive variable S and quasi-identifiers Q, an intruder who knows a unit's Q cell guesses
the most frequent S category there; the probability of a correct guess is
``max_s y(s, q) / sum_s y(s, q)`` (001 Table 9).  Knowing yourself (Table 10), you remove yourself
(at most one unit, ``min(1, y)``) from the category you belong to and guess among the rest; the
probability is the largest over the categories you could belong to.  A Q cell whose probability is
1 is an exact disclosure.  With a, b and c the numbers of exact disclosures in the original table, in
the protected table (over Q cells that are non-empty in the original) and in both with the same
guess, precision is c/b, recall c/a and the risk is ``F_beta = (1 + beta^2) c / (beta^2 a + b)``
(001 eq. 5).  The tables may hold fractional counts (expected inner frequencies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._results import Result
from .._validation import check_real
from ..exceptions import InvalidArgumentError
from ..table import CountTable, check_same_variables, check_table, ravel, unravel

__all__ = ["DisclosureProbabilities", "DisclosureRisk", "disclosure_probabilities", "disclosure_risk", "f_beta_risk"]

#: A probability within this distance of 1 is an exact disclosure.
EXACT_TOL = 1e-6


@dataclass(frozen=True, eq=False)
class DisclosureProbabilities(Result):
    """Probabilities of guessing the sensitive category in each quasi-identifier cell.

    Attributes
    ----------
    sensitive : str
    keys : tuple of str
        The quasi-identifiers.
    know_yourself : bool
        Whether the intruder removes himself first (001 Table 10).
    key_index : ndarray of int64
        Flat indices (row-major over ``keys``) of the non-empty quasi-identifier cells.
    total : ndarray
        Their totals.
    probability : ndarray
        Probability of a correct guess (NaN when nothing is left to guess from).
    guess : ndarray of int
        Code of the guessed sensitive category.
    categories : tuple
        The sensitive variable's categories (``guess`` indexes them).
    key_variables : tuple
        The quasi-identifiers' Variable objects.
    """

    sensitive: str
    keys: tuple[str, ...]
    know_yourself: bool
    key_index: np.ndarray
    total: np.ndarray
    probability: np.ndarray
    guess: np.ndarray
    categories: tuple
    key_variables: tuple

    def exact(self, tol: float = EXACT_TOL) -> np.ndarray:
        """Which cells are exact disclosures (probability 1 up to ``tol``)."""
        p = np.nan_to_num(self.probability, nan=0.0)
        return p >= 1.0 - tol

    def to_frame(self) -> pd.DataFrame:
        """One row per non-empty quasi-identifier cell: keys, total, probability, guessed category."""
        codes = unravel(self.key_index, [v.size for v in self.key_variables])
        data: dict[str, Any] = {v.name: [v.categories[c] for c in codes[:, j]] for j, v in enumerate(self.key_variables)}
        data["total"] = self.total
        data["probability"] = self.probability
        data["guess"] = [self.categories[g] for g in self.guess]
        return pd.DataFrame(data)

    def to_dict(self) -> dict[str, Any]:
        """The setting and the counts of quasi-identifier cells and exact disclosures (the cells: :meth:`to_frame`)."""
        return {
            "sensitive": self.sensitive,
            "keys": list(self.keys),
            "know_yourself": bool(self.know_yourself),
            "n_cells": int(self.key_index.shape[0]),
            "n_exact": int(self.exact().sum()),
        }

    def __repr__(self) -> str:
        kind = "know_yourself" if self.know_yourself else "plain"
        return (
            f"DisclosureProbabilities(sensitive={self.sensitive!r}, keys={list(self.keys)}, {kind}, "
            f"n_cells={self.key_index.shape[0]}, exact={int(self.exact().sum())})"
        )


def disclosure_probabilities(
    table: CountTable, sensitive: str, keys: Sequence[str], *, know_yourself: bool = False
) -> DisclosureProbabilities:
    """Probability of disclosing ``sensitive`` by guessing its most frequent category in each key cell.

    Parameters
    ----------
    table : CountTable
        Original or protected (possibly fractional) inner frequencies.
    sensitive : str
        The sensitive variable (party in 001).
    keys : sequence of str
        The quasi-identifiers (age and sex in 001).
    know_yourself : bool, default False
        Remove yourself (at most one unit) from your own category before guessing, and report the
        largest probability over the categories you could belong to (001 Table 10).

    Returns
    -------
    DisclosureProbabilities

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"s": ["a", "a", "b"], "q": ["x", "x", "y"]})
    >>> t = CountTable.from_frame(df, ["s", "q"])
    >>> disclosure_probabilities(t, "s", ["q"]).probability.tolist()
    [1.0, 1.0]
    """
    check_table(table, "disclosure_probabilities")
    keys = [keys] if isinstance(keys, str) else list(keys)
    names = table.names
    for v in [sensitive, *keys]:
        if v not in names:
            raise InvalidArgumentError(f"unknown variable {v!r}; the table has variables {names}.")
    if sensitive in keys or len(set(keys)) != len(keys) or not keys:
        raise InvalidArgumentError(
            f"keys must be one or more distinct variables other than the sensitive {sensitive!r}. Got {keys}."
        )
    m = table.margin([*keys, sensitive])
    key_vars = tuple(table.variables[names.index(k)] for k in keys)
    sens_var = table.variables[names.index(sensitive)]
    codes = m.codes()
    kidx = ravel(codes[:, :-1], [v.size for v in key_vars])
    s = codes[:, -1]
    y = np.asarray(m.counts, dtype=np.float64)
    order = np.lexsort((s, -y, kidx))  # by key cell, then count descending, then category
    kidx, s, y = kidx[order], s[order], y[order]
    if kidx.size == 0:
        empty = np.zeros(0)
        return DisclosureProbabilities(
            sensitive, tuple(keys), know_yourself, kidx, empty, empty, np.zeros(0, np.int64), sens_var.categories, key_vars
        )
    starts = np.flatnonzero(np.r_[True, kidx[1:] != kidx[:-1]])
    sizes = np.diff(np.r_[starts, kidx.size])
    total = np.add.reduceat(y, starts)
    top1 = y[starts]
    cat1 = s[starts]
    has2 = sizes > 1
    second = np.minimum(starts + 1, kidx.size - 1)
    top2 = np.where(has2, y[second], 0.0)
    cat2 = np.where(has2, s[second], cat1)
    if not know_yourself:
        prob = top1 / total
        guess = cat1
    else:
        tiny = 1e-12 * np.maximum(total, 1.0)
        r1 = np.minimum(1.0, top1)
        den_a = total - r1
        num_a = np.maximum(top1 - r1, top2)
        with np.errstate(divide="ignore", invalid="ignore"):
            p_a = np.where(den_a > tiny, num_a / den_a, np.nan)
            r2 = np.minimum(1.0, top2)
            den_b = total - r2
            p_b = np.where(has2 & (top2 > 0) & (den_b > tiny), top1 / den_b, np.nan)
        guess_a = np.where(top1 - r1 >= top2, cat1, cat2)
        use_b = ~np.isnan(p_b) & (np.isnan(p_a) | (p_b >= p_a))
        prob = np.where(use_b, p_b, p_a)
        guess = np.where(use_b, cat1, guess_a)
    return DisclosureProbabilities(
        sensitive=sensitive,
        keys=tuple(keys),
        know_yourself=know_yourself,
        key_index=kidx[starts],
        total=total,
        probability=prob,
        guess=guess.astype(np.int64),
        categories=sens_var.categories,
        key_variables=key_vars,
    )


def f_beta_risk(a: int, b: int, c: int, beta: float = 0.5) -> float:
    """F-beta risk ``(1 + beta^2) c / (beta^2 a + b)`` (001 eq. 5); 0 when there is no disclosure at all.

    Examples
    --------
    >>> round(f_beta_risk(1, 2, 1), 4), round(f_beta_risk(3, 2, 2), 4)
    (0.5556, 0.9091)
    """
    beta = check_real(beta, "beta", "f_beta_risk", low=0.0, low_open=True)
    den = beta**2 * a + b
    return 0.0 if den == 0 else (1.0 + beta**2) * c / den


@dataclass(frozen=True, eq=False)
class DisclosureRisk(Result):
    """Exact-disclosure counts and the F-beta risk of a protected table against the original.

    Attributes
    ----------
    a, b, c : int
        Exact disclosures in the original, in the protected table (over Q cells non-empty in the
        original) and in both (same Q cell, same guessed category).
    beta : float
    precision, recall, f_beta : float
        c/b, c/a (NaN when undefined) and the risk of 001 eq. 5.
    original, protected : DisclosureProbabilities
    """

    a: int
    b: int
    c: int
    beta: float
    precision: float
    recall: float
    f_beta: float
    original: DisclosureProbabilities
    protected: DisclosureProbabilities

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "c": self.c, "precision": self.precision, "recall": self.recall,
                "f_beta": self.f_beta}

    def __repr__(self) -> str:
        kind = "know_yourself" if self.original.know_yourself else "plain"
        return (
            f"DisclosureRisk({kind}, a={self.a}, b={self.b}, c={self.c}, precision={self.precision:.4g}, "
            f"recall={self.recall:.4g}, f_beta={self.f_beta:.4f} (beta={self.beta:g}))"
        )


def disclosure_risk(
    original: CountTable,
    protected: CountTable,
    sensitive: str,
    keys: Sequence[str],
    *,
    beta: float = 0.5,
    know_yourself: bool = False,
    tol: float = EXACT_TOL,
) -> DisclosureRisk:
    """Exact disclosures a, b, c, precision, recall and the F-beta risk (001 section 6, eq. 5).

    Parameters
    ----------
    original, protected : CountTable
        The original inner table and the protected one (for example expected inner frequencies
        from :func:`cellsafe.fitting.expected_inner`), on the same variables.
    sensitive, keys : str, sequence of str
        Sensitive variable and quasi-identifiers.
    beta : float, default 0.5
        Weight of recall against precision (below 1 weighs precision more).
    know_yourself : bool, default False
        Use the probabilities after removing yourself (001 Table 10).
    tol : float, default 1e-6
        A probability of at least ``1 - tol`` is an exact disclosure.
    """
    beta = check_real(beta, "beta", "disclosure_risk", low=0.0, low_open=True)
    check_table(original, "disclosure_risk", "original")
    check_table(protected, "disclosure_risk", "protected")
    check_same_variables(protected, original, "the protected table")
    po = disclosure_probabilities(original, sensitive, keys, know_yourself=know_yourself)
    pp = disclosure_probabilities(protected, sensitive, keys, know_yourself=know_yourself)
    eo = po.exact(tol)
    ep_all = pp.exact(tol)
    # protected disclosures only count in Q cells that are non-empty in the original
    pos = np.searchsorted(po.key_index, pp.key_index)
    pos_c = np.minimum(pos, max(po.key_index.size - 1, 0))
    in_orig = (pos < po.key_index.size) & (po.key_index[pos_c] == pp.key_index) if po.key_index.size else np.zeros(pp.key_index.size, bool)
    ep = ep_all & in_orig
    a = int(eo.sum())
    b = int(ep.sum())
    both = ep & eo[pos_c] & (pp.guess == po.guess[pos_c]) if po.key_index.size else ep
    c = int(both.sum())
    precision = c / b if b else math.nan
    recall = c / a if a else math.nan
    return DisclosureRisk(a, b, c, beta, precision, recall, f_beta_risk(a, b, c, beta), po, pp)
