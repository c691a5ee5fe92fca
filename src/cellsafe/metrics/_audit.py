"""Audit of a release with withheld cells: what a reader of the whole file can compute, and the verdict.

The reader (:class:`~cellsafe.mechanisms.Intruder`) knows every published value, the public
categories and so the inner cells that may be non-empty, that inner cells are non-negative, and
what the listing says (a listing of non-empty cells: every listed cell is at least 1, every
unlisted one 0).  :func:`audit_suppression` is that reader, and the one verdict ``cellsafe audit``,
the release report and the API give.  It fails a release when any of these holds:

- a withheld cell's interval misses what its rules require
  (:func:`~cellsafe.mechanisms.protection_requirements`: the frequency rule ``freq<=T`` asks the
  upper bound to reach ``T + 1``; p% and (n, k) their protection on both sides), or has no width
  (any withheld cell: computable exactly);
- a sum of withheld primaries is derivable (its interval has no width) and within the frequency
  rule (``B + C = 8`` under ``freq<=10``);
- a contributor alone in a withheld cell, who knows that cell, narrows another's primary below its
  requirement (the singleton problem; in a frequency table the record of a count of 1);
- the file shows a value its own ``suppression`` column marks as withheld, or publishes a cell its
  rules make sensitive.

Intervals are exact: the linear programs of every withheld cell share one model (see the
intruder's notes) rather than two cold programs each.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._results import Result
from .._blas import on_one_blas_thread
from ..exceptions import DataError, InvalidArgumentError
from ..mechanisms import (
    LISTINGS,
    WHOLE_SYSTEM_ROWS,
    Intruder,
    Requirements,
    protection_requirements,
    neighbourhood,
    requirement_targets,
    singleton_shortfalls,
    sole_contributors_of_counts,
    touching,
)
from ..published import PublishedTable

__all__ = ["SuppressionAudit", "audit_suppression"]

#: Most groups of primaries whose sums are looked at (subsets of the primaries whose upper bound is within the rule).
_MAX_GROUPS = 5000


@dataclass(frozen=True, eq=False)
class SuppressionAudit(Result):
    """What a reader of a release computes about its withheld cells, and the verdict.

    Attributes
    ----------
    release : PublishedTable
    cells : ndarray of int64
        Positions of the withheld published cells.
    lower, upper : ndarray of float64
        The reader's exact bounds on each.
    upper_target, lower_target, width_target : ndarray of float64
        What each must reach (``-inf`` / ``inf`` / 0: nothing asked beyond a positive width).
    safe : ndarray of bool
        Whether each withheld cell's interval meets its requirement (and has a positive width).
    sums : DataFrame
        Derivable sums of withheld primaries within the frequency rule: ``cells`` (positions),
        ``value``, ``lower``, ``upper``.
    singletons : DataFrame
        Requirements a contributor alone in a withheld cell leaves unmet: ``contributor``,
        ``cell``, ``side``, ``lower``, ``upper``.
    shown_withheld : ndarray of int64
        Cells the file's ``suppression`` column marks withheld but whose value it shows.
    sensitive_published : ndarray of int64
        Cells the rules make primary that are published.
    listing : str
        'frame' or 'nonzero': what the reader takes the listing to say.
    exact : bool
        True: ``lower`` and ``upper`` are the reader's bounds.  False (a system of more than
        ``WHOLE_SYSTEM_ROWS`` inner cells): they come from programs in which only the inner cells
        of withheld cells and around them move, the others keeping their values; the reader's
        interval holds them, a requirement they meet is met, and one they miss is not proven met
        (counted as unsafe).
    n_lp : int
        Linear programs solved.
    """

    release: PublishedTable = field(repr=False)
    cells: np.ndarray = field(repr=False)
    lower: np.ndarray = field(repr=False)
    upper: np.ndarray = field(repr=False)
    upper_target: np.ndarray = field(repr=False)
    lower_target: np.ndarray = field(repr=False)
    width_target: np.ndarray = field(repr=False)
    safe: np.ndarray = field(repr=False)
    sums: pd.DataFrame = field(repr=False)
    singletons: pd.DataFrame = field(repr=False)
    shown_withheld: np.ndarray = field(repr=False)
    sensitive_published: np.ndarray = field(repr=False)
    listing: str = "frame"
    exact: bool = True
    n_lp: int = 0

    @property
    def passed(self) -> bool:
        """True when nothing in the module notes' list holds."""
        return bool(
            np.all(self.safe) and self.sums.empty and self.singletons.empty and not self.shown_withheld.size
            and not self.sensitive_published.size
        )

    @property
    def n_unsafe(self) -> int:
        """Withheld cells whose interval misses its requirement."""
        return int(np.sum(~self.safe))

    def problems(self) -> list[str]:
        """One sentence per kind of failure (empty when passed)."""
        out = []
        if self.n_unsafe:
            out.append(f"{self.n_unsafe} withheld cell(s) narrower than required")
        if not self.sums.empty:
            out.append(f"{len(self.sums)} derivable sum(s) of primaries within the rule")
        if not self.singletons.empty:
            out.append(f"{self.singletons['cell'].nunique()} primary cell(s) narrowed by a contributor alone in a withheld cell")
        if self.shown_withheld.size:
            out.append(f"{self.shown_withheld.size} cell(s) the file marks withheld show their value")
        if self.sensitive_published.size:
            out.append(f"{self.sensitive_published.size} cell(s) the rules make sensitive are published")
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per withheld cell: its variables, value, status, bounds, width, targets and verdict."""
        rel = self.release
        out = rel.publication.cells().iloc[self.cells].reset_index(drop=True)
        out[rel.measure] = np.asarray(rel.original, dtype=np.float64)[self.cells]
        if rel.suppression is not None:
            out["suppression"] = rel.suppression[self.cells]
        out["lower"] = self.lower
        out["upper"] = self.upper
        out["width"] = self.upper - self.lower
        out["upper_target"] = self.upper_target
        out["lower_target"] = self.lower_target
        out["width_target"] = self.width_target
        out["safe"] = self.safe
        return out

    def to_dict(self) -> dict[str, Any]:
        width = self.upper - self.lower
        return {
            "n_suppressed": int(self.cells.shape[0]),
            "n_unsafe": self.n_unsafe,
            "n_derivable_sums": int(len(self.sums)),
            "n_singleton_disclosures": int(len(self.singletons)),
            "n_shown_withheld": int(self.shown_withheld.size),
            "n_sensitive_published": int(self.sensitive_published.size),
            "listing": self.listing,
            "exact": self.exact,
            "passed": self.passed,
            "problems": self.problems(),
            "min_width": float(np.min(width)) if width.size and np.isfinite(width).any() else float("nan"),
            "n_lp": self.n_lp,
        }

    def _title(self) -> str:
        return "Suppression audit"

    def __repr__(self) -> str:
        return f"SuppressionAudit(n_suppressed={self.cells.shape[0]}, unsafe={self.n_unsafe}, passed={self.passed})"


@on_one_blas_thread
def audit_suppression(
    release: PublishedTable,
    *,
    rules: Any = None,
    requirements: Requirements | None = None,
    required: Any = None,
    list: str | None = None,  # noqa: A002  the parameter of CellSuppression and --list
    singletons: bool = True,
    sole: Any = None,
    inner: Any = None,
    upper_bound: float | None = None,
    tol: float = 1e-7,
) -> SuppressionAudit:
    """Everything a reader of ``release`` computes about its withheld cells, and the verdict (module notes).

    Parameters
    ----------
    release : PublishedTable
        Any release with NaN where cells are withheld; ``original`` holds the true values.  Its
        publication's inner cells are the reader's: a release listing its frame has every
        combination of categories (``CellSuppression``'s default), so the audit is exact.
    rules : list of str, optional
        The primary rules of a frequency table (``['freq<=3']``); their requirements are judged.
    requirements : Requirements, optional
        What each cell's interval must reach (a magnitude table's rules need its contributions:
        :func:`cellsafe.mechanisms.protection_requirements`).  Default: from ``rules``, else those
        the release was made with (``release.requirements``), else a positive width only.
    required : float or array over the published cells, optional
        A symmetric protection on both sides of each withheld cell's value instead (the lower side
        at most down to 0).
    list : {'frame', 'nonzero'}, optional
        What the listing tells the reader (default ``release.listing``, else 'frame'): with
        'nonzero' every listed withheld count is at least 1.
    singletons : bool, default True
        Judge the requirements against every contributor alone in a withheld cell too: in a
        frequency table the record of a count of 1 (from ``inner``, default
        ``release.inner_original``), in a magnitude table the contributor given by ``sole``
        (default ``release.sole``).
    sole : array over the published cells, optional
        Each cell's single contributor, -1 for none or several (magnitude tables).
    inner : array over the publication's inner cells, optional
        A frequency table's inner counts.
    upper_bound : float, optional
        A known upper bound on every inner cell (default none).
    tol : float
        Relative tolerance of the comparisons (times ``max(1, |value|)``).

    Returns
    -------
    SuppressionAudit

    Examples
    --------
    UserSupport #307: A = 15, B = 5, C = 3 and their total 23, ``freq<=10``.  Withholding B and C
    alone publishes their sum (23 - 15 = 8, within the rule): the audit fails it.

    >>> import numpy as np
    >>> from cellsafe.table import CountTable, Variable
    >>> from cellsafe.mechanisms import CellSuppression
    >>> t = CountTable.from_dense(np.array([15, 5, 3]), [Variable("g", ["A", "B", "C"])])
    >>> [res] = CellSuppression("g", rules=["freq<=10"]).sample(t)
    >>> res.to_frame()["suppression"].tolist()  # the total, A, B, C
    ['', 'secondary', 'primary', 'primary']
    >>> audit_suppression(res).passed
    True
    >>> import dataclasses
    >>> old = dataclasses.replace(res, released=np.array([23.0, 15.0, np.nan, np.nan]))
    >>> audit = audit_suppression(old)
    >>> audit.passed, audit.sums[["value", "lower", "upper"]].values.tolist()
    (False, [[8.0, 8.0, 8.0]])
    """
    if not isinstance(release, PublishedTable):
        raise InvalidArgumentError(f"audit_suppression needs a PublishedTable. Got {type(release).__name__}.")
    listing = list if list is not None else (release.listing or "frame")
    if listing not in LISTINGS:
        raise InvalidArgumentError(f"list must be 'frame' or 'nonzero'. Got {listing!r}.")
    pub = release.publication
    released = np.asarray(release.released, dtype=np.float64)
    original = np.asarray(release.original, dtype=np.float64)
    req = _requirements(release, rules, requirements, required, original)
    withheld = np.isnan(released)
    hidden = np.flatnonzero(withheld)
    status = release.suppression
    shown = np.flatnonzero((np.asarray(status, dtype=object) != "") & ~withheld) if status is not None else np.zeros(0, dtype=np.int64)
    sensitive_published = np.flatnonzero(req.primary & ~withheld)
    counts = release.measure == "count"
    floor = np.where(original > 0, 1.0, 0.0) if (listing == "nonzero" and counts) else None
    Xc = sp.csc_matrix(pub.X, dtype=np.float64)
    # the reader's system on the published values (true values of withheld cells never enter it)
    values = np.where(withheld, original, released)
    inner_values = release.inner_original if inner is None else inner
    free = None
    if inner_values is not None and upper_bound is None:
        live = ~touching(Xc, ~withheld & (values == 0))
        if int(live.sum()) > WHOLE_SYSTEM_ROWS:  # the whole system takes minutes a program: a restricted one
            primaries = np.flatnonzero(req.primary & withheld)
            free = touching(Xc, withheld) | neighbourhood(Xc, ~withheld, primaries)
    fixed = None if free is None else np.asarray(inner_values, dtype=np.float64)
    outsider = Intruder(Xc, values, ~withheld, floor=floor, upper_bound=upper_bound, free=free, fixed=fixed)
    C = outsider.columns(hidden)
    lower, upper = outsider.bounds(C, cells=hidden, tol=tol)
    up_target = req.upper[hidden]
    low_target = req.lower[hidden]
    width_target = req.width[hidden]
    safe_low, safe_up = req.met(original[hidden], lower, upper, hidden, tol)
    safe = safe_low & safe_up
    sums = _derivable_sums(outsider, Xc, req, hidden, upper, original, tol)
    lone = pd.DataFrame(columns=["contributor", "cell", "side", "lower", "upper"])
    if singletons:
        lone = _singleton_disclosures(release, Xc, values, withheld, req, sole, inner, floor, tol, counts, fixed)
    n_lp = outsider.n_lp
    return SuppressionAudit(
        release=release, cells=hidden.astype(np.int64), lower=lower, upper=upper, upper_target=up_target,
        lower_target=low_target, width_target=width_target, safe=safe, sums=sums, singletons=lone,
        shown_withheld=shown.astype(np.int64), sensitive_published=sensitive_published.astype(np.int64), listing=listing,
        exact=free is None, n_lp=n_lp,
    )


def _requirements(release: PublishedTable, rules: Any, requirements: Any, required: Any, original: np.ndarray) -> Requirements:
    n = original.shape[0]
    if requirements is not None:
        if requirements.n != n:
            raise DataError(f"the requirements hold {requirements.n} cells; the release has {n}.")
        return requirements
    if rules is not None:
        if release.measure != "count":
            raise InvalidArgumentError(
                "a magnitude table's rules need its contributions: pass requirements=protection_requirements(rules, "
                "n_contributors, values, top)."
            )
        return protection_requirements(rules, np.rint(original).astype(np.int64))
    if required is not None:
        r = np.broadcast_to(np.asarray(required, dtype=np.float64), (n,))
        if np.any(r < 0):
            raise DataError("required protection must be non-negative.")
        primary = (r > 0) | (np.asarray(release.suppression, dtype=object) == "primary") if release.suppression is not None else r > 0
        up = np.where(r > 0, original + r, -np.inf)
        low = np.where(r > 0, original - np.minimum(r, np.maximum(original, 0.0)), np.inf)
        return Requirements(primary, up, low, np.zeros(n))
    if release.requirements is not None:
        return release.requirements
    primary = np.zeros(n, dtype=bool) if release.suppression is None else np.asarray(release.suppression, dtype=object) == "primary"
    return Requirements(primary, np.full(n, -np.inf), np.full(n, np.inf), np.zeros(n))


def _derivable_sums(outsider: Intruder, outsider_X: Any, req: Requirements, hidden: np.ndarray, upper: np.ndarray, original: np.ndarray, tol: float) -> pd.DataFrame:
    """Sums of withheld primaries the reader computes exactly and that are within the frequency rule.

    A primary in such a sum has an upper bound at most the sum (the others are non-negative), so
    only primaries whose upper bound is within the rule can be in one: their groups of total
    within the rule are bounded, each by one program pair on the union of its inner cells.
    """
    empty = pd.DataFrame(columns=["cells", "value", "lower", "upper"])
    T = req.threshold
    if T <= 0:
        return empty
    small = (req.primary[hidden]) & (upper <= T + tol * max(1.0, T)) & (original[hidden] >= 1)
    cand = hidden[small]
    if cand.size < 2:
        return empty
    groups: list[tuple[int, ...]] = []
    for k in range(2, min(int(T), cand.size) + 1):
        for g in itertools.combinations(cand.tolist(), k):
            if original[list(g)].sum() <= T:
                groups.append(g)
                if len(groups) >= _MAX_GROUPS:
                    break
        if len(groups) >= _MAX_GROUPS:
            break
    if not groups:
        return empty
    X = sp.csc_matrix(outsider_X)
    U = sp.hstack([sp.csc_matrix((np.asarray(X[:, list(g)].sum(axis=1)) > 0).astype(np.float64)) for g in groups], format="csc")
    lo, hi = outsider.bounds(outsider.restrict(U), tol=tol)
    rows = []
    for g, a, b in zip(groups, lo, hi):
        value = float(original[list(g)].sum())
        if b - a <= tol * max(1.0, value) and 1 <= value <= T:
            rows.append({"cells": tuple(int(c) for c in g), "value": value, "lower": float(a), "upper": float(b)})
    return pd.DataFrame(rows, columns=["cells", "value", "lower", "upper"]) if rows else empty


def _singleton_disclosures(
    release: PublishedTable, Xc: sp.csc_matrix, values: np.ndarray, withheld: np.ndarray, req: Requirements, sole: Any,
    inner: Any, floor: Any, tol: float, counts: bool, fixed: Any,
) -> pd.DataFrame:
    """Requirements of withheld primaries a contributor alone in a withheld cell leaves unmet."""
    cols = ["contributor", "cell", "side", "lower", "upper"]
    n = values.shape[0]
    if counts:
        inner = release.inner_original if inner is None else inner
        if inner is None:
            return pd.DataFrame(columns=cols)
        inner = np.asarray(inner)
        if inner.shape != (Xc.shape[0],):
            raise DataError(f"inner must hold the publication's {Xc.shape[0]} inner cells. Got shape {inner.shape}.")
        who = sole_contributors_of_counts(Xc, inner)
    else:
        who = release.sole if sole is None else sole
        if who is None:
            return pd.DataFrame(columns=cols)
        who = np.asarray(who, dtype=np.int64)
    primaries = np.flatnonzero(req.primary & withheld)
    if not primaries.size or not np.any(withheld & (who >= 0)):
        return pd.DataFrame(columns=cols)
    up_t, down_t, either = requirement_targets(values, None, req.upper, req.lower, 0.0)
    rows = []
    fl = np.zeros(n) if floor is None else floor
    free = None if fixed is None else touching(Xc, withheld)
    for p, c, mine, short in singleton_shortfalls(Xc, values, withheld, primaries, who, up_t, down_t, fl, not counts, either, tol, inner=fixed):
        known = ~withheld
        known[mine] = True
        alone = Intruder(Xc, values, known, floor=floor, free=free, fixed=fixed)
        lo, hi = alone.bounds(alone.columns([p]), cells=np.array([p]))
        for _, is_upper, _ in short:
            rows.append({"contributor": c, "cell": p, "side": "upper" if is_upper else "lower", "lower": float(lo[0]), "upper": float(hi[0])})
    return pd.DataFrame(rows, columns=cols)
