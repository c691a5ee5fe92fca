"""The mechanism protocol.

A :class:`Mechanism` is a configured object: its constructor takes every parameter (validated
once against the class's declared :class:`~cellsafe._params.Param` list), ``get_params()`` and
``with_params(**changes)`` read and vary them, and ``sample(table, m=1, rng=None)`` is its one
entry point.  As scipy.stats splits its public methods from the private ones a distribution
implements, the public methods here check and broadcast their arguments once and call private hooks
(``_sample``; ``_transition_pmf`` and ``_transition_sf`` of a cell-wise mechanism), which receive
checked arguments only.

A :class:`CellwiseMechanism` applies the same random map to every cell independently, so it can
state its **transition probabilities** P(k | j): the probability that a cell of original count j
(0 meaning a random zero) is released as k.  Those probabilities are all the a priori metrics,
the tuning searches and the transition plots need.  Its sampling is defined block by block
(:class:`Block`, the flat-index blocks of :mod:`cellsafe._random`): :meth:`CellwiseMechanism.sample_block`
is the per-block kernel, a pure function of the block's cells and its random stream, so any
engine that hands it whole blocks reproduces the same release.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Iterator, TypeVar

import numpy as np

from .._params import Configurable
from .._progress import progress_bar
from .._random import RNGLike, SecureGenerator, as_seed_sequence, block_bits, block_starts, stream
from .._validation import check_counts, check_integer
from ..exceptions import DataError, InvalidArgumentError
from ..table import INDEX_DTYPE, CountTable, check_table, sorted_unique

__all__ = ["Mechanism", "CellwiseMechanism", "Block", "table_blocks", "assemble_blocks", "Release"]


Release = TypeVar("Release")


class Mechanism(Configurable, ABC, Generic[Release]):
    """A random map from an original table to protected tables (or published results).

    :meth:`sample` checks its arguments once, here, and calls the private hook :meth:`_sample`;
    every release of one mechanism has one type (a :class:`~cellsafe.table.CountTable`, or a
    :class:`~cellsafe.published.PublishedTable` for the methods that publish cells).
    """

    #: True when the mechanism needs whole-number counts (fitted, fractional tables are refused).
    _integer_counts: ClassVar[bool] = False

    def _check_sample(self, table: CountTable, m: int, method: str = "sample", *, integer: bool = False) -> int:
        """Check the arguments of :meth:`sample` (or another drawing method); returns ``m`` as an int."""
        owner = f"{type(self).__name__}.{method}"
        check_table(table, owner)
        if (integer or self._integer_counts) and not table.is_integer:
            raise DataError(f"{owner} needs integer counts; this table holds fractional (fitted) counts.")
        return check_integer(m, "m", owner, low=1)

    def _check_sample_table(self, table: CountTable) -> Any:
        """Refuse tables this mechanism cannot release (override to add checks)."""

    def sample(self, table: CountTable, m: int = 1, rng: RNGLike = None, *, progress: bool = False) -> list[Release]:
        """Draw ``m`` protected releases (implicates) of ``table``.

        Parameters
        ----------
        table : CountTable
            The original table.
        m : int, default 1
            Number of releases.
        rng : None, int, SeedSequence or Generator
            Randomness; the same ``rng`` gives the same releases.
        progress : bool, default False
            Show a progress bar on standard error (where the mechanism has one).

        Returns
        -------
        list
            ``m`` releases, all of this mechanism's one release type.
        """
        m = self._check_sample(table, m)
        self._check_sample_table(table)
        return self._sample(table, m, rng, progress)

    @abstractmethod
    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[Release]:
        """The draws, arguments already checked."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_params()})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _params_equal(self.get_params(), other.get_params())  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable-looking configured objects are not hashable


def _params_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.array_equal(x, y)):
                return False
        elif x is not y and x != y:
            return False
    return True


@dataclass(frozen=True, eq=False)
class Block:
    """The cells of one block of flat indices ``[lo, hi)``: what a per-block kernel sees.

    Attributes
    ----------
    number : int
        The block's number b (``lo = b * 2**bits``).
    lo, hi : int
        Its flat-index range.
    index, counts : ndarray
        Sorted flat indices of the non-zero cells in the block, and their counts.
    structural_zeros : ndarray
        Sorted flat indices of the structural zeros in the block.
    """

    number: int
    lo: int
    hi: int
    index: np.ndarray
    counts: np.ndarray
    structural_zeros: np.ndarray

    @property
    def n_random_zeros(self) -> int:
        """Cells of the block that are neither non-zero nor structural zeros."""
        return (self.hi - self.lo) - self.index.shape[0] - self.structural_zeros.shape[0]


