"""Exact marginal inference on a junction tree: calibration (sum-product), marginals, records.

Clique tables are dense numpy arrays whose axes follow the clique's sorted attributes.  Calibration
works in linear space on ``exp(theta - max theta)`` with every message normalized to sum 1 (no
overflow or underflow of the totals) and divides only at the separators (Hugin's scheme), so a
pass costs a few array operations per clique.  Marginals of attribute sets that no clique holds
are computed by eliminating attributes over the smallest subtree that covers them.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ._junction import JunctionTree

__all__ = ["Calibrator", "MarginalOracle", "CellMap", "sum_to", "expand_shape"]


#: Tables from this many cells are summed after one copy into (kept, summed) order: ``ndarray.sum`` over
#: several axes that are not the last ones walks a large table in strides, several times slower.
_TRANSPOSE_FROM = 4096


def sum_to(values: np.ndarray, attrs: Sequence[int], keep: Sequence[int]) -> np.ndarray:
    """Sum the table ``values`` over ``attrs`` onto ``keep`` (a subset, sorted)."""
    keep_set = set(keep)
    axes = tuple(i for i, a in enumerate(attrs) if a not in keep_set)
    if not axes:
        return values
    if values.size < _TRANSPOSE_FROM or len(axes) == values.ndim:
        return values.sum(axis=axes)
    kept = tuple(i for i in range(values.ndim) if i not in axes)
    shape = tuple(values.shape[i] for i in kept)
    flat = np.ascontiguousarray(values.transpose(kept + axes)).reshape(math.prod(shape), -1)
    return flat.sum(axis=1).reshape(shape)


class CellMap:
    """Every cell of a table over sorted ``attrs`` mapped to its cell of the marginal over ``keep`` (a subset).

    :meth:`sum` is the marginal (``np.bincount`` with the table as weights: one pass in memory order, where
    ``ndarray.sum`` over several axes that are not the last ones walks the table in strides, 4-5 times slower
    on clique tables with short axes) and :meth:`spread` is its adjoint, the marginal broadcast back over the
    table (one gather).  The map costs one integer per cell; it pays when one table is summed onto the same
    marginal many times (every iteration of a fit).
    """

    def __init__(self, sizes: Sequence[int], attrs: Sequence[int], keep: Sequence[int]) -> None:
        self.shape = tuple(int(sizes[a]) for a in attrs)
        self.kept = tuple(int(sizes[a]) for a in keep)
        self.n = math.prod(self.kept)
        if keep:
            grids = np.indices(self.shape, sparse=True)
            pos = {a: i for i, a in enumerate(attrs)}
            flat = np.ravel_multi_index(tuple(grids[pos[a]] for a in keep), self.kept)
            self.index = np.ascontiguousarray(np.broadcast_to(flat, self.shape)).ravel().astype(np.intp, copy=False)
        else:
            self.index = np.zeros(math.prod(self.shape), dtype=np.intp)

    def sum(self, values: np.ndarray) -> np.ndarray:
        """The marginal of ``values`` over ``keep`` (axes in that order)."""
        return np.bincount(self.index, weights=values.ravel(), minlength=self.n).reshape(self.kept)

    def spread(self, marginal: np.ndarray) -> np.ndarray:
        """``marginal`` broadcast over the table (each cell takes its marginal cell's value)."""
        return np.take(marginal.ravel(), self.index).reshape(self.shape)


def expand_shape(sizes: Sequence[int], attrs: Sequence[int], target: Sequence[int]) -> tuple[int, ...]:
    """The shape that broadcasts a table over sorted ``attrs`` into one over sorted ``target``."""
    have = set(attrs)
    return tuple(sizes[a] if a in have else 1 for a in target)


class Calibrator:
    """Sum-product on one junction tree, with the axis bookkeeping done once.

    ``calibrate(theta)`` takes one log-potential table per clique and returns every clique's
    marginal distribution (tables summing to 1) and log Z.
    """

    def __init__(self, tree: JunctionTree) -> None:
        self.tree = tree
        sizes = tree.sizes
        self.children = tree.children()
        self.shapes = [tuple(sizes[a] for a in c) for c in tree.cliques]
        n = len(tree.cliques)
        self.child_axes: list[tuple[int, ...]] = [()] * n  # axes of clique i summed to reach its separator
        self.parent_axes: list[tuple[int, ...]] = [()] * n  # axes of the parent summed to reach it
        self.in_child: list[tuple[int, ...]] = [()] * n  # separator broadcast into clique i
        self.in_parent: list[tuple[int, ...]] = [()] * n  # separator broadcast into the parent
        self.child_map: list[CellMap | None] = [None] * n  # clique i's cells onto its separator
        self.parent_map: list[CellMap | None] = [None] * n  # the parent's cells onto clique i's separator
        for i, (c, p, s) in enumerate(zip(tree.cliques, tree.parent, tree.separators)):
            if p < 0:
                continue
            sep = set(s)
            self.child_axes[i] = tuple(k for k, a in enumerate(c) if a not in sep)
            self.parent_axes[i] = tuple(k for k, a in enumerate(tree.cliques[p]) if a not in sep)
            self.in_child[i] = expand_shape(sizes, s, c)
            self.in_parent[i] = expand_shape(sizes, s, tree.cliques[p])
            if self.child_axes[i]:
                self.child_map[i] = CellMap(sizes, c, s)
            if self.parent_axes[i]:
                self.parent_map[i] = CellMap(sizes, tree.cliques[p], s)

    def calibrate(self, theta: Sequence[np.ndarray]) -> tuple[list[np.ndarray], float]:
        """Clique marginals (each summing to 1) and the log partition function."""
        tree = self.tree
        n = len(tree.cliques)
        inner: list[np.ndarray] = [np.empty(0)] * n
        up: list[np.ndarray] = [np.empty(0)] * n
        log_z = 0.0
        # upward: leaves first
        for i in range(n - 1, -1, -1):
            top = float(theta[i].max())
            log_z += top
            t = np.exp(theta[i] - top)
            for j in self.children[i]:
                pm = self.parent_map[j]
                t *= up[j].reshape(self.in_parent[j]) if pm is None else pm.spread(up[j])
            inner[i] = t
            if tree.parent[i] >= 0:
                cm = self.child_map[i]
                m = t.copy() if cm is None else cm.sum(t)
                s = float(m.sum())
                if not s > 0:
                    raise FloatingPointError("a clique table underflowed to zero; the potentials are degenerate")
                log_z += math.log(s)
                up[i] = m / s
        root_total = float(inner[0].sum())
        log_z += math.log(root_total)
        beliefs: list[np.ndarray] = [np.empty(0)] * n
        beliefs[0] = inner[0] / root_total
        # downward: parents first; the message into i is the parent's belief on the separator over up[i]
        for i in range(1, n):
            p = tree.parent[i]
            pm, cm = self.parent_map[i], self.child_map[i]
            sep_belief = beliefs[p] if pm is None else pm.sum(beliefs[p])
            with np.errstate(divide="ignore", invalid="ignore"):
                msg = np.where(up[i] > 0, sep_belief / up[i], 0.0)
            b = inner[i] * (msg.reshape(self.in_child[i]) if cm is None else cm.spread(msg))
            s = float(b.sum())
            beliefs[i] = b / s if s > 0 else b
        return beliefs, log_z


class MarginalOracle:
    """Marginals of any attribute set from calibrated clique beliefs, with the work shared between queries.

    Inside one clique a marginal is a sum of that clique's table.  Otherwise the cliques on the
    tree paths joining a clique of each attribute form a subtree whose joint is the product of
    the root's marginal and every other clique's conditional given its link towards the root;
    each table is first summed onto the attributes that matter (the wanted ones it holds and its
    links in the subtree: the others occur nowhere else in the subtree), then the small tables are
    multiplied from the leaves inwards.  Conditionals and their sums are kept for later queries.
    """

    def __init__(self, tree: JunctionTree, beliefs: Sequence[np.ndarray]) -> None:
        self.tree = tree
        self.beliefs = list(beliefs)
        n = len(tree.cliques)
        self.adj: list[list[int]] = [[] for _ in range(n)]
        for i, p in enumerate(tree.parent):
            if p >= 0:
                self.adj[i].append(p)
                self.adj[p].append(i)
        self.sets = [frozenset(c) for c in tree.cliques]
        self._cache: dict[Any, np.ndarray] = {}

    def _sum(self, key: Any, values: np.ndarray, attrs: tuple[int, ...], keep: tuple[int, ...]) -> np.ndarray:
        hit = self._cache.get(key)
        if hit is None:
            hit = sum_to(values, attrs, keep)
            self._cache[key] = hit
        return hit

    def _conditional(self, c: int, link: tuple[int, ...]) -> np.ndarray:
        key = ("cond", c, link)
        hit = self._cache.get(key)
        if hit is None:
            cl, b = self.tree.cliques[c], self.beliefs[c]
            sep = sum_to(b, cl, link).reshape(expand_shape(self.tree.sizes, link, cl))
            with np.errstate(divide="ignore", invalid="ignore"):
                hit = np.where(sep > 0, b / sep, 0.0)
            self._cache[key] = hit
        return hit

    def _reduced(self, c: int, link: tuple[int, ...] | None, needed: tuple[int, ...]) -> np.ndarray:
        cl = self.tree.cliques[c]
        if link is None:
            return self._sum(("root", c, needed), self.beliefs[c], cl, needed)
        return self._sum(("red", c, link, needed), self._conditional(c, link), cl, needed)

    def marginal(self, attrs: Sequence[int]) -> np.ndarray:
        """The distribution of sorted ``attrs`` (axes in that order)."""
        tree = self.tree
        q = tuple(sorted(int(a) for a in attrs))
        want = frozenset(q)
        k = tree.clique_of(q)
        if k >= 0:
            return self._reduced(k, None, q)
        n = len(tree.cliques)
        root = max(range(n), key=lambda i: (len(want & self.sets[i]), -len(self.sets[i]), -i))
        # breadth-first from root: parents and depths on the tree oriented at root
        up = [-1] * n
        depth = [0] * n
        order = [root]
        seen = {root}
        for i in order:
            for j in self.adj[i]:
                if j not in seen:
                    seen.add(j)
                    up[j] = i
                    depth[j] = depth[i] + 1
                    order.append(j)
        nodes = {root}
        for a in q:
            if a in self.sets[root]:
                continue
            best = min((i for i in range(n) if a in self.sets[i]), key=lambda i: (depth[i], i))
            while best not in nodes:
                nodes.add(best)
                best = up[best]
        link = {c: tuple(sorted(self.sets[c] & self.sets[up[c]])) for c in nodes if c != root}
        kids: dict[int, list[int]] = {c: [] for c in nodes}
        for c in nodes:
            if c != root:
                kids[up[c]].append(c)
        sizes = tree.sizes
        msgs: dict[int, tuple[tuple[int, ...], np.ndarray]] = {}
        for c in sorted(nodes, key=lambda c: -depth[c]):
            own = set(want & self.sets[c])
            if c != root:
                own |= set(link[c])
            for x in kids[c]:
                own |= set(link[x])
            needed = tuple(sorted(own))
            table = self._reduced(c, None if c == root else link[c], needed)
            attrs = needed
            for x in kids[c]:
                xa, xf = msgs.pop(x)
                union = tuple(sorted(set(attrs) | set(xa)))
                table = table.reshape(expand_shape(sizes, attrs, union)) * xf.reshape(expand_shape(sizes, xa, union))
                attrs = union
            keep = tuple(a for a in attrs if a in want or (c != root and a in link[c]))
            msgs[c] = (keep, sum_to(table, attrs, keep))
        attrs, table = msgs[root]
        return sum_to(table, attrs, q)
