"""Cell suppression of published tables: primary rules, then secondary suppression by Gaussian elimination.

:class:`CellSuppression` is the traditional protection statistics offices still publish with, and the
baseline 001 compares the perturbative methods with.  Primary suppression marks the cells that are
sensitive on their own (:mod:`~cellsafe.mechanisms._primary`: the frequency rule on counts, the
(n, k)-dominance and p% rules on magnitude tables); secondary suppression
(:mod:`~cellsafe.mechanisms._gauss`) then withholds further cells until no primary cell can be
computed from what is published, over the whole publication at once, so that every crossing and
hierarchy level is protected together.  The candidates are offered for publication in a documented
priority (largest first, empty cells first), so the pattern is the same on every run.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .._params import Param
from .._random import RNGLike
from .._registry import register
from .._validation import check_integer
from ..exceptions import DataError, InvalidArgumentError
from ..published import (
    MagnitudeTable,
    Publication,
    PublishedTable,
    check_publication_spec,
    magnitude_table,
    publication_for,
)
from ..table import CountTable, Hierarchy, check_table
from ._base import Mechanism
from ._gauss import candidate_order, gauss_secondary
from ._primary import Rule, parse_rule

__all__ = ["CellSuppression", "suppress_cells"]


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
) -> np.ndarray:
    """Suppression status of every published cell: ``'primary'``, ``'secondary'`` or ``''``.

    ``counts`` are the published frequencies; for a magnitude table also ``values`` (sums),
    ``top`` (largest contributions) and ``n_contributors`` (the frequency rule then counts
    contributors).  ``priority`` is what candidates are ordered by, largest first: 'count' or
    'value'.
    """
    parsed = [parse_rule(r) for r in rules]
    counts = np.asarray(counts)
    freq = np.asarray(n_contributors) if n_contributors is not None else counts
    primary = np.zeros(counts.shape[0], dtype=bool)
    for rule in parsed:
        if rule.needs_contributions and (values is None or top is None):
            raise InvalidArgumentError(
                f"rule {str(rule)!r} needs a magnitude table (a value and its contributions); frequency tables take "
                "'freq<=N' rules."
            )
        primary |= rule.sensitive(freq, values, top, protect_zeros)
    weight = values if (priority == "value" and values is not None) else counts
    order = candidate_order(X, weight, zeros_first=not secondary_zeros)
    order = order[~primary[order]]
    secondary, _exposed = gauss_secondary(X, primary, order)
    status = np.full(counts.shape[0], "", dtype=object)
    status[primary] = "primary"
    status[secondary] = "secondary"
    return status


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
    protect_zeros : bool, default False
        The frequency rule also suppresses empty cells.
    secondary_zeros : bool, default False
        Allow empty cells as secondary suppressions (by default they are offered for publication
        first, since a suppressed zero protects nothing once counts are known non-negative).
    priority : {'count', 'value'}, default 'count'
        Candidates are offered for publication largest first by this measure, so the smallest cells
        are the secondary suppressions; ties by position.

    Notes
    -----
    Secondary suppression is Langsrud's (2024) Gaussian elimination over X (inner x published
    cells): candidates are published one by one unless that makes a primary cell a linear
    combination of published cells.  It guarantees that no primary cell is computable exactly;
    :func:`cellsafe.metrics.audit_suppression` computes the intervals an attacker gets when counts
    are also known to be non-negative.  Deterministic: ``rng`` is accepted and ignored.

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

    _params = (
        Param("publication", kind="object", doc="the published cells (formula)"),
        Param("rules", kind="object", default=("freq<=3",), doc="primary rules"),
        Param("protect_zeros", kind="choice", choices=(False, True), default=False, doc="suppress empty cells"),
        Param("secondary_zeros", kind="choice", choices=(False, True), default=False, doc="zeros as secondaries"),
        Param("priority", kind="choice", choices=("count", "value"), default="count", doc="candidate order"),
    )

    def __init__(
        self,
        publication: str | Sequence[Sequence[str]] | Publication,
        *,
        rules: Sequence[str | Rule] = ("freq<=3",),
        protect_zeros: bool = False,
        secondary_zeros: bool = False,
        priority: str = "count",
    ) -> None:
        self.publication = publication
        self.rules = rules
        self.protect_zeros = protect_zeros
        self.secondary_zeros = secondary_zeros
        self.priority = priority
        self._check_params()
        check_publication_spec(publication, "CellSuppression")
        if isinstance(rules, (str, Rule)) or not len(rules):
            raise InvalidArgumentError(
                f"The 'rules' parameter of CellSuppression must be a non-empty list such as ['freq<=3']. Got {rules!r}."
            )
        self.rules_ = tuple(parse_rule(r) for r in rules)

    def sample(self, table: CountTable, m: int = 1, rng: RNGLike = None) -> list[PublishedTable]:
        """The suppressed publication of a frequency table (``m`` identical copies: the method is deterministic)."""
        owner = "CellSuppression.sample"
        check_table(table, owner)
        if not table.is_integer:
            raise DataError("cell suppression of a frequency table needs integer counts; use suppress_magnitude for sums.")
        m = check_integer(m, "m", owner, low=1)
        pub = publication_for(table, self.publication)
        original = pub.aggregate(table)
        status = suppress_cells(
            pub.X, original, self.rules_, protect_zeros=bool(self.protect_zeros), secondary_zeros=bool(self.secondary_zeros)
        )
        return [self._result(pub, original, status, "count") for _ in range(m)]

    def suppress_magnitude(
        self,
        data: Any,
        *,
        variables: Sequence[str] | None = None,
        value: str | None = None,
        contributor: str | None = None,
        hierarchies: Mapping[str, Hierarchy | Sequence[Hierarchy]] | None = None,
    ) -> PublishedTable:
        """The suppressed publication of a magnitude table (sums of ``value``) from records or a MagnitudeTable.

        Parameters
        ----------
        data : MagnitudeTable, path to CSV/Parquet, or DataFrame of records
        variables, value, contributor, hierarchies
            As for :func:`cellsafe.published.magnitude_table` (records only).

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
        status = suppress_cells(
            mt.publication.X,
            mt.counts,
            self.rules_,
            values=mt.values,
            top=top,
            n_contributors=mt.n_contributors,
            protect_zeros=bool(self.protect_zeros),
            secondary_zeros=bool(self.secondary_zeros),
            priority=self.priority,
        )
        return self._result(mt.publication, mt.values, status, mt.value)

    def _result(self, pub: Publication, original: np.ndarray, status: np.ndarray, measure: str) -> PublishedTable:
        released = np.asarray(original, dtype=np.float64).copy()
        released[status != ""] = np.nan
        return PublishedTable(
            publication=pub,
            original=original,
            released=released,
            method="suppress",
            mechanism=repr(self),
            suppression=status,
            measure=measure,
        )
