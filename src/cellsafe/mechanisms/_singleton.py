"""The singleton problem of cell suppression: a contributor alone in a cell knows that cell.

A published cell with a single contributor is known to that contributor whether it is published or
not.  Two ways this undoes a suppression pattern that is safe against an outsider (Langsrud 2024,
section 4; GaussSuppression's singleton methods):

1. *A singleton as the partner of a primary.*  Primary p and cell s, with s's only contributor c,
   are the two withheld cells of an equation ``T = p + s + published``: c knows s, so c computes p.
   In general c knows the published cells and every cell it alone contributes to (its *own*
   cells), and the pattern must keep every primary that is not c's own out of the span of those.
2. *Two primaries of one contributor.*  Primaries p1 and p2 whose only contributor is the same c
   protect each other in ``T = p1 + p2 + published``: anyone computes ``p1 + p2``, which is c's
   total over the two cells, a cell with one contributor published after all.  The sum of each pair
   of c's primaries (the union of their inner cells) is therefore protected as a *virtual primary*:
   a column added to X, withheld, never a candidate for publication.

Sound version implemented here (what is guaranteed, exactly):

- the virtual primaries of (2) join the primaries of the Gaussian elimination, for every pair of a
  contributor's primary singletons (for a contributor alone in more than 12 primaries, the pairs
  of consecutive ones in position order and the union of all of them);
- for (1), each contributor c who is alone in some withheld cell is an attacker of its own.  The
  primaries (real and virtual) not of c must not be linear combinations of the published cells and
  c's own cells: that is checked for each such c by the span test, and where it fails, the
  Gaussian elimination runs once more with c's own cells published first (``forced``) and the
  published cells offered in the candidate order, withholding those that would expose a primary.
  Withholding more never adds to anyone's knowledge (c knows its own cells either way), so a
  contributor once checked stays protected as the others add suppressions; the loop ends when every
  contributor alone in a withheld cell has been checked.

Computation: every contributor's span test shares the published cells.  They are eliminated once
(the sparse elimination of :mod:`~cellsafe.mechanisms._gauss_sparse`, exact pattern) with the
primaries' residuals kept reduced off them; a contributor then reduces only its own withheld cells
(a few columns) among themselves, and only the primaries whose residual touches one of their pivot
rows are reduced again and tested.  The published span is the one of the pattern when the loop
starts: cells withheld later only take from what a contributor knows, so a contributor it finds safe
is safe, and one it finds exposing is checked by its rerun, which withholds nothing when the
pattern of the moment exposes nothing (below).  The rerun of the Gaussian elimination guards only
the primaries the test found exposed: a primary that c's published and own cells do not expose is
not exposed by any part of them, so guarding it as well changes no decision, and the pattern is the
one of guarding every primary not of c (tests compare with that plain loop in rational arithmetic).
On sparse systems a rerun starts late (:class:`_Prefixes`): until its first decision its span is
that of the known cells and the order's prefix, so where no guarded primary is in that span for a
prefix still published, it goes on from a copy of the prefix's span (at hier 2e4, 34 reruns took
0.30 CPU s from the start, 0.03 s late; the same pattern).  Where the elimination is dense
(:func:`~cellsafe.mechanisms._gauss.choose_method`) the test runs on the dense span instead
(:class:`_DenseTest`): on all 2-way margins of six variables the sparse span fills in (20 CPU s to
build at 1e6 records, 0.6 s dense).
On 2,000 records of ``a*b*c`` with every record its own contributor the shared span took the check
from 230 s to 4.3 s (dense); on the 10^4-leaf hierarchy of ``bench_suppression_leaves.py`` (30,303
cells, 635 contributors alone in a withheld cell, 77 reruns) the elimination and this protection
take 16 CPU s where the dense ones needed hours.

The check here is linear (no primary computable exactly); the widths of the primaries' intervals,
against the outside attacker and against each contributor alone in withheld cells, are the business
of :func:`~cellsafe.mechanisms.protect_intervals` (its ``sole`` argument).

In a frequency table the record of a cell with count 1 is the contributor: a published cell of
count 1 is known to its one record (:func:`sole_contributors_of_counts`).

References: Langsrud, Ø. (2024). Secondary cell suppression by Gaussian elimination: an algorithm
suitable for handling issues with zeros and singletons. Privacy in Statistical Databases, LNCS 14915.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._work import projected
from ._gauss import TOL, choose_method, column_relations, gauss_secondary, off_span, span_basis
from ._gauss_sparse import SparseSpan, _column, sparse_columns, sparse_gauss_secondary

__all__ = ["sole_contributors_of_counts", "virtual_primaries", "singleton_secondary"]

#: A contributor with more primary singletons than this has pairs of consecutive ones only.
_MAX_ALL_PAIRS = 12


def sole_contributors_of_counts(X: sp.spmatrix, inner_counts: np.ndarray) -> np.ndarray:
    """For a frequency table: the inner cell (row of X) of the one record of each published count of 1, else -1.

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 1]], dtype=float))
    >>> sole_contributors_of_counts(X, np.array([1, 3])).tolist()
    [0, -1, -1]
    """
    counts = np.asarray(inner_counts)
    Xc = sp.csc_matrix(X)
    one = (counts == 1).astype(np.float64)
    row_id = (np.arange(counts.shape[0]) + 1.0) * one
    published = np.asarray(Xc.T @ counts.astype(np.float64)).reshape(-1)
    who = np.asarray(Xc.T @ row_id).reshape(-1)
    return np.where(published == 1, np.rint(who).astype(np.int64) - 1, -1)


def virtual_primaries(X: sp.spmatrix, primary: np.ndarray, sole: np.ndarray) -> tuple[sp.csc_matrix, np.ndarray]:
    """Columns for the sums of pairs of primaries with the same single contributor (module notes, 2).

    Returns
    -------
    V : sparse matrix, inner cells x virtual cells
        0/1 columns: the union of the two cells' inner cells.  A union equal to one of the two
        (nested cells) is left out: that cell is protected already.
    owner : ndarray of int64
        The contributor of each virtual cell.

    Examples
    --------
    >>> X = sp.csr_matrix(np.eye(3))
    >>> V, owner = virtual_primaries(X, np.array([True, True, True]), np.array([7, 7, 8]))
    >>> V.toarray().tolist(), owner.tolist()
    ([[1.0], [1.0], [0.0]], [7])
    """
    Xc = sp.csc_matrix(X, dtype=np.float64)
    cells = np.flatnonzero(np.asarray(primary, dtype=bool) & (np.asarray(sole) >= 0))
    cells = cells[np.lexsort((cells, sole[cells]))]
    owners = sole[cells]
    start = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]]) if cells.size else np.zeros(0, dtype=np.int64)
    stop = np.r_[start[1:], cells.size]
    first: list[int] = []
    second: list[np.ndarray] = []
    unions: list[np.ndarray] = []
    for a, b in zip(start, stop):  # one contributor at a time: few have several primary singletons
        mine = cells[a:b]
        k = mine.shape[0]
        if k < 2:
            continue
        if k <= _MAX_ALL_PAIRS:
            i, j = np.triu_indices(k, 1)
        else:
            i, j = np.arange(k - 1), np.arange(1, k)
            unions.append(mine)
        first.extend(mine[i].tolist())
        second.append(mine[j])
    if not first:
        return sp.csc_matrix((Xc.shape[0], 0)), np.zeros(0, dtype=np.int64)
    i = np.asarray(first, dtype=np.int64)
    j = np.concatenate(second)
    V = ((Xc[:, i] + Xc[:, j]) > 0).astype(np.float64)
    owner = sole[i]
    if unions:
        U = sp.hstack([sp.csc_matrix((np.asarray(Xc[:, u].sum(axis=1)) > 0).astype(np.float64)) for u in unions]).tocsc()
        V = sp.hstack([V, U]).tocsc()
        owner = np.concatenate([owner, sole[[u[0] for u in unions]]])
    V = sp.csc_matrix(V)
    # a union equal to one of its parts adds nothing; duplicates neither
    size = np.diff(V.indptr)
    part = np.maximum(np.diff(Xc.indptr)[i], np.diff(Xc.indptr)[j])
    keep = np.r_[size[: i.size] > part, np.ones(V.shape[1] - i.size, dtype=bool)]
    V, owner = V[:, np.flatnonzero(keep)], owner[keep]
    V.sort_indices()
    seen: dict[bytes, int] = {}
    for c in range(V.shape[1]):  # few columns: one per pair of a contributor's primaries
        seen.setdefault(V.indices[V.indptr[c] : V.indptr[c + 1]].tobytes(), c)
    uniq = np.sort(np.fromiter(seen.values(), dtype=np.int64, count=len(seen)))
    V, owner = V[:, uniq], owner[uniq]
    return sp.csc_matrix(V), owner


def singleton_secondary(
    X: Any,
    primary: np.ndarray,
    suppressed: np.ndarray,
    sole: np.ndarray,
    order: np.ndarray,
    *,
    forced: np.ndarray | None = None,
    virtual: tuple[sp.spmatrix, np.ndarray] | None = None,
    checked: set[int] | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Withhold further cells until no contributor alone in a withheld cell can compute another's primary.

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells
    primary : bool array
        The primary cells.
    suppressed : bool array
        Every cell withheld so far (primary and secondary).
    sole : int array
        Each cell's single contributor, -1 for a cell with none or several.
    order : int array
        All cells in the order they are offered for publication (:func:`candidate_order`).
    forced : bool array, optional
        Cells that are published whatever happens.
    virtual : (V, owner), optional
        Virtual primaries (:func:`virtual_primaries`) and their contributors.
    checked : set, optional
        Contributors already checked against a subset of the cells withheld now (they stay
        protected: module notes); updated in place with those checked here.

    Returns
    -------
    suppressed : bool array
        The cells withheld now (a superset of the input).
    exposed : bool array
        Primaries some contributor computes from its own cells and the forced ones alone (cannot be
        protected).
    n_attackers : int
        Contributors for whom the Gaussian elimination was run again.
    """
    Xc = sp.csc_matrix(X, dtype=np.float64)
    n = Xc.shape[1]
    sole = np.asarray(sole, dtype=np.int64)
    primary = np.asarray(primary, dtype=bool)
    suppressed = np.array(suppressed, dtype=bool)
    forced = np.zeros(n, dtype=bool) if forced is None else np.asarray(forced, dtype=bool)
    V, owner = virtual if virtual is not None else (sp.csc_matrix((Xc.shape[0], 0)), np.zeros(0, dtype=np.int64))
    XV = sp.hstack([Xc, V]).tocsc() if V.shape[1] else Xc
    owner_all = np.r_[np.where(primary, sole, -1), owner]
    prim_all = np.r_[primary, np.ones(V.shape[1], dtype=bool)]
    exposed = np.zeros(n, dtype=bool)
    done: set[int] = set() if checked is None else checked
    n_runs = 0
    # The span test of each attacker c (what c knows: the published cells and its own) shares the
    # published span with every other attacker: it is eliminated once (sparse, exact pattern), with the
    # primaries' residuals kept reduced off it, and each c only reduces its own withheld cells (a few
    # columns) and the residuals of the primaries they touch.  The span is built on the pattern at the
    # start: cells withheld since then only shrink what c knows, so a c found safe on it is safe (a
    # false alarm costs an elimination that withholds nothing: module notes).
    cols = sparse_columns(XV)
    indptr, rows, vals = cols
    span = SparseSpan()
    published = order[~suppressed[order]]
    prims = np.flatnonzero(prim_all)
    sparse = choose_method(XV) == "sparse"
    # on dense systems the same test on the dense span (:class:`_DenseTest`); on sparse ones copies of the
    # span of growing prefixes, from which a rerun can start (module notes)
    dense = None if sparse else _DenseTest(XV, published, prims)
    prefixes = _Prefixes(published) if sparse else None
    for k, j in enumerate(published.tolist() if sparse else []):
        if prefixes is not None:
            prefixes.keep(k, span)
        r = span.reduce(rows[indptr[j] : indptr[j + 1]], vals[indptr[j] : indptr[j + 1]])
        if r:
            span.add(r, span.pivot_row(r))
    for p in prims.tolist() if sparse else []:
        r = span.reduce(rows[indptr[p] : indptr[p + 1]], vals[indptr[p] : indptr[p + 1]])
        if r:
            span.track(p, r)
    started, examined, what = time.perf_counter(), 0, ""
    fix = "publish fewer cells (fewer crossings or hierarchy levels in the formula)"
    while True:
        attackers = np.unique(sole[suppressed & (sole >= 0)])
        todo = [int(c) for c in attackers if int(c) not in done]
        if not todo:
            break
        what = what or f"singleton protection ({len(todo):,} contributors alone in a withheld cell)"
        base = examined
        for c in todo:
            # bounded work (cellsafe._work): each contributor may need an elimination of its own
            projected(what, examined, base + len(todo), started, fix)
            examined += 1
            done.add(c)
            own = sole == c
            guarded = prim_all & (owner_all != c)
            if not guarded.any():
                continue
            mine = np.flatnonzero(own & suppressed)
            at_risk = dense.exposed(mine, guarded) if dense is not None else _exposed_by_own(span, cols, mine, guarded)
            if not at_risk.size:
                continue  # c's own cells expose nothing
            n_runs += 1
            # only the primaries c's knowledge (published and own cells) exposes can be exposed by a part of it:
            # guarding them alone gives the pattern guarding every primary not of c gives
            target = np.zeros(XV.shape[1], dtype=bool)
            target[at_risk] = True
            offer = order[~suppressed[order] & ~own[order]]
            known = np.r_[own | forced, np.zeros(V.shape[1], dtype=bool)]
            late = None if prefixes is None else prefixes.rerun(XV, cols, target, offer, known, suppressed, what, fix)
            sec, exp = late if late is not None else gauss_secondary(XV, target, offer, forced=known)
            suppressed |= sec[:n]
            exposed |= exp[:n]
    return suppressed, exposed, n_runs


