"""Cell suppression of published tables: primary rules, then secondary suppression by Gaussian elimination.

:class:`CellSuppression` is the traditional protection statistics offices still publish with, and the
baseline 001 compares the perturbative methods with.  Primary suppression marks the cells that are
sensitive on their own (:mod:`~cellsafe.mechanisms._primary`: the frequency rule on counts, the
(n, k)-dominance and p% rules on magnitude tables); secondary suppression
(:mod:`~cellsafe.mechanisms._gauss`) then withholds further cells until no primary cell can be
computed from what is published, over the whole publication at once, so that every crossing and
hierarchy level is protected together.  The candidates are offered for publication in a documented
priority (largest first, empty cells first), so the pattern is the same on every run.

Two further steps keep the promise a magnitude table's rules make (both on by default there):

- *singletons* (:mod:`~cellsafe.mechanisms._singleton`): a contributor alone in a withheld cell
  knows it, so no other contributor's primary may be computable from the published cells and that
  contributor's own; and two primaries of one contributor must not give away their sum;
- *protection levels* (:mod:`~cellsafe.mechanisms._intervals`): every p% or (n, k) primary's
  interval, as an attacker computes it from the published cells and non-negativity (and, with
  singletons, a contributor alone in withheld cells from its own cells too), reaches its required
  upper and lower protection; cells are withheld until it does.

The steps only ever withhold more cells, and withholding more never narrows an interval nor adds
to anyone's knowledge, so each keeps what the earlier ones guaranteed; they repeat until neither
withholds anything new.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from .._catalog import declared
from .._random import RNGLike
from .._registry import register
from .._blas import on_one_blas_thread
from ..exceptions import CellsafeWarning, DataError, InvalidArgumentError
from ..published import (
    MagnitudeTable,
    Publication,
    PublishedTable,
    check_publication_spec,
    magnitude_table,
)
from ..table import CountTable, Hierarchy
from ._base import Mechanism
from ._gauss import candidate_order, gauss_secondary
from ._intervals import protect_intervals
from ._listing import check_listing, frame_magnitude, listed_publication, model_rows
from ._primary import Requirements, Rule, parse_rule, protection_requirements
from ._singleton import singleton_secondary, sole_contributors_of_counts, virtual_primaries

__all__ = ["CellSuppression", "suppress_cells", "cell_mask"]


@on_one_blas_thread
def suppress_cells(
    X: Any,
    counts: np.ndarray,
    rules: Sequence[Rule | str],
    *,
    values: np.ndarray | None = None,
    top: np.ndarray | None = None,
    n_contributors: np.ndarray | None = None,
    protect_zeros: bool = False,
    secondary_zeros: bool = False,
    priority: str = "count",
    intervals: bool | None = None,
    singletons: bool = False,
    sole: np.ndarray | None = None,
    inner_values: np.ndarray | None = None,
    forced: np.ndarray | None = None,
    hidden: np.ndarray | None = None,
    floor: np.ndarray | None = None,
    min_width: float = 0.0,
    progress: bool = False,
) -> np.ndarray:
    """Suppression status of every published cell: ``'primary'``, ``'secondary'`` or ``''``.

    ``X`` (inner x published cells) is the attacker's model the protection is computed on: its rows
    are the inner cells that may be non-empty.  ``counts`` are the published frequencies; for a
    magnitude table also ``values`` (sums), ``top`` (largest contributions) and ``n_contributors``
    (the frequency rule then counts contributors).  ``priority`` is what candidates are ordered by,
    largest first: 'count' or 'value'.  ``intervals`` widens the primaries' intervals to their
    requirements (:func:`~cellsafe.mechanisms.protection_requirements`; default: on for frequency
    tables and for magnitude tables with a p% or (n, k) rule); ``inner_values`` tells whether a
    positive width needs linear programs; ``singletons`` needs ``sole``, each cell's single
    contributor (-1 for none or several).  ``floor`` is the least value the listing reveals of each
    cell (1 for a listing of non-empty cells).  ``forced`` cells are published (a primary among
    them is an error), ``hidden`` ones withheld (status 'secondary' unless primary); both bool
    arrays over the published cells.
    """
    counts = np.asarray(counts)
    n = counts.shape[0]
    freq = np.asarray(n_contributors) if n_contributors is not None else counts
    req = protection_requirements(rules, freq, values, top, protect_zeros=protect_zeros, min_width=min_width)
    primary = req.primary
    forced = np.zeros(n, dtype=bool) if forced is None else np.asarray(forced, dtype=bool)
    hidden = np.zeros(n, dtype=bool) if hidden is None else np.asarray(hidden, dtype=bool) & ~forced
    if np.any(forced & primary):
        raise InvalidArgumentError(
            f"{int(np.sum(forced & primary))} forced cell(s) are primary suppressions (the first is published cell "
            f"{int(np.flatnonzero(forced & primary)[0])}); a sensitive cell cannot be published: drop it from forced."
        )
    weight = values if (priority == "value" and values is not None) else counts
    order = candidate_order(X, weight, zeros_first=not secondary_zeros)
    virtual = None
    XV = X
    if singletons:
        if sole is None:
            raise InvalidArgumentError("singleton protection needs each cell's single contributor (sole=...).")
        virtual = virtual_primaries(X, primary, sole)
        if virtual[0].shape[1]:
            XV = sp.hstack([sp.csc_matrix(X), virtual[0]]).tocsc()
    n_virtual = XV.shape[1] - n
    extra = np.zeros(n_virtual, dtype=bool)
    offer = order[~primary[order] & ~hidden[order]]
    secondary, exposed = gauss_secondary(XV, np.r_[primary, ~extra], offer, forced=np.r_[forced, extra])
    suppressed = primary | hidden | secondary[:n]
    exposed = exposed[:n]
    measure = np.asarray(values if values is not None else counts, dtype=np.float64)
    frequency_table = values is None
    if intervals is None:
        intervals = frequency_table or any(parse_rule(r).needs_contributions for r in rules)
    positive_inner = inner_values is not None and bool(np.all(np.asarray(inner_values) > 0))
    has_floor = floor is not None and bool(np.any(np.asarray(floor) > 0))
    # a positive width follows from the elimination when every inner value is positive and the listing
    # gives no floor (the audit's span test): then only cells with a target need programs
    targeted = np.isfinite(req.upper) & (req.upper > measure) | np.isfinite(req.lower) | (req.width > 0)
    unresolved = np.zeros(n, dtype=bool)
    checked: set[int] = set()  # contributors once checked stay protected as more cells are withheld
    if singletons:
        suppressed, lost, _ = singleton_secondary(X, primary, suppressed, sole, order, forced=forced, virtual=virtual, checked=checked)  # type: ignore[arg-type]  # sole is given with singletons
        exposed |= lost
    while intervals:  # each round withholds a new cell or stops
        before = suppressed.copy()
        every = positive_inner and not has_floor
        check = np.flatnonzero(primary & (targeted | (not every)))
        # the largest requirement first: what it withholds often covers the smaller ones
        check = check[np.lexsort((check, -(np.where(np.isfinite(req.upper), req.upper, 0.0) - measure)[check]))]
        # with a listing floor (or empty inner cells) a withheld cell that is not primary may be pinned
        # too (a margin of 2 over two listed cells): every withheld cell then needs a positive width
        others = np.flatnonzero(suppressed & ~primary) if not every else np.zeros(0, dtype=np.int64)
        suppressed, unresolved, _ = protect_intervals(
            X, measure, suppressed, None, np.r_[check, others], allowed=~forced, cost=np.asarray(weight, dtype=np.float64),
            sole=sole if singletons else None, floor=floor, upper=req.upper, lower=req.lower, width=req.width,
            apart=not frequency_table, guarded=primary, inner=inner_values, progress=progress,
        )
        if not singletons or np.array_equal(before, suppressed):
            break
        before = suppressed.copy()
        suppressed, lost, _ = singleton_secondary(X, primary, suppressed, sole, order, forced=forced, virtual=virtual, checked=checked)  # type: ignore[arg-type]  # sole is given with singletons
        exposed |= lost
        if np.array_equal(before, suppressed):
            break
    if exposed.any() or unresolved.any():
        bad = np.flatnonzero(exposed | unresolved)
        warnings.warn(
            f"{bad.size} primary cell(s) cannot be fully protected: the forced cells (with a contributor's own cells) "
            f"determine them or hold their intervals (the first is published cell {int(bad[0])}); force fewer cells.",
            CellsafeWarning,
            stacklevel=2,
        )
    status = np.full(n, "", dtype=object)
    status[suppressed] = "secondary"
    status[primary] = "primary"
    return status


def cell_mask(publication: Publication, cells: Any, name: str) -> np.ndarray:
    """A bool array over the published cells from a mask, positions, or a frame of cell labels.

    A frame (or a list of dicts) names cells by their variables' categories or aggregate codes; a
    variable it leaves out is the publication's total label (``'Total'``).

    Examples
    --------
    >>> from cellsafe.published import publication_for
    >>> from cellsafe.table import CountTable, Variable
    >>> t = CountTable.from_dense(np.array([[1, 9], [7, 8]]), [Variable("a", ["x", "y"]), Variable("b", ["u", "v"])])
    >>> pub = publication_for(t, "a*b")
    >>> cell_mask(pub, [{"a": "x", "b": "v"}, {"a": "y"}], "forced").nonzero()[0].tolist()
    [2, 6]
    """
    n = publication.n_published
    if cells is None:
        return np.zeros(n, dtype=bool)
    import pandas as pd  # cells given by their categories are a frame

    if isinstance(cells, (list, tuple)) and cells and isinstance(cells[0], Mapping):
        cells = pd.DataFrame(list(cells))
    if isinstance(cells, pd.DataFrame):
        unknown = [c for c in cells.columns if c not in publication.names]
        if unknown:
            raise InvalidArgumentError(
                f"The '{name}' cells name column {unknown[0]!r}, which is not a variable of the publication "
                f"({publication.names})."
            )
        frame = cells.astype(object).copy()
        for v in publication.names:
            if v not in frame.columns:
                frame[v] = publication.total_label
        frame = frame.fillna(publication.total_label)
        frame["__listed"] = 1.0
        return ~np.isnan(publication.align(frame, count="__listed"))
    arr = np.asarray(cells)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise InvalidArgumentError(f"The '{name}' mask must have one entry per published cell ({n}). Got shape {arr.shape}.")
        return arr.copy()
    if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= n):
        raise InvalidArgumentError(
            f"The '{name}' cells must be a bool mask, positions in 0..{n - 1}, or a frame of cell labels. Got {cells!r}."
        )
    out = np.zeros(n, dtype=bool)
    out[arr.astype(np.int64)] = True
    return out


@register("mechanism", "suppress")
class CellSuppression(Mechanism):
    """Primary and secondary cell suppression of a publication (frequency or magnitude tables).

    Parameters
    ----------
    publication : str, list of crossings, or Publication
        The published cells, e.g. ``'region*sex + district*age'`` (a Publication carries
        hierarchies).
    rules : sequence of str, default ('freq<=3',)
        Primary rules: ``'freq<=N'`` (counts 1..N; contributors in a magnitude table), ``'p%=P'``
        (p% rule), ``'nk(n,k)'`` ((n, k)-dominance).  A cell is primary when any rule says so.
    list : {'frame', 'nonzero'}, default 'frame'
        Which cells the release lists.  'frame': every cell of every crossing (each combination of
        the categories and hierarchy codes, empty cells included, less the table's structural
        zeros), so that the listing reveals nothing.  'nonzero': only non-empty cells; the reader
        then knows every listed cell holds at least 1 and every unlisted one nothing, and the
        protection allows for that (a margin of 2 over two listed withheld cells gives both away).
    protect_zeros : bool, default False
        The frequency rule also suppresses empty cells (GaussSuppression's default): an empty primary
        must not be computable, so the empty inner cells beneath it join the attacker's model.
    secondary_zeros : bool, default False
        Allow empty cells as secondary suppressions (by default they are offered for publication
        first; then every empty combination is in the attacker's model, which costs time).
    priority : {'count', 'value'}, default 'count'
        Candidates are offered for publication largest first by this measure, so the smallest cells
        are the secondary suppressions; ties by position.  It is also the cost of the cells withheld
        for protection levels.
    intervals : bool, optional
        Widen every primary's interval to what its rule requires
        (:func:`~cellsafe.mechanisms.protection_requirements`), by linear programs (see
        :func:`~cellsafe.mechanisms.protect_intervals`): the frequency rule ``freq<=T`` asks the
        attacker's upper bound to reach ``T + 1`` (so that no cell nor any derivable sum of
        primaries is known to be within the rule), the p% rule ``(p/100) x1 - (total - x1 - x2)``
        and the (n, k) rule ``(100/k) (x1 + ... + xn) - total`` above and below the value (below:
        at most down to 0); every withheld cell, primary or not, gets a positive width.  Default
        (None): on for frequency tables and for magnitude tables with a p% or (n, k) rule.
    singletons : bool, optional
        Protect against a contributor alone in a withheld cell (module notes of
        :mod:`~cellsafe.mechanisms._singleton`): in a frequency table the one record of a cell of
        count 1.  Default (None): on.
    min_width : float, default 0
        Frequency tables: the least width of every frequency-rule primary's interval, in counts
        (tau-Argus's safety range, GaussSuppression's ``rangeMin``); the rule's own requirement
        (upper bound at least ``T + 1``) already gives a width of at least ``T + 1 - value``.
    forced : optional
        Cells published whatever happens: a bool mask or positions over the published cells, or a
        frame (or list of dicts) of cell labels such as ``[{"region": "N", "sector": "Total"}]``
        (a variable left out is ``Total``).  A forced primary is an error.
    hidden : optional
        Cells withheld whatever happens (as ``forced``); reported as ``'secondary'``.
    secondary : {'gauss', 'optimal'}, default 'gauss'
        How secondary cells are chosen: Gaussian elimination, or the least costly pattern giving every primary its
        protection (:mod:`~cellsafe.mechanisms._optimal`: a HiGHS mixed integer program started from the Gaussian
        pattern; needs ``highspy``, the ``optimal`` extra).  For small tables: it returns the Gaussian pattern with
        a note (the result's ``note``, a warning) when ``time_limit`` runs out before a cheaper pattern is proved.
    cost : 'value', 'cells' or array over the published cells, default 'value'
        What the optimal method minimises: the withheld cells' values (counts or sums), their number, or a cost
        per published cell.
    time_limit : float, default 60
        Seconds the optimal method may take.


    Notes
    -----
    Secondary suppression is Langsrud's (2024) Gaussian elimination over X (inner x published
    cells): candidates are published one by one unless that makes a primary cell a linear
    combination of published cells.  It guarantees that no primary cell is computable exactly;
    the protection levels then take every requirement to the attacker's linear programs, which
    :func:`cellsafe.metrics.audit_suppression` solves independently on the release.  The
    protection is computed against an attacker who also knows which inner cells are empty (the
    rows of X are the non-empty inner cells): a stronger attacker than the reader of the release,
    so what protects against it protects against the reader.  Forced and hidden cells are
    sdcTable's and tau-Argus's "status: safe/unsafe by the user": forced cells are offered for
    publication first and never withheld; hidden cells are never offered.  Deterministic: ``rng``
    is accepted and ignored.

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe.table import CountTable, Variable
    >>> vs = [Variable("a", ["x", "y", "z"]), Variable("b", ["u", "v"])]
    >>> t = CountTable.from_dense(np.array([[1, 9], [7, 8], [6, 5]]), vs)
    >>> [res] = CellSuppression("a*b", rules=["freq<=2"]).sample(t)
    >>> res.to_frame().query("suppression != ''")[["a", "b", "suppression"]].values.tolist()
    [['x', 'u', 'primary'], ['x', 'v', 'secondary'], ['z', 'u', 'secondary'], ['z', 'v', 'secondary']]
    """

    _params = declared("mechanism", "suppress")

    def __init__(
        self,
        publication: str | Sequence[Sequence[str]] | Publication,
        *,
        rules: Sequence[str | Rule] = ("freq<=3",),
        list: str = "frame",  # noqa: A002  the issue's and the command line's name (--list)
        protect_zeros: bool = False,
        secondary_zeros: bool = False,
        priority: str = "count",
        intervals: bool | None = None,
        singletons: bool | None = None,
        min_width: float = 0.0,
        forced: Any = None,
        hidden: Any = None,
        secondary: str = "gauss",
        cost: Any = "value",
        time_limit: float = 60.0,
    ) -> None:
        self.publication = publication
        self.rules = rules
        self.list = list
        self.protect_zeros = protect_zeros
        self.secondary_zeros = secondary_zeros
        self.priority = priority
        self.intervals = intervals
        self.singletons = singletons
        self.min_width = min_width
        self.forced = forced
        self.hidden = hidden
        self.secondary = secondary
        self.cost = cost
        self.time_limit = time_limit
        self._check_params()
        check_listing(list, "CellSuppression")
        check_publication_spec(publication, "CellSuppression")
        if isinstance(rules, (str, Rule)) or not len(rules):
            raise InvalidArgumentError(
                f"The 'rules' parameter of CellSuppression must be a non-empty list such as ['freq<=3']. Got {rules!r}."
            )
        self.rules_ = tuple(parse_rule(r) for r in rules)

    def _check_sample_table(self, table: CountTable) -> None:
        if not table.is_integer:
            raise DataError("cell suppression of a frequency table needs integer counts; use suppress_magnitude for sums.")

    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[PublishedTable]:
        """The suppressed publication of a frequency table (``m`` identical copies: the method is deterministic).

        ``progress=True`` draws a bar on standard error over the protection-level programs (``intervals``).
        The result's publication lists the cells ``list`` says; its ``inner_original`` holds the
        table's counts on the publication's inner cells.
        """
        pub = listed_publication(table, self.publication, self.list)
        original = pub.aggregate(table)
        inner = pub.inner_counts(table)
        req = protection_requirements(self.rules_, original, protect_zeros=bool(self.protect_zeros), min_width=float(self.min_width))
        rows = model_rows(pub, inner, req.primary if self.protect_zeros else None, all_rows=bool(self.secondary_zeros))
        X = pub.X[rows]
        singletons = True if self.singletons is None else bool(self.singletons)
        sole = sole_contributors_of_counts(X, inner[rows]) if singletons else None
        floor = np.where(original > 0, 1.0, 0.0) if self.list == "nonzero" else None
        hidden = cell_mask(pub, self.hidden, "hidden")

        def protect(hidden: np.ndarray) -> np.ndarray:
            return suppress_cells(
                X,
                original,
                self.rules_,
                protect_zeros=bool(self.protect_zeros),
                secondary_zeros=bool(self.secondary_zeros),
                intervals=self.intervals,
                singletons=singletons,
                sole=sole,
                inner_values=inner[rows],
                forced=cell_mask(pub, self.forced, "forced"),
                hidden=hidden,
                floor=floor,
                min_width=float(self.min_width),
                progress=progress,
            )

        status = protect(hidden)
        # the optimal method's attacker knows what the audit's knows: each listed cell at least 1 with list="nonzero"
        status, note = self._optimal(pub, original, status, req, X=X, listed_lower=0.0 if floor is None else floor, sole=sole)
        if self.secondary == "optimal":
            status, note = self._on_top(status, note, protect(hidden | (status == "secondary")))
        return [self._result(pub, original, status, "count", note, inner=inner, requirements=req) for _ in range(m)]

    def suppress_magnitude(
        self,
        data: Any,
        *,
        variables: Sequence[str] | None = None,
        value: str | None = None,
        contributor: str | None = None,
        hierarchies: Mapping[str, Hierarchy | Sequence[Hierarchy]] | None = None,
        progress: bool = False,
    ) -> PublishedTable:
        """The suppressed publication of a magnitude table (sums of ``value``) from records or a MagnitudeTable.

        Parameters
        ----------
        data : MagnitudeTable, path to CSV/Parquet, or DataFrame of records
        variables, value, contributor, hierarchies
            As for :func:`cellsafe.published.magnitude_table` (records only).
        progress : bool, default False
            A bar on standard error over the protection-level programs: two linear programs per
            primary (more against contributors alone in withheld cells), so thousands of primaries
            take minutes to hours (4,500 published cells with 3,000 primaries: about 25 minutes).

        Returns
        -------
        PublishedTable
            ``original`` and ``released`` hold the sums (NaN where suppressed); ``measure`` is the
            value's name.
        """
        if isinstance(data, MagnitudeTable):
            mt = data
        else:
            if variables is None or value is None:
                raise InvalidArgumentError("suppress_magnitude needs variables=[...] and value='column' with records.")
            mt = magnitude_table(data, variables, value, self.publication, contributor=contributor, hierarchies=hierarchies)
        n = max([r.n for r in self.rules_ if r.kind == "nk"] + [2])
        top = mt.top
        if top.shape[1] < n:
            raise InvalidArgumentError(f"the rules need the {n} largest contributions; build the MagnitudeTable with n_top={n}.")
        intervals = any(r.needs_contributions for r in self.rules_) if self.intervals is None else bool(self.intervals)
        singletons = True if self.singletons is None else bool(self.singletons)
        if singletons and mt.largest is None:
            raise InvalidArgumentError(
                "singleton protection needs each cell's largest contributor; build the MagnitudeTable with "
                "magnitude_table(...) or pass singletons=False."
            )
        rows = None
        if self.list == "frame":
            mt, rows = frame_magnitude(mt)
            top = mt.top
        pub = mt.publication
        X = pub.X if rows is None else pub.X[rows]
        sole = np.where(mt.n_contributors == 1, mt.largest, -1) if singletons and mt.largest is not None else None
        hidden = cell_mask(pub, self.hidden, "hidden")

        def protect(hidden: np.ndarray) -> np.ndarray:
            return suppress_cells(
                X,
                mt.counts,
                self.rules_,
                values=mt.values,
                top=top,
                n_contributors=mt.n_contributors,
                protect_zeros=bool(self.protect_zeros),
                secondary_zeros=bool(self.secondary_zeros),
                priority=self.priority,
                intervals=intervals,
                singletons=singletons,
                sole=sole,
                inner_values=mt.inner_values if rows is None or mt.inner_values is None else mt.inner_values[rows],
                forced=cell_mask(pub, self.forced, "forced"),
                hidden=hidden,
                progress=progress,
            )

        status = protect(hidden)
        req = protection_requirements(self.rules_, mt.n_contributors, mt.values, top)
        status, note = self._optimal(pub, mt.values, status, req, X=X, listed_lower=0.0, sole=sole, apart=True)
        if self.secondary == "optimal":
            status, note = self._on_top(status, note, protect(hidden | (status == "secondary")))
        return self._result(mt.publication, mt.values, status, mt.value, note, inner=mt.inner_values, requirements=req, sole=sole)

    def _optimal(self, pub: Publication, values: np.ndarray, status: np.ndarray, req: Requirements, *, X: Any,
                 listed_lower: Any, sole: Any = None, apart: bool = False) -> tuple[np.ndarray, str]:
        """The optimal pattern from the Gaussian one (``secondary='optimal'``), and its note; the status unchanged
        otherwise.  ``X``: the protection's model; ``req``: every primary's requirements (its targets); ``listed_lower``:
        the least value the listing reveals of each cell; with ``sole`` (singletons) every primary keeps its
        protection against each contributor alone in cells too (``apart``: magnitude tables)."""
        if self.secondary != "optimal":
            return status, ""
        from ._optimal import optimal_secondary

        primary = status == "primary"
        forced = cell_mask(pub, self.forced, "forced")
        if not self.secondary_zeros:  # empty cells are never secondary suppressions, as for the Gaussian method
            forced |= (np.asarray(values) == 0) & ~primary
        res = optimal_secondary(
            X, values, primary, req.upper, req.lower, req.width, start=status != "", cost=self.cost,
            forced=forced, hidden=cell_mask(pub, self.hidden, "hidden"),
            listed_lower=listed_lower, sole=sole, apart=apart, time_limit=float(self.time_limit),
        )
        self.optimal_ = res
        if res.note:
            warnings.warn(f"optimal secondary suppression: {res.note}", CellsafeWarning, stacklevel=3)
        out = np.full(status.shape[0], "", dtype=object)
        out[res.suppressed] = "secondary"
        out[primary] = "primary"
        return out, res.note

    @staticmethod
    def _on_top(optimal: np.ndarray, note: str, status: np.ndarray) -> tuple[np.ndarray, str]:
        """The status after the Gaussian method's steps ran on top of the optimal pattern (``status``): what the
        optimal program does not model (a positive width for every withheld cell, primaries without an interval
        target) withholds more; the note then says how many cells that added."""
        extra = int(np.sum((status != "") & (optimal == "")))
        if extra:
            more = (f"{extra} cell(s) withheld on top of the least costly pattern (every withheld cell needs a positive "
                    "width, which the optimal program does not model)")
            note = f"{note}; {more}" if note else more
        return status, note

    def _result(
        self, pub: Publication, original: np.ndarray, status: np.ndarray, measure: str, note: str = "", *,
        inner: Any = None, requirements: Any = None, sole: Any = None,
    ) -> PublishedTable:
        released = np.asarray(original, dtype=np.float64).copy()
        released[status != ""] = np.nan
        return PublishedTable(
            publication=pub,
            original=original,
            released=released,
            method="suppress",
            mechanism=repr(self),
            inner_original=inner,
            suppression=status,
            measure=measure,
            requirements=requirements,
            listing=self.list,
            sole=sole,
            note=note,
        )
