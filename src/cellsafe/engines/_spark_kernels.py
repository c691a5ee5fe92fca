"""What the Spark engine runs on the executors: the per-partition kernels and the decoding of cells to labels.

Kept apart from :mod:`cellsafe.engines.spark` so that a Python worker, unpickling a kernel, imports only what
the kernel uses (numpy, pyarrow, the table and the mechanisms' blocks): the driver's module pulls pandas,
scipy and the publications, about half a CPU second per worker for nothing.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from .._random import block_bits
from ..mechanisms import table_blocks
from ..table import CountTable, Variable, unravel

# Column names of the cells in Spark: flat index, count, key sum.
FLAT, COUNT, KEY = "flat", "count", "key_sum"


def partition_table(batches: Iterator[Any], variables: tuple[Variable, ...], sz: np.ndarray) -> tuple[CountTable, np.ndarray] | None:
    """The partition's cells as a CountTable over the full table's variables, and its block numbers."""
    import pyarrow as pa

    parts = list(batches)
    if not parts:
        return None
    data = pa.Table.from_batches(parts)
    flat = data.column(FLAT).to_numpy().astype(np.int64)
    cnt = data.column(COUNT).to_numpy().astype(np.int64)
    bits = block_bits(math.prod(v.size for v in variables))
    present = np.unique(flat >> bits)
    keep = cnt > 0
    return CountTable(variables, flat[keep], cnt[keep], sz if sz.size else None), present


def sampler(mechanism: Any, implicate: int, entropy: Any, spawn_key: tuple[int, ...], variables: tuple[Variable, ...],
            sz: np.ndarray, with_empty: bool) -> Any:
    """The kernel drawing implicate ``implicate`` of a partition's blocks: batches of (flat, count), non-zero cells,
    from the streams of the root seed (``entropy``, ``spawn_key``) as the local engine draws them."""

    def kernel(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        got = partition_table(batches, variables, sz)
        if got is None:
            return
        local, present = got
        root = np.random.SeedSequence(entropy, spawn_key=spawn_key)
        wanted = set(present.tolist())
        for block in table_blocks(local, with_empty=with_empty):
            if block.number not in wanted:
                continue
            idx, cnt = mechanism.sample_block(block, root, implicate)
            if idx.size:
                yield pa.RecordBatch.from_arrays(
                    [pa.array(np.asarray(idx, dtype=np.int64)), pa.array(np.asarray(cnt, dtype=np.int64))], names=[FLAT, COUNT]
                )

    return kernel


def decoder(labels: list[list[Any]], arrow_types: list[Any], shape: tuple[int, ...], names: list[str]) -> Any:
    """A function turning a batch of (flat, count) into one column of labels per variable and ``count``."""
    lookup: list[Any] = []

    def decode(batch: Any) -> Any:
        import pyarrow as pa

        if not lookup:  # built once per task, on the executor
            lookup.extend(pa.array(lab, type=t) for lab, t in zip(labels, arrow_types))
        codes = unravel(batch.column(0).to_numpy().astype(np.int64), shape)
        cols = [lookup[j].take(pa.array(codes[:, j])) for j in range(len(shape))]
        return pa.RecordBatch.from_arrays(cols + [batch.column(1)], names=names + [COUNT])

    return decode
