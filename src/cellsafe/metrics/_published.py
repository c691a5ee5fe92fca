"""Fair comparison of protected published tables (001 sections 5-7).

A published table protected by the cell key method is not additive and one protected by
suppression has holes; comparing their raw cells with the original favours some methods over
others.  :func:`compare_published` post-processes every published table the same way, as 001
does: additivity restored by least squares where needed (001 section 5, eq. 1), expected inner
frequencies by IPF from the restored cells (001 section 7), then the Hellinger utility (001 eqs.
3-4) of the published and restored cells and the F-beta disclosure risk (001 section 6, eq. 5) of
the expected inner table, plain and "know yourself" (001 Table 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._results import Result
from ..exceptions import DataError, InvalidArgumentError
from ..fitting import expected_inner, restore_additivity
from ..published import DEFAULT_MAX_INNER, Publication, PublishedTable
from ..table import CountTable, check_table
from ._disclosure import DisclosureRisk, disclosure_risk
from ._hellinger import hellinger_utility

__all__ = ["PublishedComparison", "compare_published", "release_publication"]

_OWNER = "compare_published"


def _number(x: Any) -> float | None:
    """A float for JSON, None for NaN (an undefined precision or recall)."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _records(frame: pd.DataFrame) -> list[dict]:
    recs = frame.to_dict(orient="records")
    for r in recs:
        r["count"] = _number(r["count"])
    return recs


def _risk_dict(r: DisclosureRisk) -> dict:
    probs = r.protected.to_frame()
    probs["probability"] = probs["probability"].astype(object).where(probs["probability"].notna(), None)
    return {
        "a": r.a,
        "b": r.b,
        "c": r.c,
        "f_beta": r.f_beta,
        "precision": _number(r.precision),
        "recall": _number(r.recall),
        "probabilities": probs.to_dict(orient="records"),
    }


@dataclass(frozen=True, eq=False)
class PublishedComparison(Result):
    """Utility and risk of one protected published table, after the common post-processing.

    Attributes
    ----------
    publication : Publication
        The published cells.
    published : ndarray of float64
        The protected published counts, aligned with the published cells (NaN where suppressed).
    restored : ndarray of float64
        The published counts after additivity restoration (``published`` itself when it was
        already additive and complete).
    additive : bool
        Whether the published counts were complete, non-negative and additive.
    hellinger_published, hellinger_restored : float
        Hellinger utility (001 eq. 4) of the published counts (suppressed cells as 0) and of the
        restored ones, against the original published counts.
    risk, risk_know_yourself : DisclosureRisk
        F-beta disclosure risk of the expected inner frequencies (001 eq. 5), plain and with the
        intruder removing himself first (001 Table 10).
    expected_inner : CountTable
        Expected inner frequencies fitted by IPF to the restored published counts.
    """

    publication: Publication = field(repr=False)
    published: np.ndarray = field(repr=False)
    restored: np.ndarray = field(repr=False)
    additive: bool
    hellinger_published: float
    hellinger_restored: float
    risk: DisclosureRisk
    risk_know_yourself: DisclosureRisk
    expected_inner: CountTable = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain Python values (what ``cellsafe compare --json`` prints per table)."""
        exp_frame = self.expected_inner.to_frame(zeros=True)
        for v in self.publication.variables:
            exp_frame[v.name] = exp_frame[v.name].astype(object)
        return {
            "additive": bool(self.additive),
            "hellinger_utility": {"published": self.hellinger_published, "restored": self.hellinger_restored},
            "risk": {"plain": _risk_dict(self.risk), "know_yourself": _risk_dict(self.risk_know_yourself)},
            "restored": _records(self.publication.frame(self.restored)),
            "expected_inner": _records(exp_frame),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per published cell: its categories ('Total' where aggregated), published and restored counts."""
        out = self.publication.frame(self.published, name="published")
        out["restored"] = self.restored
        return out

    def summary(self) -> str:
        """Utility, then for each risk the exact disclosures, F-beta and each quasi-identifier cell's guess."""
        lines = [
            f"additive={self.additive}  Hellinger utility published={self.hellinger_published:.4f} "
            f"restored={self.hellinger_restored:.4f}"
        ]
        for kind, r in (("plain", self.risk), ("know_yourself", self.risk_know_yourself)):
            lines.append(f"  risk ({kind}): a={r.a} b={r.b} c={r.c}  F_beta={r.f_beta:.4f}")
            keys, sensitive = r.protected.keys, r.protected.sensitive
            for row in r.protected.to_frame().to_dict(orient="records"):
                cell = ", ".join(f"{key}={row[key]}" for key in keys)
                p = row["probability"]  # NaN: nobody left to guess from (know_yourself)
                shown = "n/a" if p is None or math.isnan(p) else f"{p:.4f}"
                lines.append(f"    {cell}: {shown} ({sensitive}={row['guess']})")
        return "\n".join(lines)


