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

import os
from typing import Any, Iterator, Sequence

import numpy as np

from .._frames import as_pandas, pd
from .._catalog import declared
from .._random import RNGLike, as_generator, as_seed_sequence, block_starts, stream
from .._registry import register
from ..exceptions import DataError, InvalidArgumentError
from ..io import FLOAT_KEY_BITS
from ..published import DEFAULT_MAX_INNER, Publication, PublishedTable, check_publication_spec, publication_for
from ..table import CountTable, keyed_table
from ._base import CellwiseMechanism
from .ptable import PTable

__all__ = ["CellKeyMethod", "FLOAT_KEY_BITS"]


@register("mechanism", "ckm")
class CellKeyMethod(CellwiseMechanism[PublishedTable]):
    """The cell key method with a given ptable, on the published cells of a publication.

    Parameters
    ----------
    ptable : PTable
        The perturbation table (generated, or read in the sdcTools or ONS layout).
    publication : Publication, formula or list of crossings, optional
        The published cells, e.g. ``'party*age + party*sex'``.  By default the table's own cells
        are published (the cell-wise view the a priori metrics describe).
    threshold : int, optional
        Released counts below it are suppressed (NaN).  Default 10 for an ONS-layout ptable (the
        ONS package's default), 0 (no suppression) otherwise.

    Notes
    -----
    :meth:`sample` draws a fresh cell key for every non-zero inner cell (block by block, so a
    distributed engine reproduces it): the sum of a cell's uniform record keys modulo 1 is itself
    uniform, so drawing the cell's key directly releases the same distribution as drawing a key
    per record.  :meth:`perturb` takes records with their own record keys (the ONS practice), so
    that the same records get the same keys in every publication.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["F", "M", "F", "F"], "age": ["old", "old", "young", "old"]})
    >>> ckm = CellKeyMethod(PTable.generate(D=2, V=1), "sex*age")
    >>> res = ckm.perturb(df, variables=["sex", "age"], rng=1)
    >>> res.to_frame().shape
    (9, 3)
    """

    _purpose = 0x434B  # "CK"
    _params = declared("mechanism", "ckm")

    def __init__(
        self,
        ptable: PTable,
        publication: Publication | str | Sequence[Sequence[str]] | None = None,
        *,
        threshold: int | None = None,
    ) -> None:
        self.ptable = ptable
        self.publication = publication
        self.threshold = threshold
        if not isinstance(ptable, PTable):
            raise InvalidArgumentError(f"The 'ptable' parameter of CellKeyMethod must be a PTable. Got {type(ptable).__name__}.")
        check_publication_spec(publication, "CellKeyMethod", none_ok=True)
        self._check_params()

    @classmethod
    def from_spec(cls, **params: Any) -> "CellKeyMethod":
        """Build from flat parameters: the ptable's (``D``, ``V``, ``js``, ``ncat``...) and the method's."""
        own = {k: params.pop(k) for k in ("publication", "threshold") if k in params}
        missing = [k for k in ("D", "V") if k not in params]
        if missing:
            raise InvalidArgumentError(
                f"the cell key method's spec needs {' and '.join(missing)} (e.g. 'ckm:D=5,V=3,js=2'); a ptable read "
                "from a file is given as CellKeyMethod(PTable.read(path))."
            )
        return cls(PTable.generate(**params), **own)

    @property
    def threshold_(self) -> int:
        """The threshold in use."""
        if self.threshold is not None:
            return int(self.threshold)
        return 10 if self.ptable.layout == "ons" else 0

    # ------------------------------------------------------------------ transition probabilities
    _integer_counts = True

    def _transition_pmf(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        return self.ptable.transition_pmf(k, j)

    def _transition_sf(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        return self.ptable.transition_sf(k, j)

    def _transition_mean(self, j: np.ndarray, tol: float) -> np.ndarray:
        return self.ptable.transition_mean(j)  # exact from the ptable's rows, no dense P(k | j)

    def _transition_var(self, j: np.ndarray, tol: float) -> np.ndarray:
        return self.ptable.transition_var(j)

    def zero_release_probability(self) -> float:
        return 0.0  # row 0 of a ptable keeps an empty cell empty

    def _draw(self, counts: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        """One released value per cell, each with its own uniform key (no suppression)."""
        return self.ptable.released(np.asarray(counts, dtype=np.int64), gen.random(counts.shape[0]))

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

    def _microdata_cells(
        self, data: Any, publication: Any, variables: Sequence[Any] | None, record_key: Any, rng: RNGLike
    ) -> tuple[CountTable, np.ndarray, bool, np.ndarray | None]:
        """The inner table of records and its key sums modulo the key range, from one DuckDB pass.

        ``data`` is a CSV/Parquet path or a frame of records; DuckDB groups the records by the
        variables and sums their keys exactly (:func:`cellsafe.table.keyed_table`), so only the
        distinct cells reach numpy, where they are encoded once and sorted once by flat index.
        Without a key column, one key is drawn per non-zero cell instead of per record: the sum
        modulo the key range of a cell's iid uniform record keys is itself uniform on that range and
        independent across cells (the records of different cells are disjoint), so drawing the cell
        sum directly has the same distribution (001 section 2) and costs nnz draws instead of n.
        """
        if variables is None:
            if isinstance(publication, Publication):
                variables = list(publication.variables)
            else:
                raise InvalidArgumentError("pass variables=[...] (the columns to cross) with microdata.")
        source = data
        key_column = record_key if isinstance(record_key, str) else None
        if not isinstance(data, (str, os.PathLike)):
            if record_key is not None and not isinstance(record_key, str):
                df = as_pandas(data, "data")
                keys = np.asarray(record_key)
                if keys.shape != (len(df),):
                    raise DataError(f"expected one record key per record ({len(df)}). Got shape {keys.shape}.")
                key_column = "__record_key"
                while key_column in df.columns:
                    key_column = "_" + key_column
                source = df.assign(**{key_column: keys})
            elif not (isinstance(data, pd.DataFrame) or hasattr(data, "__arrow_c_stream__")):
                source = as_pandas(data, "data")  # DuckDB scans pandas, polars and arrow in place
        elif record_key is not None and key_column is None:
            raise InvalidArgumentError(
                "with a file of records, record_key must name its key column; an array of keys needs the records "
                "as a DataFrame."
            )
        # one DuckDB pass; the one sort is over distinct cells, never over records
        table, sums, integer = keyed_table(source, variables, key_column, n_keys=self.ptable.n_keys)
        if sums is None:  # the same keys as for the CountTable of these records with the same seed
            generated = self.cell_keys(table, as_seed_sequence(rng), 0)
            fixed, integer = self._as_fixed(generated, "record keys")
            return table, fixed % np.uint64(self._modulus(integer)), integer, generated
        return table, sums, bool(integer), None

    def _published_keys(self, pub: Publication, inner_keys: np.ndarray, m: int) -> np.ndarray:
        """Key sums modulo m of every published cell from per-inner-cell key sums (aligned with X's rows)."""
        # modular sums: uint64 wraps modulo 2^64, which a power-of-two modulus divides; int64 sums of
        # keys below m otherwise
        vals = inner_keys if m & (m - 1) == 0 else inner_keys.astype(np.int64)
        sums = pub.sum_by_cell(vals)
        return (sums % type(sums[0])(m)).astype(np.uint64) if sums.size else sums.astype(np.uint64)

    # ------------------------------------------------------------------ releases
    def _publication(self, table: CountTable) -> Publication:
        spec = self.publication if self.publication is not None else [tuple(table.names)]
        # as the ONS package, publish the empty cells of the crossings too (released 0), where they fit
        zeros = table.n_cells - table.n_structural_zeros <= DEFAULT_MAX_INNER
        return publication_for(table, spec, zeros=zeros)

    def cell_keys(self, table: CountTable, root: np.random.SeedSequence, implicate: int) -> np.ndarray:
        """Fresh keys for the non-zero inner cells of ``table`` (aligned with its index), block by block.

        The per-block kernel of :meth:`sample`: block b's keys come from the stream keyed by
        (purpose, implicate, b) alone.  Uniform keys in [0, 1), or integers 0..n_keys - 1 for an
        ONS-layout ptable.
        """
        starts = block_starts(table.index, table.n_cells)
        keys = np.empty(table.nnz, dtype=np.int64 if self.ptable.layout == "ons" else np.float64)
        for b in np.flatnonzero(np.diff(starts)):
            lo, hi = int(starts[b]), int(starts[b + 1])
            keys[lo:hi] = self._generate(hi - lo, stream(root, self._purpose, implicate, int(b)))
        return keys

    def _implicates(
        self, table: CountTable, m: int, root: np.random.SeedSequence, first: int, progress: bool
    ) -> Iterator[PublishedTable]:
        """Releases ``first, ..., first + m - 1`` of the publication, each with fresh cell keys.

        Implicate i's keys come from the streams keyed by i and the block (:meth:`cell_keys`), so
        ``implicates(table, 1, rng=s, first=i)`` is the i-th release of ``sample(table, m, rng=s)``.
        """
        pub = self._publication(table)
        for i in range(first, first + m):
            keys = self.cell_keys(table, root, i)
            fixed, integer = self._as_fixed(keys, "cell keys")
            yield self._release(table, pub, fixed % np.uint64(self._modulus(integer)), integer, keys)

    def perturb(
        self,
        data: Any,
        *,
        variables: Sequence[Any] | None = None,
        record_key: str | Any = None,
        rng: RNGLike = None,
    ) -> PublishedTable:
        """Perturb the published cells of records with record keys (or of a table with key sums).

        Parameters
        ----------
        data : CSV/Parquet path, DataFrame (or polars/pyarrow) of records, or CountTable
            Microdata (one row per record) or a frequency table.
        variables : sequence of str or Variable, optional
            The variables to cross (microdata only; default: those of the publication).
        record_key : str or array, optional
            Microdata: the column of record keys, or an array with one key per record.  Frequency
            table: one key sum per non-zero cell (aligned with ``table.index``).  Generated from
            ``rng`` when omitted (one per non-zero cell), and returned in ``record_keys``.
        rng : int, SeedSequence, Generator, optional
            Source of generated keys.

        Returns
        -------
        PublishedTable
        """
        if isinstance(data, CountTable):
            table = data
            if variables is not None and [getattr(v, "name", v) for v in variables] != table.names:
                raise InvalidArgumentError("variables must match the table's variables (or be omitted).")
            generated = None
            if record_key is None:
                keys = generated = self.cell_keys(table, as_seed_sequence(rng), 0)
            else:
                if isinstance(record_key, str):
                    raise InvalidArgumentError("a key column needs microdata; for a CountTable pass an array of keys per non-zero cell.")
                keys = np.asarray(record_key)
                if keys.shape != (table.nnz,):
                    raise DataError(f"expected one key per non-zero cell of the table ({table.nnz}). Got shape {keys.shape}.")
            fixed, integer = self._as_fixed(keys, "record keys")
            sums = fixed % np.uint64(self._modulus(integer))
        else:
            table, sums, integer, generated = self._microdata_cells(data, self.publication, variables, record_key, rng)
        return self._release(table, self._publication(table), sums, integer, generated)

    def _release(
        self, table: CountTable, pub: Publication, sums: np.ndarray, integer: bool, generated: np.ndarray | None
    ) -> PublishedTable:
        """Published cell keys from key sums per non-zero inner cell (aligned with the table's index), and the release."""
        m = self._modulus(integer)
        groups = np.asarray(table.index)
        if groups.shape == pub.inner_index.shape and np.array_equal(groups, pub.inner_index):
            pos_c = np.arange(groups.size)  # the publication of the table's own cells
        else:
            rows = pub.inner_positions(groups)
            if rows is None:
                raise DataError("some records fall in cells outside the publication's inner cells.")
            pos_c = rows
        inner_keys = np.zeros(pub.n_inner, dtype=np.uint64)
        inner_keys[pos_c] = sums
        pkeys = self._published_keys(pub, inner_keys, m)
        original = pub.aggregate(table)
        ckeys: np.ndarray
        if integer:
            ckeys = pkeys.astype(np.int64)
        else:
            ckeys = pkeys.astype(np.float64) / float(2**FLOAT_KEY_BITS)
        released = self.ptable.released(original, ckeys).astype(np.float64)
        thr = self.threshold_
        if thr > 0:
            released[released < thr] = np.nan
        return PublishedTable(
            publication=pub,
            original=original,
            released=released,
            method="ckm",
            mechanism=repr(self),
            cell_keys=ckeys,
            record_keys=generated,
        )
