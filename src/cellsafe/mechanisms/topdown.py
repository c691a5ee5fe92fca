"""Differentially private counts over a hierarchy, consistent at every level: :class:`TopDownNoise`.

A geography (nation > regions > districts > areas, each level partitioning the one below) crossed
with other variables is published at every level.  Independent noise at every level gives counts
that do not add up; rounding a least-squares fit of them leaf by leaf makes the top levels far worse
(every leaf's rounding error adds up in the totals).  :class:`TopDownNoise` measures every cell of
every level once, with exact discrete Gaussian or geometric noise (the budget split over the
levels), then post-processes (no further privacy cost):

1. the generalized least-squares estimate of every cell under ``parent = sum of children``
   (:func:`cellsafe.fitting.tree.tree_least_squares`), whose variances are the a priori error of
   the release, known before anything is drawn;
2. non-negative integers that add up at every level, top-down
   (:func:`cellsafe.fitting.tree.tree_integers`): each parent's integer is shared among its
   children by a projection and a controlled rounding that keeps its total, so the integer step
   never changes a total above it.

Every cell of every level is listed, zeros included: which cells appear depends only on the
public categories and hierarchy.  The 2020 US Census TopDown algorithm (Abowd et al. 2022) is the
model; this is its simplest form (one hierarchy, the same crossing at every level, least squares
instead of its optimization with invariants).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .._frames import pd
from .._params import Param
from .._privacy import ADD_REMOVE, RELATIONS, REPLACE_ONE, PrivacyLoss, cdp_rho
from .._random import RNGLike, as_seed_sequence, stream
from ..distributions.integer_noise import DiscreteGaussian, DiscreteLaplace
from ..exceptions import DataError, InvalidArgumentError
from ..fitting.tree import tree_integers, tree_least_squares
from ..published import Publication, PublishedTable
from ..table import CountTable, Hierarchy, check_table, public_table, ravel, unravel
from ._base import Mechanism
from ._dp import DPMechanism

__all__ = ["TopDownNoise"]

class TopDownNoise(DPMechanism, Mechanism):
    """Noisy counts at every level of a hierarchy, made consistent, non-negative and integral.

    Parameters
    ----------
    variable : str
        The table's variable whose categories the hierarchy groups (the geography's finest level).
    hierarchy : Hierarchy
        Its levels, top first; each level must partition the categories and nest in the level
        above (a region's districts all in one region).  The grand total is the top of the tree.
    epsilon : float
        The whole release's privacy loss under ``relation``, > 0.
    delta : float, optional
        For the discrete Gaussian: the (epsilon, delta) statement the zCDP budget converts to
        (Canonne, Kamath and Steinke 2020); default 1e-9.  Geometric noise is pure: 0 or None.
    noise : {'discrete-gaussian', 'geometric'}, default 'discrete-gaussian'
        The noise added to every cell of every level.
    split : sequence of float, optional
        The share of the budget of each level, top first: the grand total, the hierarchy's levels,
        then the variable itself (default: equal shares).  Shares are rho for the discrete
        Gaussian and epsilon for geometric noise.  A share of 0 leaves a level unmeasured (its
        cells are estimated from the levels below); the last level needs a positive share.
    relation : {'replace-one', 'add-remove'}, default 'replace-one'
        The neighbour relation the budget is stated under.  A record is in one cell per level, so
        each level's counts change by 1 in one cell (add-remove) or in two cells (replace-one).

    Notes
    -----
    With level shares ``s_l`` (summing to 1): geometric noise of rate ``s_l epsilon / D`` at level
    ``l`` (``D`` = 1 or 2, the L1 sensitivity), whose losses add up to ``epsilon``; or the discrete
    Gaussian with ``sigma_l^2 = D2 / (2 s_l rho)`` (``D2`` = 1 or 2, the squared L2 sensitivity),
    ``rho`` the zCDP budget whose (epsilon, delta) conversion is the given pair, the levels' rho
    adding up to ``rho``.  The post-processing uses the noise variances only (public).

    Examples
    --------
    >>> import cellsafe
    >>> h = cellsafe.Hierarchy.from_groups({"N": ["a", "b"], "S": ["c"]}, level="region")
    >>> domain = cellsafe.Domain({"area": ["a", "b", "c"], "sex": ["F", "M"]})      # public categories
    >>> t = cellsafe.CountTable.from_dense([[5, 0], [3, 1], [9, 4]], domain.variables)
    >>> mech = TopDownNoise("area", h, epsilon=1.0)
    >>> [release] = mech.sample(t, rng=2, domain=domain)
    >>> release.publication.n_published          # 2 x (1 total + 2 regions + 3 areas)
    12
    >>> bool((release.released >= 0).all())
    True
    """

    _purpose = 0x5444  # "TD"
    _params = (
        Param("variable", kind="object", doc="the variable the hierarchy groups"),
        Param("hierarchy", kind="object", doc="the hierarchy's levels, top first, each a partition nested in the one above"),
        Param("epsilon", low=0.0, low_open=True, scan=(0.01, 10.0), log=True, doc="the release's privacy loss"),
        Param("delta", low=0.0, high=1.0, high_open=True, none_ok=True, default=None,
              doc="delta of the discrete Gaussian's (epsilon, delta) statement (default 1e-9)"),
        Param("noise", kind="choice", choices=("discrete-gaussian", "geometric"), default="discrete-gaussian",
              doc="noise added to every cell of every level"),
        Param("split", kind="object", none_ok=True, default=None, doc="budget share of each level, top first"),
        Param("relation", kind="choice", choices=RELATIONS, default=REPLACE_ONE, doc="neighbour relation the budget is stated under"),
    )

    def __init__(
        self,
        variable: str,
        hierarchy: Hierarchy,
        epsilon: float,
        delta: float | None = None,
        *,
        noise: str = "discrete-gaussian",
        split: Sequence[float] | None = None,
        relation: str = "replace-one",
    ) -> None:
        self.variable = variable
        self.hierarchy = hierarchy
        self.epsilon = epsilon
        self.delta = delta
        self.noise = noise
        self.split = split
        self.relation = relation
        self._check_params()
        owner = type(self).__name__
        if not isinstance(variable, str) or not variable:
            raise InvalidArgumentError(f"The 'variable' parameter of {owner} must be a variable's name. Got {variable!r}.")
        if not isinstance(hierarchy, Hierarchy):
            raise InvalidArgumentError(f"The 'hierarchy' parameter of {owner} must be a cellsafe.Hierarchy. Got {type(hierarchy).__name__}.")
        if not hierarchy.levels:
            raise InvalidArgumentError(f"the hierarchy of {variable!r} has no levels; publish it with GeometricNoise instead.")
        if noise == "geometric" and delta not in (None, 0, 0.0):
            raise InvalidArgumentError(f"geometric noise is pure (delta 0); got delta={delta}. Use noise='discrete-gaussian' for a delta.")
        if noise == "discrete-gaussian" and delta == 0:
            raise InvalidArgumentError("the discrete Gaussian needs delta > 0 for an (epsilon, delta) statement; default 1e-9.")
        self._parents, self._codes_of_leaf = _nested_levels(hierarchy, variable)
        self._shares = _shares(split, len(hierarchy.levels) + 2)

    # ------------------------------------------------------------------ the noise
    @property
    def level_names(self) -> list[str]:
        """The levels, top first: 'Total', the hierarchy's levels, the variable."""
        return ["Total", *self.hierarchy.levels, self.variable]

    @property
    def stated_delta(self) -> float | None:
        """The delta of the release's (epsilon, delta) statement: 1e-9 by default for the discrete
        Gaussian, None for geometric noise (pure epsilon)."""
        if self.noise == "geometric":
            return None
        return 1e-9 if self.delta is None else float(self.delta)

    @property
    def rho(self) -> float:
        """The zCDP budget of the discrete Gaussian (Canonne-Kamath-Steinke conversion of (epsilon, delta))."""
        if self.noise != "discrete-gaussian":
            raise InvalidArgumentError("geometric noise is pure epsilon-DP; it has no rho.")
        return float(cdp_rho(self.epsilon, float(self.stated_delta or 0.0)))

    def _noise(self) -> list[DiscreteGaussian | DiscreteLaplace | None]:
        """The noise distribution of each level (None where the level is not measured)."""
        out: list[DiscreteGaussian | DiscreteLaplace | None] = []
        l1 = 2 if self.relation == REPLACE_ONE else 1
        # each level's share a hair below its part, so that the sum of the levels' losses, added in
        # floating point, never exceeds the budget
        below = 1.0 - 2.0**-40
        for share in self._shares:
            if share == 0:
                out.append(None)
            elif self.noise == "geometric":
                out.append(DiscreteLaplace.for_epsilon(share * below * self.epsilon, l1))
            else:
                out.append(DiscreteGaussian(math.sqrt(l1 / (2.0 * share * below * self.rho))))
        return out

    def noise_variances(self) -> list[float]:
        """The noise variance of each level's cells, top first (inf where a level is not measured)."""
        return [math.inf if d is None else float(d.var()) for d in self._noise()]

    def _privacy_loss(self, relation: str, table: Any, delta: Any) -> PrivacyLoss:
        """The loss of one release under ``relation``, from the exact noise of every level.

        A record counts in one cell per level: its level's counts change by 1 in one cell
        (add-remove) or in two (replace-one), so the L1 sensitivity is 1 or 2 and the squared L2
        sensitivity 1 or 2 per level; the levels compose sequentially.
        """
        change = 1.0 if relation == ADD_REMOVE else 2.0
        measured: list[Any] = [d for d in self._noise() if d is not None]
        if self.noise == "geometric":
            return PrivacyLoss.pure(change * float(sum(d.rate for d in measured)), relation)
        return PrivacyLoss.zcdp(change * float(sum(d.rho for d in measured)), relation, delta)

    # ------------------------------------------------------------------ the tree
    def _tree(self, table: CountTable) -> tuple[list[np.ndarray], list[int], np.ndarray, int]:
        """Parent maps of the cells' tree, the levels' sizes, each inner cell's leaf-level node, n_other."""
        names = [v.name for v in table.variables]
        if self.variable not in names:
            raise DataError(f"the table has no variable {self.variable!r} (it has {names}).")
        g = names.index(self.variable)
        var = table.variables[g]
        leaves = [str(c) for c in var.categories]
        if sorted(leaves) != sorted(self.hierarchy.leaves):
            extra = sorted(set(leaves) - set(self.hierarchy.leaves)) or sorted(set(self.hierarchy.leaves) - set(leaves))
            raise DataError(
                f"the categories of {self.variable!r} and the hierarchy's leaves differ (e.g. {extra[0]!r}); the hierarchy "
                "must group exactly the variable's public categories."
            )
        leaf_pos = _leaf_positions(self.hierarchy, var.categories)
        other = [v.size for i, v in enumerate(table.variables) if i != g]
        n_other = int(np.prod(other, dtype=np.int64))
        sizes = [n_other] + [len(codes) * n_other for codes in self.hierarchy.levels.values()] + [var.size * n_other]
        o = np.arange(n_other, dtype=np.int64)
        up = [np.zeros(len(next(iter(self.hierarchy.levels.values()))), dtype=np.int64), *self._parents]
        leaf_up = self._codes_of_leaf[-1][leaf_pos]  # each category's aggregate at the lowest level
        parents = [(p[:, None] * n_other + o[None, :]).ravel() for p in up]
        parents.append((leaf_up[:, None] * n_other + o[None, :]).ravel())
        return parents, sizes, leaf_pos, n_other

    def expected_errors(self, table: CountTable) -> pd.DataFrame:
        """A priori error of each level: the root mean squared error of the consistent estimate.

        Known from the noise scales and the hierarchy alone, before anything is drawn (the integer
        step then moves each cell by less than 1 where no estimate is negative).
        """
        parents, sizes, _, _ = self._tree(table)
        var = self.noise_variances()
        est = tree_least_squares([np.zeros(n) for n in sizes], var, parents)
        return pd.DataFrame(
            {
                "level": self.level_names,
                "cells": sizes,
                "noise_sd": [math.sqrt(v) for v in var],
                "expected_rmse": [float(np.sqrt(v.mean())) for v in est.variances],
            }
        )

    # ------------------------------------------------------------------ sampling
    def tree(self, table: CountTable) -> tuple[list[np.ndarray], list[int]]:
        """The cells of every level as a tree: parent maps and level sizes, top first.

        A cell of a level is (aggregate, other variables' cell) at position
        ``aggregate * n_other + other``, the other variables' cells in row-major order.
        """
        parents, sizes, _, _ = self._tree(table)
        return parents, sizes

    def level_counts(self, table: CountTable) -> list[np.ndarray]:
        """The true count of every cell of every level, in :meth:`tree` order (confidential)."""
        check_table(table, f"{type(self).__name__}.level_counts")
        _, sizes, leaf_pos, n_other = self._tree(table)
        return _level_counts(table, self, n_other, sizes, leaf_pos)

    def measure(self, table: CountTable, rng: RNGLike = None, *, implicate: int = 0, domain: Any = None) -> list[np.ndarray]:
        """The noisy counts of every level before post-processing (the DP measurements).

        Independent per-level counts, neither consistent nor non-negative; :meth:`sample` makes
        them so.  ``implicate`` selects the stream, as in :meth:`sample`.
        """
        self._check_sample(table, 1, "measure", integer=True)
        table = public_table(table, domain, f"{type(self).__name__}.measure")
        return self._measure(self.level_counts(table), as_seed_sequence(rng), implicate)

    def _measure(self, truth: list[np.ndarray], root: Any, implicate: int) -> list[np.ndarray]:
        out = []
        for level, (t, d) in enumerate(zip(truth, self._noise())):
            noise = 0 if d is None else d.sample(t.shape[0], rng=stream(root, self._purpose, implicate, level))
            out.append((t + noise).astype(np.float64))
        return out

    _integer_counts = True

    def sample(self, table: CountTable, m: int = 1, rng: Any = None, *, domain: Any = None, **kwargs: Any) -> list[Any]:
        """``m`` releases of ``table`` on its public domain (``domain=``, or the table's own public
        variables): a table whose categories were read from the records is refused.  ``progress=``
        as every mechanism."""
        table = public_table(table, domain, type(self).__name__)
        return Mechanism.sample(self, table, m, rng, progress=bool(kwargs.pop("progress", False)), **kwargs)

    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[PublishedTable]:
        """``m`` independent consistent releases of every level (each costs the whole budget)."""
        parents, sizes, leaf_pos, n_other = self._tree(table)
        pub = self._publication(table)
        truth = _level_counts(table, self, n_other, sizes, leaf_pos)
        node_of_column = _columns_to_nodes(pub, table, self, n_other, sizes, leaf_pos)
        inner_node = _cell_nodes(pub.inner_index, table, self, n_other, leaf_pos)[-1]
        var = self.noise_variances()
        root = as_seed_sequence(rng)
        original = np.concatenate(truth)[node_of_column]
        out = []
        for i in range(m):
            est = tree_least_squares(self._measure(truth, root, i), var, parents)
            ints = tree_integers(est.values, parents, est.variances)
            out.append(
                PublishedTable(
                    publication=pub,
                    original=original,
                    released=np.concatenate(ints)[node_of_column].astype(np.float64),
                    method="topdown",
                    mechanism=repr(self),
                    inner_original=pub.inner_counts(table),
                    inner_released=ints[-1][inner_node],
                )
            )
        return out

    def release_levels(self, release: PublishedTable, table: CountTable) -> list[np.ndarray]:
        """A release's values of every level, in :meth:`tree` order."""
        _, sizes, leaf_pos, n_other = self._tree(table)
        node = _columns_to_nodes(release.publication, table, self, n_other, sizes, leaf_pos)
        flat = np.empty(sum(sizes))
        flat[node] = release.released
        bounds = np.cumsum([0, *sizes])
        return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

    def _publication(self, table: CountTable) -> Publication:
        others = tuple(v.name for v in table.variables if v.name != self.variable)
        crossings = [others] + [(level, *others) for level in self.hierarchy.levels] + [(self.variable, *others)]
        return Publication.from_formula(table, crossings, zeros=True, hierarchies={self.variable: self.hierarchy})

    def level_errors(self, release: PublishedTable) -> pd.DataFrame:
        """Observed errors of a release by level (mean absolute and root mean squared): the
        custodian's check against the confidential counts, never for publication."""
        pub = release.publication
        level_of_crossing = np.array([_crossing_level(c, self) for c in pub.crossings])
        level = level_of_crossing[pub.crossing]
        diff = release.released - release.original
        rows = []
        for k, name in enumerate(self.level_names):
            d = diff[level == k]
            rows.append({"level": name, "cells": int(d.size), "mae": float(np.abs(d).mean()), "rmse": float(np.sqrt((d**2).mean()))})
        return pd.DataFrame(rows)


def _shares(split: Sequence[float] | None, n_levels: int) -> list[float]:
    if split is None:
        return [1.0 / n_levels] * n_levels
    try:
        s = [float(x) for x in split]
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"split must be a list of {n_levels} non-negative numbers (top first). Got {split!r}.") from None
    if len(s) != n_levels:
        raise InvalidArgumentError(
            f"split must give a share to each of the {n_levels} levels (the total, the hierarchy's levels and the variable), "
            f"top first. Got {len(s)}."
        )
    if any(not math.isfinite(x) or x < 0 for x in s) or sum(s) <= 0:
        raise InvalidArgumentError(f"split shares must be finite, non-negative and not all 0. Got {split!r}.")
    if s[-1] == 0:
        raise InvalidArgumentError("the last level (the variable itself) must have a positive share: the estimate shares it out.")
    total = sum(s)
    return [x / total for x in s]


