"""A protected publication: the one result shape of every published-table method.

The cell key method and small count rounding both return a :class:`PublishedTable`: the published
cells of a :class:`~cellsafe.published.Publication` with their original and released counts (NaN
where a cell is suppressed), and what the method knows of the inner cells and the keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._frames import pd
from .._results import Result
from ..exceptions import DataError
from ..table import CountTable
from ._spec import Publication

__all__ = ["PublishedTable"]


@dataclass(frozen=True, eq=False)
class PublishedTable(Result):
    """Published cells before and after protection.

    Attributes
    ----------
    publication : Publication
        The published cells (columns of its X).
    original : ndarray of int64
        Original published counts.
    released : ndarray of float64
        Released counts; NaN where suppressed.
    method : str
        The registered name of the method ('ckm', 'scr').
    mechanism : str
        repr of the mechanism that made it (its parameters).
    inner_original, inner_released : ndarray of int64, optional
        Inner counts aligned with ``publication.inner_index`` before and after protection, when the
        method changes inner cells (small count rounding: the published cells are their sums, so the
        release is additive by construction).
    cell_keys : ndarray, optional
        The cell key of each published cell (cell key method).
    record_keys : ndarray, optional
        Generated record keys (one sum per non-zero inner cell, aligned with the table's index), to
        perturb other publications of the same data consistently; None when keys were supplied.
    n_iter : int, optional
        Iterations of an iterative method.
    suppression : ndarray of str, optional
        Per published cell ``'primary'``, ``'secondary'`` or ``''`` (cell suppression).
    measure : str
        What the cells hold: ``'count'``, or the summed variable of a magnitude table.
    note : str
        What the method says about this release ('' when nothing), e.g. that the optimal suppression's time
        limit ran out and the Gaussian pattern was returned.
    requirements : Requirements, optional
        Cell suppression: what the attacker's interval of each cell must reach
        (:func:`cellsafe.mechanisms.protection_requirements`), for the audit.
    listing : str, optional
        Which cells the release lists: ``'frame'`` (every cell of every crossing) or ``'nonzero'``.
    sole : ndarray of int64, optional
        Cell suppression of a magnitude table: each cell's single contributor (-1: none or several).
    """

    publication: Publication = field(repr=False)
    original: np.ndarray = field(repr=False)
    released: np.ndarray = field(repr=False)
    method: str
    mechanism: str
    inner_original: np.ndarray | None = field(default=None, repr=False)
    inner_released: np.ndarray | None = field(default=None, repr=False)
    cell_keys: np.ndarray | None = field(default=None, repr=False)
    record_keys: np.ndarray | None = field(default=None, repr=False)
    n_iter: int | None = None
    suppression: np.ndarray | None = field(default=None, repr=False)
    measure: str = "count"
    note: str = ""
    requirements: Any = field(default=None, repr=False)
    listing: str | None = None
    sole: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        publication: Publication,
        original: "CountTable | np.ndarray",
        *,
        column: str = "count",
        method: str = "file",
        mechanism: str = "",
    ) -> "PublishedTable":
        """A release read back from its long format (as ``cellsafe publish`` writes it), to audit or compare.

        Parameters
        ----------
        frame : DataFrame
            One row per published cell: the variables (a category, an aggregate's code or
            ``'Total'``), ``column`` (empty where withheld) and, after cell suppression, a
            ``suppression`` column (``'primary'``, ``'secondary'`` or empty).
        publication : Publication
            The published cells (the same formula and hierarchies as the release).
        original : CountTable or array over the published cells
            The original data (aggregated by ``publication``) or its published values.
        column : str, default 'count'
            The released value's column.
        method, mechanism : str
            What made the release, when known.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from cellsafe.table import CountTable, Variable
        >>> t = CountTable.from_dense(np.array([[1, 9], [7, 8]]), [Variable("a", ["x", "y"]), Variable("b", ["u", "v"])])
        >>> pub = Publication.from_formula(t, "a + b")
        >>> frame = pd.DataFrame({"a": ["Total", "x", "y", "Total", "Total"], "b": ["Total", "Total", "Total", "u", "v"],
        ...                       "count": [25, np.nan, 15, np.nan, 17], "suppression": ["", "primary", "", "secondary", ""]})
        >>> rel = PublishedTable.from_frame(frame, pub, t)
        >>> rel.n_suppressed, rel.suppression.tolist()
        (2, ['', 'primary', '', 'secondary', ''])
        """
        released = publication.align(frame, count=column)
        status = None
        if "suppression" in frame.columns:
            marks = frame["suppression"].fillna("").astype(str).str.strip()
            unknown = sorted(set(marks) - {"", "primary", "secondary"})
            if unknown:
                raise DataError(
                    f"the 'suppression' column may hold 'primary', 'secondary' or nothing. Got {unknown[:3]}; "
                    "give the file as cellsafe publish wrote it."
                )
            code = publication.align(frame.assign(**{column: marks.map({"": 0, "primary": 1, "secondary": 2})}), count=column)
            status = np.full(publication.n_published, "", dtype=object)
            status[code == 1] = "primary"
            status[code == 2] = "secondary"
        values = publication.aggregate(original) if isinstance(original, CountTable) else np.asarray(original)
        return cls(publication=publication, original=values, released=released, method=method, mechanism=mechanism,
                   suppression=status, measure=column)

    # ------------------------------------------------------------------ counts
    @property
    def n_published(self) -> int:
        return int(self.original.shape[0])

    @property
    def n_suppressed(self) -> int:
        """Published cells released as missing."""
        return int(np.isnan(self.released).sum())

    @property
    def n_changed(self) -> int:
        """Published cells released with another count (suppressed ones included)."""
        return int(np.sum(np.nan_to_num(self.released, nan=-1.0) != self.original))

    def released_counts(self) -> np.ndarray:
        """Released counts as int64 (raises if any cell is suppressed)."""
        if self.n_suppressed:
            raise DataError(f"{self.n_suppressed} published cell(s) are suppressed; their counts are not released.")
        return self.released.astype(np.int64)

    # ------------------------------------------------------------------ views
    def to_frame(self, details: bool = False) -> pd.DataFrame:
        """Published cells in long format: the variables ('Total' where aggregated) and ``count``.

        With ``details``, also ``original`` and (cell key method) ``cell_key``.  Cell suppression
        adds a ``suppression`` column: ``primary``, ``secondary`` or empty.
        """
        self._check_columns(details)
        out = self.publication.cells()
        if details:
            out["original"] = self.original
            if self.cell_keys is not None:
                out["cell_key"] = self.cell_keys
        out[self.measure] = self.released
        if self.suppression is not None:
            out["suppression"] = self.suppression
        return out

    def _check_columns(self, details: bool = False) -> None:
        """Refuse a layout where a column the release adds would take a variable's name (its labels lost)."""
        added = {self.measure: "values"}
        if self.suppression is not None:
            added["suppression"] = "suppression marks"
        if details:
            added.update({"original": "original values", "cell_key": "cell keys"})
        for name in self.publication.names:
            if name in added:
                raise DataError(
                    f"A variable is named {name!r}, the name of the release's column of {added[name]}: rename the "
                    f"variable (in the input and in --variables) before publishing, so that neither is lost."
                )

    def release_frame(self) -> pd.DataFrame:
        """The cells as a release file holds them: a table id first (the crossing each cell belongs to:
        ``'party:age'``, ``'Total'``), the cells of :meth:`to_frame`, and counts as nullable integers
        (empty where a cell is suppressed, never floats like 12.0)."""
        out = self.to_frame()
        name, labels = self._table_id()
        out.insert(0, name, np.array(labels, dtype=object)[np.asarray(self.publication.crossing)])
        if self.measure == "count" and "count" in out.columns:
            values = pd.to_numeric(out["count"])
            finite = values.dropna()
            if (finite == np.floor(finite)).all():
                out["count"] = values.round().astype("Int64")
        return out

    def _table_id(self) -> tuple[str, list[str]]:
        """The release's table-id column: its name (the first of table, table_id, table_id_ that no other column
        takes) and each crossing's label (``'party:age'``, ``'Total'``)."""
        taken = {*self.publication.names, self.measure, *(("suppression",) if self.suppression is not None else ())}
        name = next(n for n in ("table", "table_id", "table_id_") if n not in taken)
        return name, [":".join(c) if c else "Total" for c in self.publication.crossings]

    def coded_release(self) -> tuple[list[str], list[Any]] | None:
        """The columns of :meth:`release_frame` in coded form (header, columns for
        :func:`cellsafe.io.write_coded_csv`), for a release of counts; None for anything else.

        Each distinct label is held (and written) once; the counts as floats with NaN where withheld.
        """
        from ..io import CodedColumn

        if self.measure != "count":
            return None
        self._check_columns()
        pub = self.publication
        coded = pub.cell_codes()
        name, crossings = self._table_id()
        header = [name, *coded, "count"]
        columns: list[Any] = [CodedColumn(crossings, pub.crossing), *(CodedColumn(*lc) for lc in coded.values()), self.released]
        if self.suppression is not None:
            marks, codes = np.unique(np.asarray(self.suppression, dtype=str), return_inverse=True)
            header.append("suppression")
            columns.append(CodedColumn(marks.tolist(), codes.reshape(-1)))
        return header, columns

    def write_csv(self, path: Any, *, escape_formulas: bool = False) -> None:
        """Write :meth:`release_frame` as CSV, the bytes ``release_frame().to_csv(path, index=False)`` writes.

        A release of counts goes straight from the publication's coded labels to the file
        (:func:`cellsafe.io.write_coded_csv`: each label formatted once), without the frame.
        ``escape_formulas`` neutralises text cells a spreadsheet would run as formulas
        (:func:`cellsafe.io.neutralise_formulas`).
        """
        from ..io import neutralise_formulas, write_coded_csv

        coded = self.coded_release()
        if coded is not None and write_coded_csv(path, *coded, escape_formulas=escape_formulas):
            return
        frame = self.release_frame()
        (neutralise_formulas(frame) if escape_formulas else frame).to_csv(path, index=False)

    def inner_table(self) -> CountTable:
        """The released inner cells as a table (methods that change inner cells only)."""
        if self.inner_released is None:
            raise DataError(f"the {self.method!r} method releases published cells only; it has no inner table.")
        return CountTable(self.publication.variables, self.publication.inner_index, self.inner_released)

    def released_table(self) -> CountTable:
        """The released cells as a table, when the publication is the inner cells themselves.

        That is the cell-wise view (a publication of the one crossing of all variables), on which
        the empirical tau metrics compare with the a priori ones.
        """
        pub = self.publication
        if pub.crossings != (tuple(pub.names),):
            raise DataError(
                "released_table needs a publication of the inner cells themselves (the crossing of all variables); "
                f"this one publishes {len(pub.crossings)} crossing(s). Use to_frame() for published cells."
            )
        order = np.argsort(pub.margin_index, kind="stable")
        return CountTable(pub.variables, pub.margin_index[order], self.released_counts()[order])

    def utility(self) -> dict[str, float]:
        """Hellinger utility (001 eqs. 3-4) and absolute differences over the released published cells."""
        ok = ~np.isnan(self.released)
        f = self.original[ok].astype(np.float64)
        g = self.released[ok]
        d = g - f
        hd = float(np.sqrt(0.5 * np.sum((np.sqrt(f) - np.sqrt(g)) ** 2)))
        n = float(f.sum())
        return {
            "hellinger_utility": 1.0 - hd / np.sqrt(n) if n > 0 else float("nan"),
            "max_difference": float(np.max(np.abs(d))) if d.size else 0.0,
            "mean_absolute_difference": float(np.mean(np.abs(d))) if d.size else 0.0,
            "rms_difference": float(np.sqrt(np.mean(d**2))) if d.size else 0.0,
        }

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "method": self.method,
            "mechanism": self.mechanism,
            "n_published": self.n_published,
            "n_changed": self.n_changed,
            "n_suppressed": self.n_suppressed,
        }
        out.update(self.utility())
        if self.inner_released is not None and self.inner_original is not None:
            out["n_changed_inner"] = int(np.sum(self.inner_released != self.inner_original))
            out["total_difference"] = int(self.inner_released.sum() - self.inner_original.sum())
        if self.n_iter is not None:
            out["n_iter"] = self.n_iter
        if self.suppression is not None:
            out["n_primary"] = int(np.sum(self.suppression == "primary"))
            out["n_secondary"] = int(np.sum(self.suppression == "secondary"))
        return out

    def frequencies(self, top: int = 6) -> pd.DataFrame:
        """How many published cells hold each value 0..top (and more), before and after."""
        labels = [str(k) for k in range(top + 1)] + [f"{top + 1}+"]

        def freq(a: np.ndarray) -> np.ndarray:
            a = np.asarray(a[~np.isnan(a)] if a.dtype.kind == "f" else a, dtype=np.int64)
            return np.bincount(np.minimum(a, top + 1), minlength=top + 2)[: top + 2]

        rows = {"original": freq(self.original), "released": freq(self.released)}
        if self.inner_released is not None and self.inner_original is not None:
            rows = {"inner_original": freq(self.inner_original), "inner_released": freq(self.inner_released), **rows}
        return pd.DataFrame.from_dict(rows, orient="index", columns=labels)

    def _title(self) -> str:
        return f"PublishedTable ({self.method})"

    @property
    def totals(self) -> tuple[float, float] | None:
        """(original, released) grand total, when the publication has the total cell; None otherwise (NaN released:
        suppressed)."""
        if () not in self.publication.crossings:
            return None
        at = np.flatnonzero(np.asarray(self.publication.crossing) == self.publication.crossings.index(()))
        if not at.size:
            return None
        return float(self.original[at[0]]), float(self.released[at[0]])

    def __repr__(self) -> str:
        return (
            f"PublishedTable(method={self.method!r}, n_published={self.n_published}, changed={self.n_changed}, "
            f"suppressed={self.n_suppressed})"
        )