def table_blocks(table: CountTable, *, with_empty: bool = False) -> list[Block]:
    """The table's blocks in order (only those holding non-zero cells unless ``with_empty``)."""
    bits = block_bits(table.n_cells)
    starts = block_starts(table.index, table.n_cells)
    sz = table.structural_zeros
    zstarts = block_starts(sz, table.n_cells) if sz.size else None
    out = []
    for b in range(starts.size - 1):
        s0, s1 = int(starts[b]), int(starts[b + 1])
        if s0 == s1 and not with_empty:
            continue
        lo = b << bits
        hi = min((b + 1) << bits, table.n_cells)
        zs = sz[int(zstarts[b]) : int(zstarts[b + 1])] if zstarts is not None else sz
        out.append(Block(b, lo, hi, table.index[s0:s1], table.counts[s0:s1], zs))
    return out


class CellwiseMechanism(Mechanism[Release]):
    """A mechanism that maps each cell's count independently through P(k | j).

    The public methods check and broadcast their arguments once (original counts j: whole numbers
    >= 0, 0 meaning a random zero; released counts k: whole numbers, P = 0 below 0), then call the
    private hooks subclasses implement, which receive int64 arrays of one shape:
    :meth:`_transition_pmf` and :meth:`_transition_sf`, and for sampling :meth:`_draw` (released
    values of non-zero cells) and, when a random zero can be released as positive,
    :meth:`_draw_from_zero`.  The rest (:meth:`_transition_mean`, :meth:`_transition_var`, the
    support, the draws' inversion) has generic, vectorized defaults that subclasses may override
    with closed forms.
    """

    #: The first element of this class's random-stream keys (distinct per class).
    _purpose: ClassVar[int] = 0

    # ------------------------------------------------------------------ transition probabilities
    def _released_and_original(self, k: Any, j: Any, method: str) -> tuple[np.ndarray, np.ndarray]:
        owner = f"{type(self).__name__}.{method}"
        kk = check_counts(k, "the released counts k", owner, negative_ok=True)
        jj = check_counts(j, "the original counts j", owner)
        try:
            kk, jj = np.broadcast_arrays(kk, jj)
        except ValueError:
            raise InvalidArgumentError(f"{owner}: k of shape {kk.shape} and j of shape {jj.shape} do not broadcast.") from None
        return kk, jj

    def _original(self, j: Any, method: str) -> np.ndarray:
        return np.atleast_1d(check_counts(j, "the original counts j", f"{type(self).__name__}.{method}"))

    def transition_pmf(self, k: Any, j: Any) -> np.ndarray:
        """P(released = k | original = j), broadcasting ``k`` against ``j``.

        ``j`` are original counts (whole numbers >= 0; 0 is a random zero) and ``k`` released counts
        (whole numbers; the probability is 0 below 0).  Anything else (1.5, -3, NaN) is refused.
        """
        kk, jj = self._released_and_original(k, j, "transition_pmf")
        return self._pmf_checked(kk, jj)

    def transition_sf(self, k: Any, j: Any) -> np.ndarray:
        """P(released > k | original = j), computed directly (never as 1 - cdf); 1 for k < 0."""
        kk, jj = self._released_and_original(k, j, "transition_sf")
        return self._sf_checked(kk, jj)

    def _pmf_checked(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        if k.size and int(k.min()) < 0:
            return np.where(k < 0, 0.0, np.asarray(self._transition_pmf(np.maximum(k, 0), j), dtype=np.float64))
        return np.asarray(self._transition_pmf(k, j), dtype=np.float64)

    def _sf_checked(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        if k.size and int(k.min()) < 0:
            return np.where(k < 0, 1.0, np.asarray(self._transition_sf(np.maximum(k, 0), j), dtype=np.float64))
        return np.asarray(self._transition_sf(k, j), dtype=np.float64)

    @abstractmethod
    def _transition_pmf(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        """P(released = k | original = j) for int64 arrays of one shape, k >= 0 and j >= 0."""

    @abstractmethod
    def _transition_sf(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        """P(released > k | original = j) for int64 arrays of one shape, k >= 0 and j >= 0."""

    def transition_support(self, j: Any, tol: float = 1e-12) -> np.ndarray:
        """For each j, the smallest k with P(released > k | j) <= tol (an int64 array)."""
        return self._support(self._original(j, "transition_support"), tol)

    def _support(self, j: np.ndarray, tol: float) -> np.ndarray:
        hi = np.maximum(2 * j + 8, 16)
        for _ in range(64):
            bad = self._transition_sf(hi, j) > tol
            if not bad.any():
                break
            hi = np.where(bad, hi * 2, hi)
        lo = np.zeros_like(hi)
        # bisection on the monotone sf: lo has sf > tol (or is 0), hi has sf <= tol
        while np.any(hi - lo > 1):
            mid = (lo + hi) // 2
            ok = self._transition_sf(mid, j) <= tol
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        ok0 = self._transition_sf(np.zeros_like(hi), j) <= tol
        return np.where(ok0, 0, hi)

    def transition_matrix(self, j: Any, k_max: int | None = None, tol: float = 1e-12) -> np.ndarray:
        """Rows P(k | j) for k = 0..k_max (``k_max`` defaults to the largest support over ``j``)."""
        jj = self._original(j, "transition_matrix")
        if k_max is not None:
            k_max = check_integer(k_max, "k_max", f"{type(self).__name__}.transition_matrix", low=0)
        return self._matrix(jj, k_max, tol)

    def _matrix(self, j: np.ndarray, k_max: int | None, tol: float) -> np.ndarray:
        if k_max is None:
            k_max = int(self._support(j, tol).max())
        k = np.arange(k_max + 1, dtype=np.int64)
        kk, jj = np.broadcast_arrays(k[None, :], j[:, None])
        return np.asarray(self._transition_pmf(kk, jj), dtype=np.float64)

    def transition_mean(self, j: Any, tol: float = 1e-12) -> np.ndarray:
        """E[released | original = j]."""
        return np.asarray(self._transition_mean(self._original(j, "transition_mean"), tol), dtype=np.float64)

    def transition_var(self, j: Any, tol: float = 1e-12) -> np.ndarray:
        """Var[released | original = j]."""
        return np.asarray(self._transition_var(self._original(j, "transition_var"), tol), dtype=np.float64)

    def _transition_mean(self, j: np.ndarray, tol: float) -> np.ndarray:
        """E[released | j] by summation over the support (override with a closed form)."""
        p = self._matrix(j, None, tol)
        return p @ np.arange(p.shape[1])

    def _transition_var(self, j: np.ndarray, tol: float) -> np.ndarray:
        """Var[released | j] by summation over the support (override with a closed form)."""
        p = self._matrix(j, None, tol)
        k = np.arange(p.shape[1])
        mean = p @ k
        return p @ (k.astype(float) ** 2) - mean**2

    # ------------------------------------------------------------------ sampling
    def zero_release_probability(self) -> float:
        """P(released > 0 | random zero): how likely an empty cell is released as positive."""
        zero = np.zeros(1, dtype=np.int64)
        return float(np.asarray(self._transition_sf(zero, zero))[0])

    def _draw(self, counts: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        """Released values (int64) of cells with original ``counts`` (positive integers).

        The default inverts the transition rows P(k | j) of the distinct counts; subclasses with a
        direct sampler override it (and must, for fractional counts).
        """
        j = np.asarray(counts)
        if j.size == 0:
            return np.zeros(0, dtype=np.int64)
        if not np.all(j == np.floor(j)):
            raise InvalidArgumentError(f"{type(self).__name__} samples integer counts only; this table holds fractional ones.")
        j = j.astype(np.int64)
        order = np.argsort(j, kind="stable")
        sj = j[order]
        starts = np.flatnonzero(np.r_[True, sj[1:] != sj[:-1]])
        values = sj[starts]
        rows = self._matrix(values, None, 1e-12)
        cdf = np.cumsum(rows, axis=1)
        u = gen.random(j.size)
        out = np.empty(j.size, dtype=np.int64)
        bounds = np.r_[starts, j.size]
        for r in range(values.size):
            sel = order[bounds[r] : bounds[r + 1]]
            k = np.searchsorted(cdf[r], u[sel] * cdf[r, -1], side="right")
            out[sel] = np.minimum(k, cdf.shape[1] - 1)
        return out

    def _draw_from_zero(self, size: int, gen: np.random.Generator) -> np.ndarray:
        """``size`` released values of random zeros, conditioned on being >= 1.

        The default inverts P(released > k | 0) / P(released > 0 | 0) on a grid of k; subclasses
        with an exact conditional sampler override it.
        """
        p_pos = self.zero_release_probability()
        hi = 64
        zero = np.zeros(1, dtype=np.int64)
        while float(self._transition_sf(np.array([hi], dtype=np.int64), zero)[0]) > 1e-16 * p_pos and hi < 2**24:
            hi *= 2
        k = np.arange(1, hi + 1, dtype=np.int64)
        sf = np.asarray(self._transition_sf(k, np.zeros_like(k)), dtype=np.float64) / p_pos  # decreasing from < 1 to ~0
        u = gen.random(size)
        pos = np.searchsorted(-sf, -u, side="left")  # first k whose sf / p_pos <= u
        return (np.minimum(pos, k.size - 1) + 1).astype(np.int64)

    def sample_block(self, block: Block, root: np.random.SeedSequence, implicate: int) -> tuple[np.ndarray, np.ndarray]:
        """The per-block kernel: released non-zero cells (sorted flat indices, counts) of one block.

        Its stream is keyed by (purpose, implicate, block number) only, so the result does not
        depend on which process runs it or in which order.  Random zeros that become positive are
        the successes of one Bernoulli trial per random zero of the block, found from geometric
        gaps between them, with values from the release distribution of a zero conditioned on
        >= 1 (003 section 3; the zeros are never enumerated).
        """
        gen = stream(root, self._purpose, implicate, block.number)
        idx = block.index
        cnt = self._draw_cells(block, gen)
        p0 = self.zero_release_probability()
        n_zeros = block.n_random_zeros
        if p0 > 0 and n_zeros > 0:
            flat, pos = _released_zeros(gen, block, p0)
            if flat.size:
                values = np.asarray(self._draw_from_zero(flat.size, gen), dtype=np.int64)
                idx, cnt = _insert_sorted(idx, cnt, pos, flat, values)
        keep = cnt > 0
        return idx[keep], cnt[keep]

    def _draw_cells(self, block: Block, gen: np.random.Generator) -> np.ndarray:
        """Released values of the block's non-zero cells (int64, zeros included), checked for overflow."""
        if not block.index.size:
            return np.zeros(0, dtype=np.int64)
        cnt = np.asarray(self._draw(block.counts, gen), dtype=np.int64)
        if int(cnt.min()) < 0:
            # a float draw of inf or NaN casts to -2^63: never drop it silently
            raise DataError(
                f"{self!r} drew counts beyond the 64-bit range (the parameters make the noise too large); "
                "choose smaller parameter values."
            )
        return cnt

    def _sample_in_place(self, table: CountTable, blocks: list[Block], root: np.random.SeedSequence, implicate: int,
                         bar: Any) -> CountTable:
        """One implicate where no random zero can be released: each block's positive draws go straight into one
        pair of arrays of the table's size (what :meth:`sample_block` and :func:`assemble_blocks` give, without
        the per-block copies and their concatenation: a third of the cost at 3e7 cells)."""
        index = np.empty(table.nnz, dtype=INDEX_DTYPE)
        counts = np.empty(table.nnz, dtype=np.int64)
        at = 0
        for block in blocks:
            cnt = self._draw_cells(block, stream(root, self._purpose, implicate, block.number))
            keep = cnt > 0
            n = int(np.count_nonzero(keep))
            np.compress(keep, block.index, out=index[at : at + n])
            np.compress(keep, cnt, out=counts[at : at + n])
            at += n
            bar.update(1)
        if at < table.nnz:  # give back the room of the cells drawn as 0 (realloc, no copy of what stays)
            index.resize(at, refcheck=False)
            counts.resize(at, refcheck=False)
        return CountTable.from_sorted_cells(table, index, counts)

    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[Release]:
        """``m`` implicates drawn block by block: the same ``rng`` gives the same releases, however the
        blocks are processed."""
        return list(self._implicates(table, m, as_seed_sequence(rng), 0, progress))

    def implicates(
        self, table: CountTable, m: int = 1, rng: RNGLike = None, *, first: int = 0, progress: bool = False
    ) -> Iterator[Release]:
        """Draw implicates ``first, ..., first + m - 1`` one at a time, as an iterator.

        Each implicate has the type :meth:`sample` returns.  Implicate i has its own streams (keyed
        by the root seed, i and the block), so
        ``implicates(table, 5, rng=s)`` yields exactly the tables of ``sample(table, 5, rng=s)``
        while holding one of them at a time, and ``implicates(table, 1, rng=s, first=i)`` draws
        implicate i alone.  Writers of many implicates keep memory flat in ``m`` this way.

        Parameters
        ----------
        table : CountTable
        m : int, default 1
            Number of implicates.
        rng : None, int, SeedSequence or Generator
            The root of every implicate's streams (a Generator is consumed once, when the
            iterator starts).
        first : int, default 0
            The number of the first implicate drawn.
        progress : bool, default False
            Show a progress bar on standard error.

        Examples
        --------
        >>> import cellsafe
        >>> t = cellsafe.CountTable([cellsafe.Variable("a", ("x", "y"))], [0, 1], [3, 5])
        >>> synth = cellsafe.SaturatedSynthesizer(cellsafe.NBI(sigma=1.0))
        >>> third = next(synth.implicates(t, 1, rng=7, first=2))
        >>> third.equals(synth.sample(t, m=3, rng=7)[2])
        True
        """
        m = self._check_sample(table, m, "implicates")
        first = check_integer(first, "first", f"{type(self).__name__}.implicates", low=0)
        self._check_sample_table(table)
        root = as_seed_sequence(rng)
        return self._implicates(table, m, root, first, progress)

    def _implicates(
        self, table: CountTable, m: int, root: np.random.SeedSequence, first: int, progress: bool
    ) -> Iterator[Release]:
        """The implicates as released tables of the cells (override to release something else)."""
        from_zeros = self.zero_release_probability() > 0 and table.n_random_zeros > 0
        blocks = table_blocks(table, with_empty=from_zeros)
        with _progress(m * len(blocks), progress) as bar:
            for i in range(first, first + m):
                if not from_zeros and type(self).sample_block is CellwiseMechanism.sample_block:
                    yield self._sample_in_place(table, blocks, root, i, bar)  # type: ignore[misc]
                    continue
                parts = []
                for block in blocks:
                    parts.append(self.sample_block(block, root, i))
                    bar.update(1)
                yield assemble_blocks(table, parts)  # type: ignore[misc]  # Release is CountTable here


def assemble_blocks(table: CountTable, parts: list[tuple[np.ndarray, np.ndarray]]) -> CountTable:
    """The released table from its blocks' (index, counts), given in block order.

    Each part is sorted, positive and inside its own block, so their concatenation is already
    canonical: the table is built without sorting or re-validating (:meth:`CountTable.from_sorted_cells`).
    """
    if not parts:
        return CountTable.from_sorted_cells(table, np.zeros(0, dtype=INDEX_DTYPE), np.zeros(0, dtype=np.int64))
    idx = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else np.array(parts[0][0], dtype=INDEX_DTYPE)
    cnt = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else np.array(parts[0][1], dtype=np.int64)
    return CountTable.from_sorted_cells(table, idx.astype(INDEX_DTYPE, copy=False), cnt.astype(np.int64, copy=False))


# ---------------------------------------------------------------------- helpers of the kernel
#: Below this probability the positions of the released zeros come from a binomial count and
#: distinct uniform ranks, above it from geometric gaps (whose values would overflow int64 for
#: astronomically small probabilities).
_GAPS_MIN_P = 1e-12


def bernoulli_ranks(gen: np.random.Generator, n: int, p: float) -> np.ndarray:
    """Sorted ranks in [0, n) of the successes of n independent Bernoulli(p) trials.

    The gaps between successive successes are geometric, so the ranks come sorted and distinct
    from a cumulative sum, with work proportional to their number (no sort, n may be huge).
    """
    if isinstance(gen, SecureGenerator):  # exact geometric gaps from the cryptographic stream, whatever p
        return gen.bernoulli_ranks(n, p)
    if p >= 1.0:
        return np.arange(n, dtype=INDEX_DTYPE)
    if p < _GAPS_MIN_P or not isinstance(gen, np.random.Generator):
        # the same law drawn another way: how many successes, then which; the cryptographic generator
        # (rng="secure") draws binomials and integers but no geometric gaps
        return distinct_uniform(gen, n, int(gen.binomial(n, p)))
    parts, last = [], -1
    expected = n * p
    while True:
        left = expected - (last + 1) * p
        size = int(left + 5.0 * math.sqrt(left + 1.0) + 16)  # rarely too few: then another round
        ranks = last + np.cumsum(gen.geometric(p, size=size))
        cut = int(np.searchsorted(ranks, n))
        parts.append(ranks[:cut])
        if cut < size:
            break
        last = int(ranks[-1])
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _insert_sorted(
    idx: np.ndarray, cnt: np.ndarray, pos: np.ndarray, flat: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``flat``/``values`` inserted before positions ``pos`` of ``idx``/``cnt`` (both sides sorted, disjoint)."""
    slots = pos + np.arange(pos.size)
    old = np.ones(idx.size + pos.size, dtype=bool)
    old[slots] = False
    out_idx = np.empty(old.size, dtype=INDEX_DTYPE)
    out_idx[old] = idx
    out_idx[slots] = flat
    out_cnt = np.empty(old.size, dtype=np.int64)
    out_cnt[old] = cnt
    out_cnt[slots] = values
    return out_idx, out_cnt


def distinct_uniform(gen: np.random.Generator, n: int, size: int) -> np.ndarray:
    """``size`` distinct integers drawn uniformly from [0, n), sorted; n may be astronomically large."""
    if size > n:
        raise AssertionError("cannot draw more distinct ranks than there are random zeros")
    if size * 2 > n and n <= 10**8:
        return np.sort(gen.choice(n, size=size, replace=False))
    # Draw with replacement and top up the duplicates: symmetric in the labels, hence a uniform
    # subset.  Sorting, not np.unique (hash-based, slow on int64 with numpy 2.4).
    out = _sorted_distinct(gen.integers(0, n, size=size, dtype=np.int64))
    while out.size < size:
        more = gen.integers(0, n, size=size - out.size, dtype=np.int64)
        out = _sorted_distinct(np.concatenate([out, more]))
    return out


def _sorted_distinct(x: np.ndarray) -> np.ndarray:
    return sorted_unique(x)


def zero_rank_to_flat(ranks: np.ndarray, occupied: np.ndarray) -> np.ndarray:
    """Offset of the r-th random zero, given the sorted offsets that are not random zeros."""
    return ranks + _occupied_before(ranks, occupied)


def _occupied_before(ranks: np.ndarray, occupied: np.ndarray) -> np.ndarray:
    """For sorted random-zero ranks, how many occupied offsets precede each of those zeros."""
    free_before = occupied - np.arange(occupied.size, dtype=INDEX_DTYPE)  # random zeros before each occupied offset
    return np.searchsorted(free_before, ranks, side="right")


def _released_zeros(gen: np.random.Generator, block: Block, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices of the block's random zeros released as positive, and where they go in ``block.index``.

    One Bernoulli(p) trial per flat index of the block, the successes on non-zero cells and
    structural zeros discarded: what remains is one independent trial per random zero, found
    without listing the random zeros (the binary search gives the insertion points anyway).
    """
    if block.n_random_zeros * 4 < block.hi - block.lo:  # mostly occupied: trials on the random zeros only
        ranks = bernoulli_ranks(gen, block.n_random_zeros, p)
        return _place_random_zeros(ranks, block)
    flat = block.lo + bernoulli_ranks(gen, block.hi - block.lo, p)
    idx = block.index
    pos = np.searchsorted(idx, flat)
    free = idx[np.minimum(pos, idx.size - 1)] != flat if idx.size else np.ones(flat.size, dtype=bool)
    sz = block.structural_zeros
    if sz.size:
        free &= sz[np.minimum(np.searchsorted(sz, flat), sz.size - 1)] != flat
    return flat[free], pos[free]


def _place_random_zeros(ranks: np.ndarray, block: Block) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices of the block's random zeros of the given sorted ranks, and where they go in ``block.index``.

    The r-th random zero sits after the occupied cells (non-zero cells and structural zeros)
    that precede it; its insertion point among the non-zero cells discounts the structural zeros.
    """
    sz = block.structural_zeros
    if not sz.size:
        pos = _occupied_before(ranks, block.index - block.lo)
        return block.lo + ranks + pos, pos
    occupied = np.sort(np.concatenate([block.index, sz]), kind="stable") - block.lo  # two sorted runs: a merge
    flat = block.lo + ranks + _occupied_before(ranks, occupied)
    return flat, np.searchsorted(block.index, flat)


def _progress(total: int, enabled: bool) -> Any:
    return progress_bar(total, enabled, "sampling", unit="block")