def _nested_levels(h: Hierarchy, variable: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Parent maps between consecutive levels, and each leaf's aggregate at every level.

    Refuses a level that does not partition the leaves or does not nest in the level above.
    """
    codes_of_leaf = []
    for level, codes in h.levels.items():
        of = np.full(len(h.leaves), -1, dtype=np.int64)
        for k, code in enumerate(codes):
            pos = np.asarray(h.groups[code], dtype=np.int64)
            if (of[pos] >= 0).any():
                leaf = h.leaves[int(pos[of[pos] >= 0][0])]
                raise DataError(f"category {leaf!r} of {variable!r} is in two aggregates of level {level!r}; each level must partition the categories.")
            of[pos] = k
        if (of < 0).any():
            leaf = h.leaves[int(np.flatnonzero(of < 0)[0])]
            raise DataError(f"category {leaf!r} of {variable!r} is in no aggregate of level {level!r}; each level must cover every category.")
        codes_of_leaf.append(of)
    parents = []
    names = list(h.levels)
    for k in range(1, len(codes_of_leaf)):
        up, down = codes_of_leaf[k - 1], codes_of_leaf[k]
        p = np.full(len(h.levels[names[k]]), -1, dtype=np.int64)
        p[down] = up
        if (p[down] != up).any():
            bad = h.levels[names[k]][int(down[p[down] != up][0])]
            raise DataError(f"aggregate {bad!r} of level {names[k]!r} spans several aggregates of level {names[k - 1]!r}; levels must nest.")
        parents.append(p)
    return parents, codes_of_leaf


def _level_counts(table: CountTable, mech: TopDownNoise, n_other: int, sizes: list[int], leaf_pos: np.ndarray) -> list[np.ndarray]:
    """The true count of every node, level by level."""
    leaf_node = _cell_nodes(table.index, table, mech, n_other, leaf_pos)
    counts = np.asarray(table.counts, dtype=np.int64)
    out = []
    for level, n in enumerate(sizes):
        out.append(np.bincount(leaf_node[level], weights=counts, minlength=n).astype(np.int64))
    return out


def _cell_nodes(index: np.ndarray, table: CountTable, mech: TopDownNoise, n_other: int, leaf_pos: np.ndarray) -> list[np.ndarray]:
    """The node of each given inner cell at every level, top first."""
    names = [v.name for v in table.variables]
    g = names.index(mech.variable)
    codes = unravel(np.asarray(index), table.shape)
    others = [i for i in range(len(names)) if i != g]
    o = ravel(codes[:, others], [table.shape[i] for i in others]) if others else np.zeros(codes.shape[0], dtype=np.int64)
    leaf = leaf_pos[codes[:, g]]
    nodes = [o.astype(np.int64)]
    for of in mech._codes_of_leaf:
        nodes.append(of[leaf] * n_other + o)
    nodes.append(codes[:, g].astype(np.int64) * n_other + o)
    return nodes


def _leaf_positions(h: Hierarchy, categories: Sequence[Any]) -> np.ndarray:
    """The position among the hierarchy's leaves of each category (in the variable's order)."""
    pos = {leaf: i for i, leaf in enumerate(h.leaves)}
    return np.array([pos[str(c)] for c in categories], dtype=np.int64)


def _crossing_level(crossing: tuple[str, ...], mech: TopDownNoise) -> int:
    names = mech.level_names
    hits = [names.index(t) for t in crossing if t in names[1:]]
    return hits[0] if hits else 0


def _columns_to_nodes(
    pub: Publication, table: CountTable, mech: TopDownNoise, n_other: int, sizes: list[int], leaf_pos: np.ndarray
) -> np.ndarray:
    """For each published cell, its node's position in the levels' concatenation."""
    Xc = pub.X.tocsc()
    first = Xc.indices[Xc.indptr[:-1]]
    nodes = _cell_nodes(pub.inner_index[first], table, mech, n_other, leaf_pos)
    level_of_crossing = np.array([_crossing_level(c, mech) for c in pub.crossings])
    level = level_of_crossing[pub.crossing]
    offset = np.cumsum([0] + sizes)[:-1]
    stacked = np.stack(nodes)  # levels x published cells
    out = offset[level] + stacked[level, np.arange(level.size)]
    if np.unique(out).size != out.size or out.size != sum(sizes):
        raise AssertionError("published cells do not map one to one onto the tree's nodes")
    return out


