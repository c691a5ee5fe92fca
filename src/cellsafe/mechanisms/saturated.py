"""Saturated count-model synthesis: the (sigma, alpha) mechanism of 003 and its GAF variant of 000.

Each non-structural cell i is replaced by an independent draw f_i^syn ~ D(mu_i), where mu_i is the
original count f_i for non-zero cells and the pseudocount alpha for random zeros.  000's alternative
for random zeros, ``zeros_to_ones = p``, turns each random zero into a 1 with probability p.
Structural zeros never change.

Work is proportional to the non-zero cells: the random zeros that become non-zero are drawn as a
binomial count, uniformly placed among the random zeros, with values from D(alpha) truncated to
k >= 1 (methods.md section 3).  Random streams are keyed by (purpose, implicate, block of 2**16
non-zero cells in flat-index order), so the output does not depend on how the work is chunked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._random import RNGLike, as_seed_sequence, stream
from .._validation import check_integer, check_probability, check_real
from ..distributions import CountDistribution
from ..exceptions import InvalidArgumentError
from ..table import INDEX_DTYPE, CountTable
from ._base import CellwiseMechanism

__all__ = ["SaturatedSynthesizer"]

#: Non-zero cells per random stream.  Part of the output's definition: changing it changes
#: which numbers a seed produces, so it is a constant, not an option.
BLOCK = 2**16

# Stream purposes (first element of a stream key).
_NONZERO, _N_NEW, _POSITIONS, _VALUES = 0, 1, 2, 3


class SaturatedSynthesizer(CellwiseMechanism):
    """Synthesize a table cell by cell from a saturated count model.

    Parameters
    ----------
    distribution : CountDistribution
        The noise family: ``Poisson()``, ``NBI(sigma)``, ``PIG(sigma)`` or ``GAF(sigma, nu)``.
    alpha : float, default 0
        Pseudocount: the mean used for random zeros.  With ``alpha = 0`` random zeros stay zero.
    zeros_to_ones : float in [0, 1], default 0
        000's alternative to ``alpha``: each random zero becomes 1 with this probability.  Use one
        of ``alpha`` and ``zeros_to_ones``, not both.

    Notes
    -----
    003 section 3 (mechanism, pseudocount, structural zeros) and 000 section 3 (GAF noise, and
    the Bernoulli zeros-to-ones alternative for nu < 0, where a small alpha gives an exploding
    variance sigma^2 alpha^nu).  E[n_syn] = n + alpha x (number of random zeros): margins are
    unbiased only for alpha = 0.

    A table with fractional counts (for example a fitted log-linear table) is accepted: its counts
    are used as the cells' means mu.

    Examples
    --------
    >>> import cellsafe
    >>> t = cellsafe.datasets.esc_like()
    >>> synth = SaturatedSynthesizer(cellsafe.NBI(sigma=1.0))
    >>> [s] = synth.sample(t, rng=1)
    >>> s.n_cells == t.n_cells
    True
    """

    def __init__(self, distribution: CountDistribution, alpha: float = 0.0, zeros_to_ones: float = 0.0) -> None:
        if not isinstance(distribution, CountDistribution):
            raise InvalidArgumentError(
                "The 'distribution' parameter of SaturatedSynthesizer must be a cellsafe count distribution "
                f"(Poisson(), NBI(sigma), PIG(sigma) or GAF(sigma, nu)). Got {distribution!r} instead."
            )
        a = check_real(alpha, "alpha", "SaturatedSynthesizer", low=0.0)
        p = check_probability(zeros_to_ones, "zeros_to_ones", "SaturatedSynthesizer")
        if a > 0 and p > 0:
            raise InvalidArgumentError(
                "alpha and zeros_to_ones are alternative treatments of random zeros; set one of them to 0. "
                f"Got alpha={alpha!r} and zeros_to_ones={zeros_to_ones!r}."
            )
        self.distribution = distribution
        self.alpha = alpha
        self.zeros_to_ones = zeros_to_ones

    def __repr__(self) -> str:
        extra = ""
        if self.alpha:
            extra += f", alpha={self.alpha!r}"
        if self.zeros_to_ones:
            extra += f", zeros_to_ones={self.zeros_to_ones!r}"
        return f"SaturatedSynthesizer({self.distribution!r}{extra})"

    # ------------------------------------------------------------------ sampling
    def sample(
        self,
        table: CountTable,
        m: int = 1,
        rng: RNGLike = None,
        *,
        progress: bool = False,
        blocks_per_chunk: int = 16,
    ) -> list[CountTable]:
        """Draw ``m`` synthetic tables (implicates).

        Parameters
        ----------
        table : CountTable
            The original table (integer counts), or a table of cell means (fractional counts).
        m : int, default 1
            Number of implicates.
        rng : None, int, SeedSequence or Generator
            Randomness; the same ``rng`` gives the same tables.
        progress : bool, default False
            Show a progress bar on standard error.
        blocks_per_chunk : int, default 16
            How many blocks of 2**16 non-zero cells are drawn per step (memory versus overhead);
            it does not change the output.

        Returns
        -------
        list of CountTable
            On the original's variables and structural zeros; non-zero cells only.
        """
        if not isinstance(table, CountTable):
            raise InvalidArgumentError(f"table must be a cellsafe.CountTable. Got {type(table).__name__} instead.")
        m = check_integer(m, "m", "SaturatedSynthesizer.sample", low=1)
        blocks_per_chunk = check_integer(blocks_per_chunk, "blocks_per_chunk", "SaturatedSynthesizer.sample", low=1)
        root = as_seed_sequence(rng)
        occupied = None  # flat indices that are not random zeros, computed once if needed
        n_blocks = -(-table.nnz // BLOCK)
        bar = _progress(m * (n_blocks + 1), progress)
        out = []
        try:
            for i in range(m):
                idx, cnt = self._draw_nonzero(table, root, i, blocks_per_chunk, bar)
                if self._zeros_can_change() and table.n_random_zeros > 0:
                    if occupied is None:
                        occupied = np.union1d(table.index, table.structural_zeros)
                    new_idx, new_cnt = self._draw_zeros(table, occupied, root, i)
                    idx = np.concatenate([idx, new_idx])
                    cnt = np.concatenate([cnt, new_cnt])
                    order = np.argsort(idx, kind="stable")
                    idx, cnt = idx[order], cnt[order]
                bar.update(1)
                out.append(table.with_counts(idx, cnt))
        finally:
            bar.close()
        return out

    def _zeros_can_change(self) -> bool:
        return self.alpha > 0 or self.zeros_to_ones > 0

    def _draw_nonzero(
        self, table: CountTable, root: np.random.SeedSequence, implicate: int, blocks_per_chunk: int, bar: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        mu = table.counts.astype(np.float64)
        draws = np.empty(table.nnz, dtype=np.int64)
        n_blocks = -(-table.nnz // BLOCK)
        for start_block in range(0, n_blocks, blocks_per_chunk):
            for b in range(start_block, min(start_block + blocks_per_chunk, n_blocks)):
                lo, hi = b * BLOCK, min((b + 1) * BLOCK, table.nnz)
                gen = stream(root, _NONZERO, implicate, b)
                draws[lo:hi] = self.distribution.sample(mu[lo:hi], rng=gen)
                bar.update(1)
        keep = draws > 0
        return table.index[keep], draws[keep]

    def _draw_zeros(
        self, table: CountTable, occupied: np.ndarray, root: np.random.SeedSequence, implicate: int
    ) -> tuple[np.ndarray, np.ndarray]:
        n_zeros = table.n_random_zeros
        if self.zeros_to_ones > 0:
            p_change = float(self.zeros_to_ones)
        else:
            p_change = float(self.distribution.sf(0, float(self.alpha)))
        n_new = int(stream(root, _N_NEW, implicate).binomial(n_zeros, p_change)) if p_change > 0 else 0
        if n_new == 0:
            return np.zeros(0, dtype=INDEX_DTYPE), np.zeros(0, dtype=np.int64)
        ranks = _distinct_uniform(stream(root, _POSITIONS, implicate), n_zeros, n_new)
        flat = _zero_rank_to_flat(ranks, occupied)
        if self.zeros_to_ones > 0:
            values = np.ones(n_new, dtype=np.int64)
        else:
            values = _positive_draws(self.distribution, float(self.alpha), n_new, stream(root, _VALUES, implicate))
        return flat, values

    # ------------------------------------------------------------------ transition probabilities
    def _mu(self, j: np.ndarray) -> np.ndarray:
        # random zeros use alpha; when alpha = 0 any positive placeholder works (overwritten below)
        return np.where(j > 0, j, self.alpha if self.alpha > 0 else 1.0).astype(np.float64)

    def transition_pmf(self, k: Any, j: Any) -> np.ndarray:
        """P(released = k | original = j); j = 0 is a random zero (mean alpha, or zeros_to_ones)."""
        k, j = np.broadcast_arrays(np.asarray(k), np.asarray(j))
        out = np.asarray(self.distribution.pmf(k, self._mu(j)), dtype=np.float64)
        zero = j == 0
        if np.any(zero) and not self.alpha > 0:
            p = float(self.zeros_to_ones)
            out = np.where(zero, np.where(k == 0, 1.0 - p, np.where(k == 1, p, 0.0)), out)
        return out

    def transition_sf(self, k: Any, j: Any) -> np.ndarray:
        """P(released > k | original = j)."""
        k, j = np.broadcast_arrays(np.asarray(k), np.asarray(j))
        out = np.asarray(self.distribution.sf(k, self._mu(j)), dtype=np.float64)
        zero = j == 0
        if np.any(zero) and not self.alpha > 0:
            p = float(self.zeros_to_ones)
            out = np.where(zero, np.where(k < 0, 1.0, np.where(k < 1, p, 0.0)), out)
        return out

    def transition_mean(self, j: Any, tol: float = 1e-12) -> np.ndarray:
        """E[released | original = j]: the distribution's mean at mu = j (alpha for j = 0)."""
        j = np.atleast_1d(np.asarray(j))
        out = np.asarray(self.distribution.mean(self._mu(j)), dtype=np.float64)
        if not self.alpha > 0:
            out = np.where(j == 0, float(self.zeros_to_ones), out)
        return out

    def transition_var(self, j: Any, tol: float = 1e-12) -> np.ndarray:
        """Var[released | original = j]."""
        j = np.atleast_1d(np.asarray(j))
        out = np.asarray(self.distribution.var(self._mu(j)), dtype=np.float64)
        if not self.alpha > 0:
            p = float(self.zeros_to_ones)
            out = np.where(j == 0, p * (1.0 - p), out)
        return out


