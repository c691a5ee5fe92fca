"""Randomness: one ``rng`` argument everywhere, and block-keyed streams.

``rng`` may be ``None`` (fresh entropy), an int seed, a :class:`numpy.random.SeedSequence`
or a :class:`numpy.random.Generator`.  Mechanisms that draw per cell turn it into a
:class:`SeedSequence` once (:func:`as_seed_sequence`) and derive independent child streams
keyed by *(purpose, implicate, block)* (:func:`stream`).  Because a block's stream depends only
on its key, a table computed in one piece, in chunks of blocks, or on many workers gets the same
numbers.
"""

from __future__ import annotations

import os
from typing import Union

import numpy as np

from .exceptions import InvalidArgumentError

RNGLike = Union[None, int, np.integer, np.random.SeedSequence, np.random.Generator, str]

__all__ = ["RNGLike", "as_generator", "as_seed_sequence", "stream"]


def as_seed_sequence(rng: RNGLike) -> np.random.SeedSequence:
    """Convert ``rng`` to a :class:`~numpy.random.SeedSequence`.

    A Generator is consumed once (four 64-bit words), so successive calls with the same
    Generator give different, reproducible sequences.  ``"secure"`` draws 256 bits from the
    operating system's entropy source.
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, str):
        if rng == "secure":
            return np.random.SeedSequence(int.from_bytes(os.urandom(32), "little"))
        raise InvalidArgumentError(f"rng must be None, an int, a SeedSequence, a Generator or 'secure'. Got {rng!r}.")
    if isinstance(rng, np.random.SeedSequence):
        return rng
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
    """Convert ``rng`` to a :class:`~numpy.random.Generator` (a Generator is returned unchanged)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.Generator(np.random.PCG64(as_seed_sequence(rng)))


def stream(root: np.random.SeedSequence, *key: int) -> np.random.Generator:
    """The Generator keyed by ``key`` (non-negative ints) under ``root``.

    Equal ``(root, key)`` give identical streams on any machine; distinct keys give
    statistically independent streams (SeedSequence spawn keys).
    """
    child = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + tuple(int(k) for k in key))
    return np.random.Generator(np.random.PCG64(child))
