"""Drawing a category under constraints: rules and category pairs never seen together.

A categorical target is drawn for every record from its model; records whose draw breaks a
constraint draw again (from the same model, so the draw is from the model restricted to the
allowed categories), up to :data:`REDRAWS` times.  The few records left are drawn exactly: the
model's probabilities times the allowed categories, renormalized; where the model gives the
allowed categories no probability at all, the confidential marginal of the target restricted to
them; where a record's earlier synthetic values leave no allowed category (a combination never
seen in the original), the pairs are relaxed for that record and the rules still hold.  Such
records are counted (``relaxed``).

Category pairs.  For a categorical target ``t`` and every categorical variable ``v`` drawn before
it, the pairs ``(v = a, t = b)`` that no confidential record has are structural zeros of the
records: they are never drawn together unless listed in ``allow``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..exceptions import DataError
from ._columns import Column
from ._rules import _code_of

__all__ = ["PairTable", "pair_tables", "draw_categorical", "REDRAWS"]

#: Rounds of redrawing records that break a constraint before the exact draw of those left.
REDRAWS = 10


@dataclass(frozen=True)
class PairTable:
    """Which categories of ``target`` occur with each category of ``other`` in the original."""

    other: str
    seen: np.ndarray = field(repr=False)  # (codes of other, codes of target) bool


def pair_tables(
    target: str,
    before: Sequence[str],
    columns: Mapping[str, Column],
    arrays: Mapping[str, np.ndarray],
    rows: np.ndarray | slice,
    allow: Sequence[Mapping[str, Any]] = (),
) -> list[PairTable]:
    """The pair tables of a categorical ``target`` with the categorical variables ``before`` it."""
    col = columns[target]
    kt = col.missing_code + 1
    y = arrays[target][rows]
    out = []
    for name in before:
        other = columns[name]
        if other.kind != "categorical":
            continue
        ko = other.missing_code + 1
        seen = np.zeros((ko, kt), dtype=bool)
        seen[arrays[name][rows], y] = True
        for pair in allow:
            if set(pair) == {name, target}:
                seen[_code_of(other, pair[name], "allow"), _code_of(col, pair[target], "allow")] = True
        if not seen.all():
            out.append(PairTable(name, seen))
    return out


def _proba(model: Any, x: np.ndarray, k: int) -> np.ndarray:
    """Each record's probability of each code under ``model`` (width ``k``)."""
    p = model.proba(x)
    if p.shape[1] < k:
        p = np.pad(p, ((0, 0), (0, k - p.shape[1])))
    return p[:, :k]


def draw_categorical(
    model: Any,
    x: np.ndarray,
    gen: np.random.Generator,
    k: int,
    marginal: np.ndarray,
    rules: Sequence[tuple[np.ndarray, np.ndarray]] = (),
    pairs: Sequence[tuple[np.ndarray, np.ndarray]] = (),
) -> tuple[np.ndarray, int]:
    """Codes drawn from ``model`` with every rule and pair respected; and the records relaxed.

    Parameters
    ----------
    model
        Has ``draw(x, gen)`` and ``proba(x)``.
    k : int
        Codes of the target (missing included).
    marginal : numpy.ndarray
        Confidential frequencies of the ``k`` codes (fallback).
    rules : list of (condition, allowed)
        ``condition`` a boolean array over records, ``allowed`` a boolean array over codes.
    pairs : list of (codes of the other variable, seen table)
    """
    n = x.shape[0]
    y = model.draw(x, gen)
    if not rules and not pairs:
        return y, 0

    def ok(idx: np.ndarray, vals: np.ndarray) -> np.ndarray:
        good = np.ones(idx.size, dtype=bool)
        for cond, allowed in rules:
            good &= ~cond[idx] | allowed[np.minimum(vals, allowed.size - 1)] & (vals < allowed.size)
        for other, seen in pairs:
            good &= seen[other[idx], np.minimum(vals, seen.shape[1] - 1)] & (vals < seen.shape[1])
        return good

    bad = np.flatnonzero(~ok(np.arange(n), y))
    for _ in range(REDRAWS):
        if bad.size == 0:
            return y, 0
        y[bad] = model.draw(x[bad], gen)
        bad = bad[~ok(bad, y[bad])]
    if bad.size == 0:
        return y, 0
    rule_mask = np.ones((bad.size, k), dtype=bool)
    for cond, allowed in rules:
        a = np.zeros(k, dtype=bool)
        a[: min(k, allowed.size)] = allowed[:k]
        rule_mask[cond[bad]] &= a
    mask = rule_mask.copy()
    for other, seen in pairs:
        s = np.zeros((seen.shape[0], k), dtype=bool)
        s[:, : min(k, seen.shape[1])] = seen[:, :k]
        mask &= s[other[bad]]
    p = _proba(model, x[bad], k) * mask
    for fallback in (marginal[None, :] * mask, _proba(model, x[bad], k) * rule_mask, marginal[None, :] * rule_mask, rule_mask):
        empty = p.sum(axis=1) <= 0
        if not empty.any():
            break
        p[empty] = np.asarray(fallback, dtype=np.float64)[empty] if np.ndim(fallback) == 2 else fallback
    relaxed = int(np.sum(~mask[np.arange(bad.size)].any(axis=1)))
    if np.any(p.sum(axis=1) <= 0):  # pragma: no cover - a rule with no allowed code is refused when compiled
        raise DataError("no category meets the rules for some records.")
    cum = np.cumsum(p, axis=1)
    u = gen.random(bad.size) * cum[:, -1]
    y[bad] = np.minimum((cum < u[:, None]).sum(axis=1), k - 1)
    return y, relaxed
