"""Which cells a release lists, and the attacker's model the protection is computed on.

The listing is public (issue: "a published table that passes the audit and still discloses").  A
release that lists only its non-empty cells tells every reader which cells hold at least one unit,
and a listed withheld cell of such a release is at least 1: with a margin of 2 over two listed
withheld cells, both are 1.  So by default a release lists its *frame*: every cell of every
crossing, each combination of the variables' categories and hierarchy codes, empty cells included,
less the table's structural zeros (which are public).  ``list='nonzero'`` keeps the old listing of
non-empty cells; the protection and the audit then give every listed cell a floor of 1.

The protection is computed on a model whose rows are the non-empty inner cells (plus the empty
ones beneath empty primaries with ``protect_zeros``): an attacker who also knows which inner cells
are empty, a stronger one than the reader of the release, so that what protects against it
protects against the reader; and the model stays the size of the data, not of the frame.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import InvalidArgumentError
from ..published import MagnitudeTable, Publication, publication_for
from ..table import CountTable

__all__ = ["LISTINGS", "listed_publication", "model_rows", "frame_magnitude"]

#: The values of the ``list`` parameter: every cell of the frame, or the non-empty ones only.
LISTINGS = ("frame", "nonzero")


def check_listing(value: Any, owner: str) -> str:
    if value not in LISTINGS:
        raise InvalidArgumentError(
            f"The 'list' parameter of {owner} must be 'frame' (every cell of every crossing, empty ones included) or "
            f"'nonzero' (non-empty cells only). Got {value!r} instead."
        )
    return str(value)


def _is_frame(pub: Publication, table: CountTable) -> bool:
    """Whether the publication's inner cells are every combination but the structural zeros."""
    return pub.n_inner == math.prod(v.size for v in table.variables) - table.n_structural_zeros


def listed_publication(table: CountTable, spec: Any, listing: str) -> Publication:
    """The publication whose cells a release lists: the frame, or the non-empty cells (module notes)."""
    if listing == "nonzero":
        if isinstance(spec, Publication):
            return publication_for(table, spec)
        return Publication.from_formula(table, spec, zeros=False)
    if isinstance(spec, Publication):
        spec._check_table(table)
        if _is_frame(spec, table):
            return spec
        return Publication.from_formula(
            table, spec.crossings, zeros=True, total_label=spec.total_label, hierarchies=dict(spec.hierarchies) or None
        )
    return Publication.from_formula(table, spec, zeros=True)


def model_rows(pub: Publication, inner: np.ndarray, zero_primary: np.ndarray | None = None, *, all_rows: bool = False) -> np.ndarray:
    """The inner cells (rows of ``pub.X``) of the protection's model: non-empty ones, and those under ``zero_primary``."""
    if all_rows:
        return np.ones(pub.n_inner, dtype=bool)
    rows = np.asarray(inner) > 0
    if zero_primary is not None and np.any(zero_primary):
        rows |= np.asarray(sp.csc_matrix(pub.X)[:, np.flatnonzero(zero_primary)].sum(axis=1)).reshape(-1) > 0
    return rows


def frame_magnitude(mt: MagnitudeTable) -> tuple[MagnitudeTable, np.ndarray]:
    """A magnitude table listed on its frame, and the rows of its model (the inner cells with records).

    Cells without contributors get sum 0, no contributor and no contribution.
    """
    pub = mt.publication
    frame = Publication.from_formula(
        mt.table, pub.crossings, zeros=True, total_label=pub.total_label, hierarchies=dict(pub.hierarchies) or None
    )
    width = np.int64(max(int(frame.margin_index.max(initial=0)), int(pub.margin_index.max(initial=0))) + 1)
    key_frame = frame.crossing.astype(np.int64) * width + frame.margin_index.astype(np.int64)
    key_mt = pub.crossing.astype(np.int64) * width + pub.margin_index.astype(np.int64)
    order = np.argsort(key_frame, kind="stable")
    col = order[np.searchsorted(key_frame[order], key_mt)]
    n = frame.n_published

    def spread(a: np.ndarray, fill: Any) -> np.ndarray:
        out = np.full((n,) + a.shape[1:], fill, dtype=a.dtype)
        out[col] = a
        return out

    rows = np.searchsorted(frame.inner_index, pub.inner_index)
    inner_values = np.zeros(frame.n_inner)
    if mt.inner_values is not None:
        inner_values[rows] = mt.inner_values
    listed = MagnitudeTable(
        publication=frame,
        table=mt.table,
        values=spread(mt.values, 0.0),
        counts=spread(mt.counts, 0),
        n_contributors=spread(mt.n_contributors, 0),
        top=spread(mt.top, 0.0),
        value=mt.value,
        largest=None if mt.largest is None else spread(mt.largest, -1),
        inner_values=inner_values,
    )
    model = np.zeros(frame.n_inner, dtype=bool)
    model[rows] = True
    return listed, model
