"""The sparse Gaussian elimination gives the greedy rule's pattern exactly: against the dense projection and
rational arithmetic, on random hierarchical and multi-way tables (both listings, forced cells, singletons).

The references here are independent of the sparse code: the dense projection of ``_gauss`` (float
Gram-Schmidt on X or its sketch), and a plain rational-arithmetic singleton loop written below.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from cellsafe import CountTable, Hierarchy
from cellsafe.mechanisms._gauss import candidate_order, gauss_secondary, in_published_span
from cellsafe.mechanisms._gauss_sparse import SparseSpan
from cellsafe.mechanisms._singleton import singleton_secondary, sole_contributors_of_counts, virtual_primaries
from cellsafe.published import Publication, publication_for


def _multiway(seed: int):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    sizes = rng.integers(2, 7, k)
    names = [f"v{i}" for i in range(k)]
    w = [rng.gamma(1.0, 1.0, s) for s in sizes]
    n = int(rng.integers(20, 400))
    df = pd.DataFrame({nm: rng.choice(s, n, p=wi / wi.sum()).astype(str) for nm, s, wi in zip(names, sizes, w)})
    table = CountTable.from_frame(df, names)
    return table, publication_for(table, "(" + "+".join(names) + ")^2")


def _hierarchical(seed: int):
    rng = np.random.default_rng(seed)
    parents, per = int(rng.integers(2, 6)), int(rng.integers(2, 6))
    leaves = [f"L{p}{i}" for p in range(parents) for i in range(per)]
    geo = pd.DataFrame({"region": [f"P{p}" for p in range(parents) for _ in range(per)], "geo": leaves})
    n = int(rng.integers(parents * per * 2, parents * per * 6))
    df = pd.DataFrame({"geo": rng.choice(leaves, n), "sex": rng.choice(["F", "M"], n), "age": rng.choice(["y", "o"], n)})
    table = CountTable.from_frame(df, ["geo", "sex", "age"])
    h = Hierarchy.from_levels(geo, ["region", "geo"])
    pub = Publication.from_formula(table, "region*sex + geo*sex + region*age", hierarchies={"geo": h})
    return table, pub


CASES = [("multiway", s) for s in range(12)] + [("hier", s) for s in range(12)]


@pytest.mark.parametrize("kind, seed", CASES)
def test_sparse_pattern_is_the_dense_and_the_rational_one(kind, seed):
    table, pub = (_multiway if kind == "multiway" else _hierarchical)(seed)
    z = pub.aggregate(table)
    inner = np.asarray(pub.inner_counts(table))
    primary = (z >= 1) & (z <= 2 + seed % 2)
    order = candidate_order(pub.X, z)
    order = order[~primary[order]]
    rng = np.random.default_rng(100 + seed)
    forced = np.zeros(z.shape[0], dtype=bool)
    if seed % 3 == 0 and order.size > 3:
        forced[rng.choice(order, 3, replace=False)] = True
    # the frame (every inner cell a row) and the listing of non-empty cells (only those rows)
    for X in (pub.X, sp.csr_matrix(pub.X)[inner > 0]):
        got = {m: gauss_secondary(X, primary, order, forced=forced, method=m) for m in ("sparse", "exact", "dense")}
        for m in ("sparse", "exact"):
            assert_array_equal(got[m][0], got["dense"][0])
            assert_array_equal(got[m][1], got["dense"][1])
        published = np.flatnonzero(~primary & ~got["sparse"][0])
        assert not in_published_span(X, published, np.flatnonzero(primary & ~got["sparse"][1]), method="exact").any()
        assert_array_equal(
            in_published_span(X, published, np.arange(z.shape[0])),
            in_published_span(X, published, np.arange(z.shape[0]), method="dense"),
        )


def _reference_singletons(X, primary, suppressed, sole, order, forced, virtual):
    """The singleton loop of the module notes the plain way: every contributor alone in a withheld cell tested
    against the pattern of the moment in rational arithmetic, and the elimination rerun (exact) guarding every
    primary not its own."""
    Xc = sp.csc_matrix(X)
    n = Xc.shape[1]
    V, owner = virtual
    XV = sp.hstack([Xc, V]).tocsc() if V.shape[1] else Xc
    owner_all = np.r_[np.where(primary, sole, -1), owner]
    prim_all = np.r_[primary, np.ones(V.shape[1], dtype=bool)]
    suppressed = suppressed.copy()
    done: set[int] = set()
    while True:
        todo = [int(c) for c in np.unique(sole[suppressed & (sole >= 0)]) if int(c) not in done]
        if not todo:
            return suppressed
        for c in todo:
            done.add(c)
            own = sole == c
            guarded = prim_all & (owner_all != c)
            known = np.flatnonzero(np.r_[~suppressed | own, np.zeros(V.shape[1], dtype=bool)])
            if not in_published_span(XV, known, np.flatnonzero(guarded), method="exact").any():
                continue
            offer = order[~suppressed[order] & ~own[order]]
            sec, _ = gauss_secondary(XV, guarded, offer, forced=np.r_[own | forced, np.zeros(V.shape[1], dtype=bool)], method="exact")
            suppressed |= sec[:n]


@pytest.mark.parametrize("kind, seed", CASES[::2])
def test_singleton_protection_is_the_plain_loop(kind, seed):
    table, pub = (_multiway if kind == "multiway" else _hierarchical)(seed)
    z = pub.aggregate(table)
    inner = np.asarray(pub.inner_counts(table))
    X = pub.X
    primary = (z >= 1) & (z <= 2)
    sole = sole_contributors_of_counts(X, inner)
    order = candidate_order(X, z)
    forced = np.zeros(z.shape[0], dtype=bool)
    virtual = virtual_primaries(X, primary, sole)
    XV = sp.hstack([sp.csc_matrix(X), virtual[0]]).tocsc() if virtual[0].shape[1] else X
    nv = virtual[0].shape[1]
    offer = order[~primary[order]]
    sec, _ = gauss_secondary(XV, np.r_[primary, np.ones(nv, dtype=bool)], offer, forced=np.r_[forced, np.zeros(nv, dtype=bool)])
    start = primary | sec[: z.shape[0]]
    ours, _, _ = singleton_secondary(X, primary, start, sole, order, forced=forced, virtual=virtual)
    assert_array_equal(ours, _reference_singletons(X, primary, start, sole, order, forced, virtual))
    # and what it promises: no primary not of c in the span of the published cells and c's own
    owner = np.where(primary, sole, -1)
    for c in np.unique(sole[ours & (sole >= 0)]):
        known = np.flatnonzero(~ours | (sole == c))
        assert not in_published_span(X, known, np.flatnonzero(primary & (owner != c)), method="exact").any()


def test_reruns_from_a_prefix_are_the_reruns_from_the_start(monkeypatch):
    """The reruns that start from a copy of a prefix's span (``_Prefixes``) give the pattern of the plain loop
    (above), and they are taken: on these tables most reruns start late."""
    from cellsafe.mechanisms import _singleton

    taken = []
    plain = _singleton._Prefixes.rerun

    def counted(self, *args, **kwargs):
        out = plain(self, *args, **kwargs)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(_singleton._Prefixes, "rerun", counted)
    for kind, seed in CASES[::2]:
        test_singleton_protection_is_the_plain_loop(kind, seed)
    assert sum(taken) > len(taken) / 2



def test_dense_span_test_is_the_plain_loop(monkeypatch):
    """The span test on the dense matrix (``_DenseTest``, used where the elimination is dense) gives the pattern
    of the plain loop in rational arithmetic (above) on every table, and it is taken."""
    from cellsafe.mechanisms import _singleton

    asked = []
    plain = _singleton._DenseTest.exposed

    def counted(self, *args):
        out = plain(self, *args)
        asked.append(out.size)
        return out

    monkeypatch.setattr(_singleton, "choose_method", lambda X: "dense")
    monkeypatch.setattr(_singleton._DenseTest, "exposed", counted)
    for kind, seed in CASES[::2]:
        test_singleton_protection_is_the_plain_loop(kind, seed)
    assert asked and any(asked)

def test_span_in_exact_arithmetic_by_hand():
    """x1 = e0 + e1, x2 = e1 + e2: x1 - x2 = e0 - e2 is in their span, e0 is not; a tracked e0 + e1 is exposed by x1."""
    span = SparseSpan(exact=True)
    one = Fraction(1)
    r = span.reduce([0, 1], [one, one])
    span.track(7, {0: one, 1: one})
    i = span.pivot_row(r)
    assert span.exposes(r, i) == [7]
    assert span.add(r, i) == [7] and not span.tracked
    r2 = span.reduce([1, 2], [one, one])
    span.add(r2, span.pivot_row(r2))
    assert not span.reduce([0, 2], [one, -one])
    assert span.reduce([0], [one])