def _exposed_by_own(span: SparseSpan, cols: tuple[Any, list[int], list[Any]], own: np.ndarray, guarded: np.ndarray) -> np.ndarray:
    """The ``guarded`` primaries in the span of ``span`` and the columns ``own`` (exact pattern, sparse).

    ``own``'s residuals off ``span`` are reduced among themselves (a small span of their own); a
    primary's residual off ``span`` is in the joint span exactly when it vanishes off that small one,
    and only primaries whose residual touches one of its pivot rows can.
    """
    indptr, rows, vals = cols
    local = SparseSpan()
    for j in own.tolist():
        r = local.reduce_vector(span.reduce(rows[indptr[j] : indptr[j + 1]], vals[indptr[j] : indptr[j + 1]]))
        if r:
            local.add(r, local.pivot_row(r))
    near: set[int] = set()
    for i in local.pivots:
        near.update(span.tracked_by_row.get(i, ()))
    out = [p for p in sorted(near) if guarded[p] and not local.reduce_vector(span.tracked[p])]
    return np.asarray(out, dtype=np.int64)


class _Prefixes:
    """Copies of the published span after growing prefixes of the candidate order, to start reruns late.

    A rerun (:func:`singleton_secondary`) publishes c's own and the forced cells first, then offers
    the published cells in order, withholding one only where it would put a guarded primary in the
    span; on hierarchies the first such cell comes late (past 80% of the order at hier 2e4).  While
    no decision is taken the span is that of the cells offered so far, whatever order they were
    eliminated in, so where no guarded primary is in the span of the known cells and a prefix of the
    order (all still published), the rule takes no decision in that prefix: it goes on from a copy
    of the prefix's span with the known cells added, the same decisions as the rerun from the start.
    """

    FRACTIONS = (0.5, 0.625, 0.75, 0.8125, 0.875, 0.9375)

    def __init__(self, published: np.ndarray) -> None:
        self.published = np.asarray(published, dtype=np.int64)
        n = self.published.size
        self.marks = sorted({int(f * n) for f in self.FRACTIONS if int(f * n) > 0})
        self.copies: list[tuple[int, SparseSpan]] = []

    def keep(self, k: int, span: SparseSpan) -> None:
        """Called before the k-th published cell joins ``span``: keep a copy at the marks."""
        if self.marks and k == self.marks[0]:
            self.marks.pop(0)
            self.copies.append((k, span.copy()))

    def rerun(self, XV: Any, cols: tuple[Any, list[int], list[Any]], target: np.ndarray, offer: np.ndarray, known: np.ndarray,
              suppressed: np.ndarray, what: str, fix: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The rerun's ``(secondary, exposed)`` from the longest usable prefix; None where none is."""
        withheld = np.flatnonzero(suppressed[self.published])  # since the copies were made
        limit = int(withheld[0]) if withheld.size else self.published.size
        forced = np.flatnonzero(known)
        guarded = np.flatnonzero(target)
        for k, snap in reversed(self.copies):
            if k > limit:
                continue
            local = SparseSpan()
            for j in forced.tolist():
                r = local.reduce_vector(snap.reduce(*_column(*cols, j)))
                if r:
                    local.add(r, local.pivot_row(r))
            if any(not local.reduce_vector(snap.reduce(*_column(*cols, p))) for p in guarded.tolist()):
                continue  # a decision within this prefix: a shorter one, or the rerun from the start
            head = np.zeros(XV.shape[1], dtype=bool)
            head[self.published[:k]] = True
            head[forced] = True
            offered = np.concatenate([forced, offer[~head[offer]]])
            offered = offered[~target[offered]]
            return sparse_gauss_secondary(XV, target, offered, known, columns=cols, start=snap.copy(), what=what, fix=fix)
        return None


class _DenseTest:
    """The span test of :func:`singleton_secondary` on the dense matrix of :func:`column_relations`.

    Where the Gaussian elimination is dense (:func:`choose_method`: long columns, all 2-way margins
    of six variables), the sparse span fills in: built once it took 20 CPU s on 1e6 records (45,870
    inner cells), where the dense one takes 0.6 s.  The published span is an orthonormal basis
    (:func:`span_basis`, Gram-Schmidt applied twice), the primaries' residuals are kept off it; a
    contributor's own withheld cells are projected off it and given a basis of their own, and a
    guarded primary is exposed when its residual vanishes off that one (at most ``tol`` of its
    column's norm, the rule of the dense elimination).  Primaries in the published span alone are
    left to the elimination, as the sparse test leaves them.  On the captured calls at 1e4, 1e5
    and 1e6 records every contributor's exposed primaries were those of the sparse test.
    """

    def __init__(self, XV: Any, published: np.ndarray, prims: np.ndarray, tol: float = TOL) -> None:
        self.tol = tol
        self.Y = column_relations(XV)
        self.norms = np.sqrt(np.einsum("ij,ij->j", self.Y, self.Y))
        self.Q = span_basis(self.Y, self.norms, np.asarray(published, dtype=np.int64), tol=tol)
        R = off_span(self.Q, self.Y[:, prims])
        live = np.sqrt(np.einsum("ij,ij->j", R, R)) > tol * self.norms[prims]
        self.prims, self.R = prims[live], R[:, live]

    def exposed(self, own: np.ndarray, guarded: np.ndarray) -> np.ndarray:
        """The ``guarded`` primaries in the span of the published cells and the cells ``own``."""
        none = np.zeros(0, dtype=np.int64)
        keep = guarded[self.prims]
        if not own.size or not keep.any():
            return none
        U = span_basis(off_span(self.Q, self.Y[:, own]), self.norms[own], np.arange(own.size), tol=self.tol)
        if not U.shape[0]:
            return none
        left = off_span(U, self.R[:, keep])
        hit = np.sqrt(np.einsum("ij,ij->j", left, left)) <= self.tol * self.norms[self.prims[keep]]
        return np.sort(self.prims[keep][hit])
