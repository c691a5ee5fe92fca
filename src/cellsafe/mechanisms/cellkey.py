"""The cell key method (CKM): consistent perturbation of published cells through a ptable.

Every record carries a record key: uniform in [0, 1), or an integer 0..2^b - 1 in the ONS
convention.  A published cell's key is the fractional part (or the remainder modulo 2^b) of the sum
of its records' keys, and its released count is looked up in the :class:`~cellsafe.mechanisms.ptable.PTable`
by its original count and its key (001 section 2; Thompson et al. 2013).  The same records give a
cell the same key, hence the same perturbation, in every table it appears in.  Released counts
below a threshold are suppressed (missing), as the ONS ``cell_key_perturbation`` package does.

Keys are summed exactly: uniform keys as 53-bit fixed-point integers modulo 2^53, integer keys modulo
the ptable's number of cell keys, so the order of summation never changes a cell key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._frames import as_pandas
from .._random import RNGLike, as_generator
from .._validation import check_integer
from ..exceptions import DataError, InvalidArgumentError
from ..published import Publication
from ..published._spec import publication_for
from ..table import INDEX_DTYPE, CountTable, group_sum, ravel
from ._base import CellwiseMechanism
from .ptable import PTable

__all__ = ["CellKeyMethod", "CellKeyResult", "FLOAT_KEY_BITS"]

#: Uniform keys are summed as fixed-point integers with this many fractional bits.
FLOAT_KEY_BITS = 53


@dataclass(frozen=True, eq=False)
class CellKeyResult:
    """Published cells perturbed by the cell key method.

    Attributes
    ----------
    publication : Publication
    original : ndarray of int64
        Original published counts.
    cell_keys : ndarray
        Cell keys: floats in [0, 1), or integers 0..n_keys - 1 (ONS).
    released : ndarray of float
        Released counts; NaN where suppressed (below ``threshold``).
    threshold : int
    record_keys : ndarray or None
        The record keys that were generated (per record of microdata, or per non-zero inner cell of
        a frequency table, aligned with its ``index``); None when they were supplied.  Keep them to
        perturb other tables of the same data consistently.
    """

    publication: Publication = field(repr=False)
    original: np.ndarray
    cell_keys: np.ndarray
    released: np.ndarray
    threshold: int
    record_keys: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_suppressed(self) -> int:
        return int(np.isnan(self.released).sum())

    def frame(self, details: bool = False) -> pd.DataFrame:
        """Published cells in long format with the released ``count`` (NaN = suppressed).

        With ``details``, also ``original`` and ``cell_key``.
        """
        out = self.publication.cells()
        if details:
            out["original"] = self.original
            out["cell_key"] = self.cell_keys
        out["count"] = self.released
        return out

    def __repr__(self) -> str:
        changed = int(np.sum(np.nan_to_num(self.released, nan=-1) != self.original))
        return (
            f"CellKeyResult(n_published={self.original.shape[0]}, changed={changed}, "
            f"suppressed={self.n_suppressed}, threshold={self.threshold})"
        )


class CellKeyMethod(CellwiseMechanism):
    """The cell key method with a given ptable.

    Parameters
    ----------
    ptable : PTable
        The perturbation table (generated, or read in the sdcTools or ONS layout).
    threshold : int, optional
        Released counts below it are suppressed (NaN).  Default 10 for an ONS-layout ptable (the
        ONS package's default), 0 (no suppression) otherwise.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["F", "M", "F", "F"], "age": ["old", "old", "young", "old"]})
    >>> ckm = CellKeyMethod(PTable.generate(D=2, V=1))
    >>> res = ckm.perturb(df, "sex*age", variables=["sex", "age"], rng=1)
    >>> res.frame().shape
    (9, 3)
    """

    def __init__(self, ptable: PTable, *, threshold: int | None = None) -> None:
        if not isinstance(ptable, PTable):
            raise InvalidArgumentError(f"The 'ptable' parameter of CellKeyMethod must be a PTable. Got {type(ptable).__name__}.")
        if threshold is not None:
            check_integer(threshold, "threshold", "CellKeyMethod", low=0)
        self.ptable = ptable
        self.threshold = threshold

    @property
    def threshold_(self) -> int:
        """The threshold in use."""
        if self.threshold is not None:
            return int(self.threshold)
        return 10 if self.ptable.layout == "ons" else 0

    # ------------------------------------------------------------------ transition probabilities
    def transition_pmf(self, k: Any, j: Any) -> np.ndarray:
        return self.ptable.transition_pmf(k, j)

    def transition_sf(self, k: Any, j: Any) -> np.ndarray:
        return self.ptable.transition_sf(k, j)

    # ------------------------------------------------------------------ keys
    def _modulus(self, integer: bool) -> int:
        if integer:
            if self.ptable.layout != "ons":
                raise InvalidArgumentError(
                    "integer record keys need an ONS-layout ptable (pcv, ckey, pvalue); use uniform keys in [0, 1) "
                    "with this ptable, or read an ONS ptable."
                )
            return int(self.ptable.n_keys)  # type: ignore[arg-type]
        return 2**FLOAT_KEY_BITS

    def _as_fixed(self, keys: np.ndarray, what: str) -> tuple[np.ndarray, bool]:
        """Keys as non-negative integers modulo the key modulus; True when they are integer keys."""
        keys = np.asarray(keys)
        if keys.size and not np.issubdtype(keys.dtype, np.number):
            raise DataError(f"{what} must be numbers. Got dtype {keys.dtype}.")
        if np.issubdtype(keys.dtype, np.integer):
            m = self._modulus(True)
            if keys.size and (keys.min() < 0 or keys.max() >= m):
                raise DataError(f"{what} must be integers in 0..{m - 1} for this ptable. Got values in {keys.min()}..{keys.max()}.")
            return keys.astype(np.int64), True
        k = keys.astype(np.float64)
        if k.size and (not np.all(np.isfinite(k)) or k.min() < 0 or k.max() >= 1):
            raise DataError(f"{what} must be uniform numbers in [0, 1) (or integers for an ONS ptable).")
        return np.floor(k * float(2**FLOAT_KEY_BITS)).astype(np.uint64), False

    def _generate(self, n: int, rng: RNGLike) -> np.ndarray:
        g = as_generator(rng)
        if self.ptable.layout == "ons":
            return g.integers(0, self.ptable.n_keys, size=n, dtype=np.int64)
        return g.random(n)

    @staticmethod
    def _sum_keys(keys: np.ndarray, m: int, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact key sums modulo m per group (sorted unique groups, sums)."""
        if m & (m - 1) == 0:  # power of two: unsigned wrap-around is exact modulo m
            g, s = group_sum(groups, keys.astype(np.uint64))
            return g, (s % np.uint64(m)).astype(np.uint64)
        g, s = group_sum(groups, keys.astype(np.int64) % m)
        return g, (s % m).astype(np.uint64)

    def _published_keys(self, pub: Publication, inner_keys: np.ndarray, m: int) -> np.ndarray:
        """Key sums modulo m of every published cell from per-inner-cell key sums (aligned with X's rows)."""
        Xc = pub.X.tocsc()
        vals = inner_keys[Xc.indices]
        if m & (m - 1) != 0:
            vals = vals.astype(np.int64)
        vals = np.r_[vals, np.zeros(1, dtype=vals.dtype)]
        sums = np.add.reduceat(vals, Xc.indptr[:-1])
        sums[np.diff(Xc.indptr) == 0] = 0
        return (sums % type(sums[0])(m)).astype(np.uint64) if sums.size else sums.astype(np.uint64)

    # ------------------------------------------------------------------ perturbation
    def perturb(
        self,
        data: Any,
        publication: Publication | str | Sequence[Sequence[str]],
        *,
        variables: Sequence[Any] | None = None,
        record_key: str | Any = None,
        rng: RNGLike = None,
    ) -> CellKeyResult:
        """Perturb the published cells of ``data``.

        Parameters
        ----------
        data : DataFrame (or polars/pyarrow) of records, or CountTable
            Microdata (one row per record) or a frequency table.
        publication : Publication, formula or list of crossings
            The published cells (a formula such as ``'party*age + party*sex'`` is built over
            ``variables``).
        variables : sequence of str or Variable, optional
            The variables to cross (microdata only; default: those of the publication).
        record_key : str or array, optional
            Microdata: the column of record keys, or an array with one key per record.  Frequency
            table: one key sum per non-zero cell (aligned with ``table.index``).  Generated from
            ``rng`` when omitted, and returned in ``record_keys``.
        rng : int, SeedSequence, Generator, optional
            Source of generated keys.

        Returns
        -------
        CellKeyResult
        """
        generated = None
        if isinstance(data, CountTable):
            table = data
            if variables is not None and [getattr(v, "name", v) for v in variables] != table.names:
                raise InvalidArgumentError("variables must match the table's variables (or be omitted).")
            if record_key is None:
                keys = generated = self._generate(table.nnz, rng)
            else:
                if isinstance(record_key, str):
                    raise InvalidArgumentError("a key column needs microdata; for a CountTable pass an array of keys per non-zero cell.")
                keys = np.asarray(record_key)
                if keys.shape != (table.nnz,):
                    raise DataError(f"expected one key per non-zero cell of the table ({table.nnz}). Got shape {keys.shape}.")
            fixed, integer = self._as_fixed(keys, "record keys")
            cell_index = np.asarray(table.index)
        else:
            df = as_pandas(data, "data")
            if variables is None:
                if isinstance(publication, Publication):
                    variables = list(publication.variables)
                else:
                    raise InvalidArgumentError("pass variables=[...] (the columns to cross) with microdata.")
            table = CountTable.from_frame(df, variables)
            if isinstance(record_key, str):
                if record_key not in df.columns:
                    raise DataError(f"record key column {record_key!r} is not in the data (columns {list(df.columns)}).")
                col = df[record_key]
                if col.isna().any():
                    raise DataError(f"record key column {record_key!r} has missing values; every record needs a key.")
                keys = col.to_numpy()
            elif record_key is None:
                keys = generated = self._generate(len(df), rng)
            else:
                keys = np.asarray(record_key)
                if keys.shape != (len(df),):
                    raise DataError(f"expected one record key per record ({len(df)}). Got shape {keys.shape}.")
            fixed, integer = self._as_fixed(keys, "record keys")
            codes = np.empty((len(df), len(table.variables)), dtype=INDEX_DTYPE)
            for j, v in enumerate(table.variables):
                c = pd.Categorical(df[v.name], categories=list(v.categories)).codes
                if np.any(c < 0):
                    c = pd.Categorical(df[v.name].astype(str), categories=[str(x) for x in v.categories]).codes
                codes[:, j] = c
            cell_index = ravel(codes, table.shape)
        pub = publication_for(table, publication)
        m = self._modulus(integer)
        groups, sums = self._sum_keys(fixed, m, cell_index)
        pos = np.searchsorted(pub.inner_index, groups)
        pos_c = np.minimum(pos, pub.n_inner - 1)
        if np.any(pub.inner_index[pos_c] != groups):
            raise DataError("some records fall in cells outside the publication's inner cells.")
        inner_keys = np.zeros(pub.n_inner, dtype=np.uint64)
        inner_keys[pos_c] = sums
        pkeys = self._published_keys(pub, inner_keys, m)
        original = pub.aggregate(table)
        if integer:
            ckeys = pkeys.astype(np.int64)
        else:
            ckeys = pkeys.astype(np.float64) / float(2**FLOAT_KEY_BITS)
        released = self.ptable.released(original, ckeys).astype(np.float64)
        thr = self.threshold_
        if thr > 0:
            released[released < thr] = np.nan
        return CellKeyResult(pub, original, ckeys, released, thr, generated)

    def sample(self, table: CountTable, m: int = 1, rng: RNGLike = None) -> list[CountTable]:
        """Perturb the inner cells themselves, each with its own random key (no suppression).

        Cells with count 0 stay 0 (row 0 of a ptable).  This is the cell-wise view the a priori
        metrics use; to perturb published cells use :meth:`perturb`.
        """
        m = check_integer(m, "m", "CellKeyMethod.sample", low=1)
        g = as_generator(rng)
        out = []
        for _ in range(m):
            keys = g.random(table.nnz)
            rel = self.ptable.released(np.asarray(table.counts, dtype=np.int64), keys)
            out.append(table.with_counts(table.index, rel))
        return out