# ---------------------------------------------------------------------- helpers
def _distinct_uniform(gen: np.random.Generator, n: int, size: int) -> np.ndarray:
    """``size`` distinct integers drawn uniformly from [0, n), sorted; n may be astronomically large."""
    if size > n:
        raise AssertionError("cannot draw more distinct ranks than there are random zeros")
    if size * 2 > n and n <= 10**8:
        return np.sort(gen.choice(n, size=size, replace=False))
    # Draw with replacement and top up the duplicates: symmetric in the labels, hence a uniform subset.
    out = np.unique(gen.integers(0, n, size=size, dtype=np.int64))
    while out.size < size:
        out = np.unique(np.concatenate([out, gen.integers(0, n, size=size - out.size, dtype=np.int64)]))
    return out


def _zero_rank_to_flat(ranks: np.ndarray, occupied: np.ndarray) -> np.ndarray:
    """Flat index of the r-th random zero, given the sorted flat indices that are not random zeros."""
    free_before = occupied - np.arange(occupied.size, dtype=INDEX_DTYPE)
    return ranks + np.searchsorted(free_before, ranks, side="right")


def _positive_draws(dist: CountDistribution, mu: float, size: int, gen: np.random.Generator) -> np.ndarray:
    """``size`` draws from D(mu) conditioned on being >= 1."""
    p_pos = float(dist.sf(0, mu))
    if p_pos >= 0.5:  # rejection accepts at least half of the draws
        out = np.empty(0, dtype=np.int64)
        while out.size < size:
            x = np.asarray(dist.sample(np.full(int((size - out.size) / p_pos) + 16, mu), rng=gen), dtype=np.int64)
            out = np.concatenate([out, x[x > 0]])
        return out[:size]
    # Inversion on the truncated distribution: k = smallest k >= 1 with sf(k) <= u * sf(0).
    hi = 64
    while float(dist.sf(hi, mu)) > 1e-16 * p_pos and hi < 2**24:
        hi *= 2
    k = np.arange(1, hi + 1)
    sf = np.asarray(dist.sf(k, mu), dtype=np.float64) / p_pos  # decreasing from < 1 to ~0
    u = gen.random(size)
    pos = np.searchsorted(-sf, -u, side="left")  # first k whose sf/p_pos <= u
    return (np.minimum(pos, k.size - 1) + 1).astype(np.int64)


def _progress(total: int, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not enabled, desc="synthesizing", unit="block", leave=False, delay=1.0)
