"""Fixed-total releases on the flat-index blocks: the two-pass scheme.

The multinomial-Dirichlet and Poisson-gamma synthesizers release z ~ Mult(z., w / W) with random
gamma weights w_i = s_i Gamma(r_i) (shape r_i, scale s_i) and W their sum.  The fixed total ties the
cells together, so a block cannot be released on its own; but two passes over the blocks of
:mod:`cellsafe._random` suffice, each block reading only its own cells and streams:

1. **kernel 1** (:meth:`FixedTotalMechanism.block_weight_sums`): the block's weights from its own
   stream, and their sum W_b;
2. **driver** (:meth:`FixedTotalMechanism.split_total`): z. is split over the blocks by sequential
   conditional binomials in block order, N_b ~ Bin(z. - N_1 - ... - N_(b-1), W_b / (W_b + ... + W_B)),
   from the driver's own stream: this is the multinomial Mult(z., W_b / W);
3. **kernel 2** (:meth:`FixedTotalMechanism.release_block`): the block's weights again, from the
   same stream, and N_b split within the block, Mult(N_b, w / W_b), from a second stream of the block.

Given the weights, a multinomial split first over blocks and then within them is the multinomial
over the cells, so the release has the law of one Mult(z., w / W) draw.  A distributed engine runs
the kernels where the blocks live and only the B block sums travel to the driver; the same ``rng``
gives the same table however the blocks are spread.  Samplers that accept or reject the weights
as a whole (exact rejection sampling of the Poisson-gamma law) run kernel 1 on numbered attempts,
each with its own stream, and the driver keeps the first accepted one.

Streams (purpose, implicate, ...):  weights of block b, attempt j: ``(b, 0, j)``; split within
block b: ``(b, 1)``; the driver: ``(DRIVER, step, ...)`` with ``DRIVER`` above every block number.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .._privacy import ADD_REMOVE, PrivacyLoss
from .._random import MAX_BLOCK_COUNT_BITS, RNGLike, as_seed_sequence, stream
from .._validation import check_integer
from ..exceptions import InvalidArgumentError
from ..table import INDEX_DTYPE, CountTable
from ._base import Mechanism, _progress, assemble_blocks

__all__ = ["GammaBlock", "GammaBlocks", "FixedTotalMechanism", "split_total", "DRIVER", "fixed_total_loss"]

#: Stream key of the driver steps: larger than any block number (at most 2**12 blocks).
DRIVER = 1 << (MAX_BLOCK_COUNT_BITS + 20)
_WEIGHTS, _SPLIT = 0, 1  # the two streams of a block
_SPLIT_STEP = 1  # the driver's split of the total (step 0 is acceptance, where there is one)


@dataclass(frozen=True, eq=False)
class GammaBlock:
    """The cells of one block of a fixed-total release, with their gamma weights' parameters.

    Attributes
    ----------
    number : int
        The block's number b (its flat indices lie in ``[b * 2**bits, (b + 1) * 2**bits)``).
    index : ndarray of int64
        Sorted flat indices of the cells that can receive events.
    shape, scale : ndarray
        Gamma shapes r_i and scales s_i of the weights w_i = s_i Gamma(r_i), aligned with ``index``
        (``scale`` may hold one value for all cells).
    """

    number: int
    index: np.ndarray
    shape: np.ndarray
    scale: np.ndarray

    def weights(self, root: np.random.SeedSequence, purpose: int, implicate: int, attempt: int = 0) -> np.ndarray:
        """The block's weights for one attempt, from the stream keyed by (block, attempt) only."""
        if not self.index.size:
            return np.zeros(0)
        gen = stream(root, purpose, implicate, self.number, _WEIGHTS, attempt)
        return gen.standard_gamma(self.shape) * self.scale


