"""Randomness: one ``rng`` argument everywhere, and block-keyed streams.

``rng`` may be ``None`` (fresh entropy), an int seed, a :class:`numpy.random.SeedSequence`
or a :class:`numpy.random.Generator`.  Mechanisms that draw per cell turn it into a
:class:`SeedSequence` once (:func:`as_seed_sequence`) and derive independent child streams
keyed by *(purpose, implicate, block)* (:func:`stream`).  Because a block's stream depends only
on its key, a table computed in one piece, in chunks of blocks, or on many workers gets the same
numbers.

``rng="secure"`` is the cryptographic source of :mod:`cellsafe._secure`: the root is a
:class:`~cellsafe._secure.SecureSeed` (a secret key from ``os.urandom``) and every stream a
:class:`~cellsafe._secure.SecureGenerator` (keyed SHAKE-256), never a numpy bit generator.  The
block scheme is the same, so a secure release is also independent of chunking within its run.

The one block scheme
--------------------
Blocks are ranges of flat indices: block ``b`` of a table with ``n_cells`` cells holds the flat
indices ``[b * 2**bits, (b + 1) * 2**bits)`` with ``bits = block_bits(n_cells)``: at least 2**20
cells per block, and at most 2**12 blocks, however large the table (a table of 6e17 possible cells
has about 2,100 blocks of 2**48 flat indices, most of them empty).  The size depends on the table's shape
only, never on its counts, so a partition of a distributed engine that holds whole blocks computes
exactly what one process computes.  Every sampler that draws per cell uses this scheme.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from ._secure import SecureGenerator, SecureSeed
from .exceptions import InvalidArgumentError

# numpy's generator types by name: importing numpy.random costs a short command some milliseconds it may not need
RNGLike = Union[None, int, np.integer, "np.random.SeedSequence", "np.random.Generator", str, SecureSeed, SecureGenerator]

__all__ = [
    "RNGLike",
    "SecureSeed",
    "SecureGenerator",
    "is_secure",
    "as_generator",
    "as_seed_sequence",
    "stream",
    "block_bits",
    "block_size",
    "n_blocks",
    "block_starts",
    "MIN_BLOCK_BITS",
    "MAX_BLOCK_COUNT_BITS",
]

#: A block holds at least 2**MIN_BLOCK_BITS flat indices ...
MIN_BLOCK_BITS = 20
#: ... and a table has at most 2**MAX_BLOCK_COUNT_BITS blocks.  Both are part of the definition of
#: every seeded output: changing them changes which numbers a seed produces.
MAX_BLOCK_COUNT_BITS = 12


def is_secure(rng: RNGLike) -> bool:
    """Whether ``rng`` names the cryptographic source (``"secure"``, a SecureSeed or a SecureGenerator)."""
    return (isinstance(rng, str) and rng == "secure") or isinstance(rng, (SecureSeed, SecureGenerator))


def as_seed_sequence(rng: RNGLike) -> np.random.SeedSequence:
    """Convert ``rng`` to the root of keyed streams: a :class:`~numpy.random.SeedSequence`, or a
    :class:`~cellsafe._secure.SecureSeed` for the cryptographic source.

    A Generator is consumed once (four 64-bit words), so successive calls with the same
    Generator give different, reproducible sequences.  ``"secure"`` draws a 256-bit key from the
    operating system's CSPRNG; the streams under it are cryptographic (:mod:`cellsafe._secure`).
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, str):
        if rng == "secure":
            return _as_numpy(SecureSeed())
        raise InvalidArgumentError(f"rng must be None, an int, a SeedSequence, a Generator or 'secure'. Got {rng!r}.")
    if isinstance(rng, (np.random.SeedSequence, SecureSeed)):
        return _as_numpy(rng)
    if isinstance(rng, SecureGenerator):
        return _as_numpy(SecureSeed(rng.bytes(32)))
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence([int(x) for x in rng.integers(0, 2**63, size=4, dtype=np.int64)])
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise InvalidArgumentError(f"An integer rng seed must be non-negative. Got {rng}.")
        return np.random.SeedSequence(int(rng))
    raise InvalidArgumentError(
        f"rng must be None, an int, a numpy SeedSequence or a numpy Generator. Got {type(rng).__name__} instead."
    )


def as_generator(rng: RNGLike) -> np.random.Generator:
    """Convert ``rng`` to a Generator (a Generator is returned unchanged; ``"secure"`` gives a
    :class:`~cellsafe._secure.SecureGenerator` with a fresh key)."""
    if isinstance(rng, (np.random.Generator, SecureGenerator)):
        return _as_numpy(rng)
    root: Any = as_seed_sequence(rng)
    if isinstance(root, SecureSeed):
        return _as_numpy(root.generator())
    return np.random.Generator(np.random.PCG64(root))


def _as_numpy(secure: Any) -> Any:
    """A secure seed or generator where the types say numpy's: it stands in for them, with the same methods (a
    draw it does not offer is refused by name, never approximated)."""
    return secure


def stream(root: np.random.SeedSequence, *key: int) -> np.random.Generator:
    """The Generator keyed by ``key`` (non-negative ints) under ``root``.

    Equal ``(root, key)`` give identical streams on any machine; distinct keys give
    statistically independent streams (SeedSequence spawn keys).  Under a secure root the stream
    is cryptographic and identical only within the run that holds the key.
    """
    if isinstance(root, SecureSeed):
        return _as_numpy(root.generator(*key))
    child = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + tuple(int(k) for k in key))
    return np.random.Generator(np.random.PCG64(child))


# ---------------------------------------------------------------------- the block scheme
def block_bits(n_cells: int) -> int:
    """log2 of the number of flat indices per block for a table of ``n_cells`` cells.

    Examples
    --------
    >>> block_bits(3_468_640), block_bits(6 * 10**17)
    (20, 48)
    """
    need = max(int(n_cells) - 1, 1).bit_length()  # bits that address every flat index
    return max(MIN_BLOCK_BITS, need - MAX_BLOCK_COUNT_BITS)


def block_size(n_cells: int) -> int:
    """Flat indices per block (a power of two)."""
    return 1 << block_bits(n_cells)


def n_blocks(n_cells: int) -> int:
    """Number of blocks covering ``[0, n_cells)``."""
    return -(-int(n_cells) // block_size(n_cells))


def block_starts(index: np.ndarray, n_cells: int) -> np.ndarray:
    """Positions in the sorted flat indices ``index`` where each block starts.

    Returns an int64 array of length ``n_blocks(n_cells) + 1``: the cells of block ``b`` are
    ``index[starts[b]:starts[b + 1]]``.  Binary search on the sorted keys: O(blocks log n).
    """
    size = block_size(n_cells)
    edges = np.arange(n_blocks(n_cells) + 1, dtype=np.int64) * size
    edges[-1] = max(int(n_cells), 0)
    return np.searchsorted(index, edges, side="left").astype(np.int64)