def release_publication(table: CountTable, frame: pd.DataFrame, formula: Any, hierarchies: Any = None) -> Publication:
    """The publication a released file holds: the cells of ``formula`` over ``table``, with the empty combinations
    of the variables only when the file lists them.

    The cell key method publishes the empty combinations (released 0) where they fit; small count rounding and
    cell suppression publish the non-empty cells unless asked (``--zeros``).  Reading a file of the latter on the
    former's cells would count every combination it never wrote as withheld, and make an additive release look
    non-additive.

    Examples
    --------
    >>> df = pd.DataFrame({"s": ["a", "a", "b"], "q": ["x", "y", "x"], "n": [3, 1, 2]})
    >>> t = CountTable.from_frame(df, ["s", "q"], count="n")
    >>> rows = Publication.from_formula(t, "s*q").cells().assign(count=1.0)
    >>> release_publication(t, rows, "s*q").n_published   # (b, y) is empty and not in the file
    8
    """
    plain = Publication.from_formula(table, formula, hierarchies=hierarchies or None, zeros=None)
    if table.n_cells - table.n_structural_zeros > DEFAULT_MAX_INNER:
        return plain
    try:
        plain.align(frame.assign(__listed=1.0), count="__listed")  # every row a cell of the non-empty combinations?
    except DataError:  # no: the file lists empty combinations (or is wrong, and the full publication says how)
        return Publication.from_formula(table, formula, hierarchies=hierarchies or None, zeros=True)
    return plain


def compare_published(
    table: CountTable,
    published: Any,
    sensitive: str,
    keys: str | Sequence[str],
    *,
    publication: Publication | None = None,
    formula: Any = None,
    hierarchies: Any = None,
    beta: float = 0.5,
) -> PublishedComparison:
    """Compare a protected published table with the original, after 001's common post-processing.

    Parameters
    ----------
    table : CountTable
        The original inner table (integer counts).
    published : PublishedTable, DataFrame or array_like
        The protected published counts: a :class:`~cellsafe.published.PublishedTable` (from the
        cell key method or small count rounding), a long-format frame (one column per variable,
        a category or 'Total', and 'count', empty where suppressed), or values aligned with the
        publication's published cells (NaN where suppressed).
    sensitive : str
        The sensitive variable.
    keys : str or sequence of str
        The quasi-identifiers.
    publication : Publication, optional
        The published cells; taken from ``published`` when it is a PublishedTable.
    formula : str, optional
        Instead of ``publication``, for a frame: the published crossings ('a*b + a*c'), with
        ``hierarchies``; the publication is then the one the frame holds (:func:`release_publication`:
        the empty combinations only when the frame lists them), as ``cellsafe compare`` reads a file.
    hierarchies : mapping, optional
        Hierarchies of variables, with ``formula``.
    beta : float, default 0.5
        Weight of recall in the F-beta risk.

    Returns
    -------
    PublishedComparison

    Notes
    -----
    Published counts that are incomplete, negative or not additive are restored by least squares
    (:func:`cellsafe.fitting.restore_additivity`, 001 section 5); the expected inner frequencies
    are fitted by IPF (:func:`cellsafe.fitting.expected_inner`, 001 section 7), and the risk is
    computed on them (001 section 6, eq. 5).  Utility compares published cells (001 eqs. 3-4),
    with suppressed cells counted as 0 before restoration.  Every method's output goes through the
    same steps, which is what makes the comparison fair.

    Examples
    --------
    >>> import pandas as pd
    >>> from cellsafe.published import Publication
    >>> df = pd.DataFrame({"s": ["a", "a", "b", "b"], "q": ["x", "y", "x", "y"], "n": [3, 1, 2, 4]})
    >>> t = CountTable.from_frame(df, ["s", "q"], count="n")
    >>> pub = Publication.from_formula(t, "s + q")
    >>> res = compare_published(t, pub.aggregate(t), "s", ["q"], publication=pub)
    >>> res.additive, round(res.hellinger_restored, 6)
    (True, 1.0)
    >>> res.risk.a, res.risk.f_beta
    (0, 0.0)
    """
    check_table(table, _OWNER)
    if isinstance(published, PublishedTable):
        if publication is None:
            publication = published.publication
        values = np.asarray(published.released, dtype=np.float64)
    elif publication is None and formula is not None and isinstance(published, pd.DataFrame):
        publication = release_publication(table, published, formula, hierarchies)
        values = publication.align(published)
    elif publication is None:
        raise InvalidArgumentError(
            f"The 'publication' parameter of {_OWNER} is needed when 'published' is not a PublishedTable. "
            "Got None instead; pass formula= (the published crossings) or Publication.from_formula(table, formula)."
        )
    elif isinstance(published, pd.DataFrame):
        values = publication.align(published)
    else:
        values = np.asarray(published, dtype=np.float64)
    if not isinstance(publication, Publication):
        raise InvalidArgumentError(
            f"The 'publication' parameter of {_OWNER} must be a cellsafe Publication. "
            f"Got {type(publication).__name__} instead."
        )
    if values.shape != (publication.n_published,):
        raise DataError(
            f"{_OWNER}: the published counts have shape {values.shape}, but the publication has "
            f"{publication.n_published} published cells; align them with Publication.align(frame)."
        )
    keys = [keys] if isinstance(keys, str) else list(keys)
    original = publication.aggregate(table).astype(np.float64)
    total = float(original.sum())
    observed = ~np.isnan(values)
    additive = bool(
        observed.all() and np.all(values >= 0) and publication.additivity_error(values) <= 1e-9 * max(1.0, total)
    )
    restored = values if additive else restore_additivity(publication.X, values).fitted
    fit = expected_inner(publication, restored)
    return PublishedComparison(
        publication=publication,
        published=values,
        restored=np.asarray(restored, dtype=np.float64),
        additive=additive,
        hellinger_published=hellinger_utility(original, np.where(observed, values, 0.0)),
        hellinger_restored=hellinger_utility(original, restored),
        risk=disclosure_risk(table, fit.fitted, sensitive, keys, beta=beta),
        risk_know_yourself=disclosure_risk(table, fit.fitted, sensitive, keys, beta=beta, know_yourself=True),
        expected_inner=fit.fitted,
    )