class GammaBlocks:
    """A re-iterable sequence of :class:`GammaBlock`, rebuilt on each pass (memory of one block)."""

    def __init__(self, make: Callable[[], Iterator[GammaBlock]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[GammaBlock]:
        return self._make()


def split_total(total: int, sums: Sequence[float] | np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Mult(total, sums / sum(sums)) by sequential conditional binomials, in order.

    Block b receives Bin(what is left, sums[b] / (sums[b] + ... + sums[-1])); the remaining sums
    are accumulated from the end, so the last positive block takes what is left exactly.

    Examples
    --------
    >>> import numpy as np
    >>> int(split_total(100, [1.0, 0.0, 3.0], np.random.default_rng(1)).sum())
    100
    """
    w = np.asarray(sums, dtype=np.float64)
    remaining = np.cumsum(w[::-1])[::-1]
    out = np.zeros(w.shape[0], dtype=np.int64)
    left = int(total)
    for b in range(w.shape[0]):
        if left == 0:
            break
        if w[b] <= 0.0:
            continue
        p = min(1.0, w[b] / remaining[b])
        out[b] = left if p >= 1.0 else int(gen.binomial(left, p))
        left -= int(out[b])
    assert left == 0, "the weights of the blocks are all zero"
    return out


def fixed_total_loss(mechanism: Any, relation: str, table: Any) -> PrivacyLoss:
    """The loss of one implicate of a fixed-total synthesizer with an ``epsilon(table)`` method.

    Under replace-one (one record moves between cells, the total fixed and public) it is the
    synthesizer's proven epsilon for the table's total (pure, so also epsilon**2/2-zCDP).  Under
    add-remove the released total is the original total, which tells neighbours apart with
    certainty: no finite loss (epsilon and rho inf).  A release whose total is itself noisy or
    declared public is accounted by :func:`cellsafe.dp.plan_synthesis`.
    """
    if relation == ADD_REMOVE:
        return PrivacyLoss(math.inf, 0.0, math.inf, relation)
    if table is None:
        raise InvalidArgumentError(
            f"{type(mechanism).__name__}.privacy_loss needs table= (its loss depends on the released total)."
        )
    return PrivacyLoss.pure(mechanism.epsilon(table), relation)


class FixedTotalMechanism(Mechanism):
    """A mechanism releasing z ~ Mult(z., w / W) on gamma weights, block by block (two passes).

    Subclasses say which cells and weights a table gives (:meth:`gamma_blocks`) and may accept
    or reject the weights as a whole (:meth:`_accepted_attempt`).  The public kernels
    :meth:`block_weight_sums` and :meth:`release_block` and the driver step :meth:`split_total`
    are the seam where an engine that holds the blocks elsewhere plugs in.
    """

    #: The first element of this class's random-stream keys (distinct per class).
    _purpose = 0

    @abstractmethod
    def gamma_blocks(self, table: CountTable) -> Iterable[GammaBlock]:
        """The driver's preparation: the blocks holding cells able to receive events, in block order.

        A re-iterable (a list, or :class:`GammaBlocks` that rebuilds them on each pass).
        """

    def _check_sample_table(self, table: CountTable) -> int:
        """Validate the table for sampling and return the total to release."""
        return int(table.total)

    # ------------------------------------------------------------------ the kernels and the driver
    def block_weight_sums(
        self, block: GammaBlock, root: np.random.SeedSequence, implicate: int, attempts: Sequence[int] = (0,)
    ) -> np.ndarray:
        """Kernel 1: the sum W_b of the block's weights, for each attempt (one float each)."""
        return np.array([float(block.weights(root, self._purpose, implicate, j).sum()) for j in attempts])

    def split_total(
        self, total: int, sums: Sequence[float] | np.ndarray, root: np.random.SeedSequence, implicate: int
    ) -> np.ndarray:
        """Driver: the events N_b of each block, Mult(total, W_b / W), from the driver's stream."""
        return split_total(total, sums, stream(root, self._purpose, implicate, DRIVER, _SPLIT_STEP))

    def release_block(
        self, block: GammaBlock, n_events: int, root: np.random.SeedSequence, implicate: int, attempt: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Kernel 2: the block's released cells (sorted flat indices, positive counts) given its N_b events."""
        if n_events == 0 or not block.index.size:
            return np.zeros(0, dtype=INDEX_DTYPE), np.zeros(0, dtype=np.int64)
        w = block.weights(root, self._purpose, implicate, attempt)
        gen = stream(root, self._purpose, implicate, block.number, _SPLIT)
        if block.index.size == 1:
            z = np.array([n_events], dtype=np.int64)
        else:
            z = gen.multinomial(int(n_events), w / w.sum())
        nz = np.flatnonzero(z)
        return block.index[nz], z[nz].astype(np.int64)

    def _accepted_attempt(
        self, blocks: Iterable[GammaBlock], total: int, root: np.random.SeedSequence, implicate: int
    ) -> tuple[int, np.ndarray]:
        """The attempt whose weights are released, and its block sums (no rejection by default)."""
        sums = np.array([self.block_weight_sums(b, root, implicate)[0] for b in blocks])
        return 0, sums

    # ------------------------------------------------------------------ sampling
    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[CountTable]:
        """``m`` tables with the original total, in two passes over the blocks (``rng`` may be "secure").

        Each implicate is a release from the same data: ``m`` implicates cost ``m * epsilon``
        by sequential composition (002 section 7.7.1).  Calibrate with epsilon / m per implicate.
        """
        return list(self._implicates(table, int(table.total), m, as_seed_sequence(rng), 0, progress))

    def implicates(
        self, table: CountTable, m: int = 1, rng: RNGLike = None, *, first: int = 0, progress: bool = False,
        total: int | None = None,
    ) -> Iterator[CountTable]:
        """Draw implicates ``first, ..., first + m - 1`` one at a time, as an iterator.

        Implicate k's streams are keyed by the root, k and the block only, so the tables are those
        of :meth:`sample` (``implicates(table, 1, rng=s, first=k)`` is its k-th table) while one
        is held at a time: writers of many implicates keep memory flat in ``m``.

        Parameters
        ----------
        table : CountTable
        m : int, default 1
        rng : None, int, SeedSequence, Generator or "secure"
            The root of every implicate's streams (a Generator is consumed once, at the call).
        first : int, default 0
            The number of the first implicate drawn.
        progress : bool, default False
            Show a progress bar on standard error (one step per implicate).
        total : int, optional
            Release this total instead of the table's (a total released with noise, or declared
            public): z ~ Mult(total, theta) with the same weights.  The privacy guarantee of such a
            release is stated by :func:`cellsafe.dp.plan_synthesis`, not by :meth:`epsilon`.

        Examples
        --------
        >>> import cellsafe
        >>> from cellsafe.mechanisms import MultinomialDirichletSynthesizer
        >>> t = cellsafe.CountTable([cellsafe.Variable("a", ("x", "y", "z"), public=True)], [0, 1, 2], [3, 5, 1])
        >>> synth = MultinomialDirichletSynthesizer(alpha=1.0)
        >>> second = next(synth.implicates(t, 1, rng=7, first=1))
        >>> second.equals(synth.sample(t, m=2, rng=7)[1])
        True
        """
        m = self._check_sample(table, m, "implicates")
        owner = f"{type(self).__name__}.implicates"
        first = check_integer(first, "first", owner, low=0)
        own = self._check_sample_table(table)
        if total is not None:
            total = check_integer(total, "total", owner, low=0)
        root = as_seed_sequence(rng)
        return self._implicates(table, own if total is None else total, m, root, first, progress)

    def _implicates(
        self, table: CountTable, total: int, m: int, root: np.random.SeedSequence, first: int, progress: bool
    ) -> Iterator[CountTable]:
        blocks = self.gamma_blocks(table)
        with _progress(m, progress) as bar:
            for k in range(first, first + m):
                attempt, sums = self._accepted_attempt(blocks, total, root, k)
                events = self.split_total(total, sums, root, k)
                parts = [self.release_block(block, int(n), root, k, attempt) for block, n in zip(blocks, events)]
                yield assemble_blocks(table, parts)
                bar.update(1)
