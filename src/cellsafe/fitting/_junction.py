"""Junction trees of graphical models over discrete attributes.

A model whose log-density is a sum of terms on cliques of attributes (the marginals that were
measured) is computed on a junction tree: the graph joining every two attributes that share a
clique is triangulated by eliminating one attribute at a time, the cheapest first (the one whose
elimination clique has the fewest cells; the lowest-numbered on ties), and the maximal cliques
of the chordal graph are joined by a maximum spanning tree on the sizes of their intersections
(Jensen and Jensen 1994).  Attributes in different connected components are joined through empty
separators, so a model is always one tree.

Attributes are integers ``0 .. d-1`` and sets of them are bit masks; cliques are sorted tuples.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = ["JunctionTree", "junction_tree", "model_size", "maximal_cliques"]


def _mask(attrs: Iterable[int]) -> int:
    m = 0
    for a in attrs:
        m |= 1 << int(a)
    return m


def _attrs(mask: int) -> tuple[int, ...]:
    out = []
    a = 0
    while mask:
        if mask & 1:
            out.append(a)
        mask >>= 1
        a += 1
    return tuple(out)


@dataclass(frozen=True)
class JunctionTree:
    """Maximal cliques joined in a tree, each with its parent and separator.

    Attributes
    ----------
    cliques : tuple of tuple of int
        The maximal cliques (sorted attribute indices), root first, every parent before its
        children (breadth-first order).
    parent : tuple of int
        Index of each clique's parent in ``cliques`` (-1 for the root).
    separators : tuple of tuple of int
        The attributes each clique shares with its parent (empty for the root, and between
        connected components).
    sizes : tuple of int
        The number of categories of every attribute of the model.
    """

    cliques: tuple[tuple[int, ...], ...]
    parent: tuple[int, ...]
    separators: tuple[tuple[int, ...], ...]
    sizes: tuple[int, ...]

    @property
    def n_cells(self) -> int:
        """Cells of all clique tables together (the model's size in float64 values)."""
        return sum(math.prod(self.sizes[a] for a in c) for c in self.cliques)

    def children(self) -> list[list[int]]:
        kids: list[list[int]] = [[] for _ in self.cliques]
        for i, p in enumerate(self.parent):
            if p >= 0:
                kids[p].append(i)
        return kids

    def clique_of(self, attrs: Sequence[int]) -> int:
        """The index of the smallest clique holding every attribute of ``attrs``, or -1."""
        want = _mask(attrs)
        best, best_size = -1, math.inf
        for i, c in enumerate(self.cliques):
            if want & ~_mask(c) == 0:
                size = math.prod(self.sizes[a] for a in c)
                if size < best_size:
                    best, best_size = i, size
        return best


def _eliminate(sizes: Sequence[int], adjacency: list[int]) -> list[int]:
    """The cliques (as masks) created by eliminating attributes greedily, the smallest elimination clique first."""
    adj = list(adjacency)
    d = len(sizes)
    remaining = (1 << d) - 1
    log_size = [math.log(max(s, 1)) for s in sizes]
    made: list[int] = []
    for _ in range(d):
        best_cost, best_v = math.inf, -1
        m = remaining
        while m:
            low = m & -m
            v = low.bit_length() - 1
            m ^= low
            nb = adj[v] & remaining
            cost = log_size[v]
            while nb:
                b = nb & -nb
                cost += log_size[b.bit_length() - 1]
                nb ^= b
            if cost < best_cost - 1e-9:
                best_cost, best_v = cost, v
        v = best_v
        nb = adj[v] & remaining
        rest = nb
        while rest:
            b = rest & -rest
            a = b.bit_length() - 1
            adj[a] |= nb & ~b
            rest ^= b
        made.append(nb | (1 << v))
        remaining &= ~(1 << v)
    return made


def _maximal(masks: Iterable[int]) -> list[int]:
    """Masks not contained in another (each kept once), largest first."""
    ordered = sorted(set(masks), key=lambda m: (-bin(m).count("1"), m))
    out: list[int] = []
    for m in ordered:
        if not any(m & ~o == 0 for o in out):
            out.append(m)
    return out


def maximal_cliques(d: int, cliques: Iterable[Sequence[int]], sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """The maximal cliques of the triangulated graph of ``cliques`` over ``d`` attributes."""
    adj = [0] * d
    for c in cliques:
        m = _mask(c)
        for a in c:
            adj[int(a)] |= m & ~(1 << int(a))
    return list(_triangulated(tuple(int(s) for s in sizes), tuple(adj)))


@functools.lru_cache(maxsize=65536)
def _triangulated(sizes: tuple[int, ...], adjacency: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    # the same graph (as adjacency masks) is triangulated once: AIM asks for many graphs that coincide
    return tuple(_attrs(m) for m in _maximal(_eliminate(sizes, list(adjacency))))


def junction_tree(sizes: Sequence[int], cliques: Iterable[Sequence[int]]) -> JunctionTree:
    """The junction tree of a model with terms on ``cliques`` (every attribute is in the model).

    Parameters
    ----------
    sizes : sequence of int
        Categories of each attribute ``0 .. d-1``.
    cliques : iterable of sequences of int
        The attribute sets the model has terms on (measured marginals).

    Examples
    --------
    >>> jt = junction_tree([2, 3, 4, 5], [(0, 1), (1, 2), (2, 3)])
    >>> jt.cliques, jt.parent
    (((2, 3), (1, 2), (0, 1)), (-1, 0, 1))
    >>> jt.n_cells
    38
    """
    sizes = tuple(int(s) for s in sizes)
    d = len(sizes)
    masks = [_mask(c) for c in maximal_cliques(d, cliques, sizes)]
    k = len(masks)
    # Kruskal on the clique graph: largest intersections first (zero-weight edges join components)
    edges = sorted(
        ((bin(masks[i] & masks[j]).count("1"), i, j) for i in range(k) for j in range(i + 1, k)),
        key=lambda e: (-e[0], e[1], e[2]),
    )
    root_of = list(range(k))

    def find(i: int) -> int:
        while root_of[i] != i:
            root_of[i] = root_of[root_of[i]]
            i = root_of[i]
        return i

    nbrs: list[list[int]] = [[] for _ in range(k)]
    for _, i, j in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            root_of[ri] = rj
            nbrs[i].append(j)
            nbrs[j].append(i)
    # root: the largest clique; breadth-first order
    sizes_of = [math.prod(sizes[a] for a in _attrs(m)) for m in masks]
    root = max(range(k), key=lambda i: (sizes_of[i], -i))
    order, parent_of = [root], {root: -1}
    for i in order:
        for j in sorted(nbrs[i]):
            if j not in parent_of:
                parent_of[j] = i
                order.append(j)
    pos = {c: n for n, c in enumerate(order)}
    cl = tuple(_attrs(masks[c]) for c in order)
    parent = tuple(-1 if parent_of[c] < 0 else pos[parent_of[c]] for c in order)
    seps = tuple(() if p < 0 else _attrs(masks[order[i]] & masks[order[p]]) for i, p in enumerate(parent))
    return JunctionTree(cl, parent, seps, sizes)


def model_size(sizes: Sequence[int], cliques: Iterable[Sequence[int]]) -> int:
    """Cells of all clique tables of the junction tree of ``cliques`` (without building the tree)."""
    d = len(sizes)
    return sum(math.prod(sizes[a] for a in c) for c in maximal_cliques(d, cliques, sizes))
