"""A differentially private publication of counts over a hierarchy, planned from public choices.

:func:`plan_hierarchical_counts` is the statistics of ``cellsafe dp-publish`` as a library function:
it counts the records on the public domain (the hierarchy's leaves are the public categories of
its variable), calibrates :class:`cellsafe.mechanisms.TopDownNoise`, and states the release's
privacy loss under the neighbour relation and its a priori error per level, before anything is
drawn.  The command line charges :attr:`HierarchicalPlan.loss` to the ledger, draws
:meth:`HierarchicalPlan.release` and writes it with :attr:`HierarchicalPlan.description`.

What is public: the domain and the hierarchy (given by the caller), the mechanism's parameters, and
what follows from them alone: the noise of every level and the a priori error of every level.
Every cell of every level is released with noise, the grand total included, so records left out
by ``outside="drop"`` cannot be counted from the release.  What is the custodian's: the records left
out, and the observed error of the release against the confidential counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .._privacy import REPLACE_ONE, PrivacyLoss
from .._random import RNGLike
from .._results import Result
from ..exceptions import InvalidArgumentError
from ..mechanisms.topdown import TopDownNoise
from ..published import PublishedTable
from ..table import CountTable, Domain, Hierarchy

__all__ = ["HierarchicalPlan", "plan_hierarchical_counts"]


@dataclass(frozen=True)
class HierarchicalPlan(Result):
    """A planned DP publication of every level of a hierarchy (see :func:`plan_hierarchical_counts`).

    Attributes
    ----------
    mechanism : TopDownNoise
        The calibrated mechanism.
    table : CountTable
        The confidential counts on the public domain (never written).
    loss : PrivacyLoss
        The release's privacy loss under ``relation``.
    description : dict
        What may be published with the release: parameters, noise and a priori error per level.
    custodian : dict
        Facts about the confidential data for the custodian's record only (records left out).
    notices : tuple of str
        Messages for the custodian.
    """

    mechanism: TopDownNoise = field(repr=False)
    table: CountTable = field(repr=False)
    loss: PrivacyLoss
    description: dict[str, Any] = field(repr=False)
    custodian: dict[str, Any] = field(default_factory=dict, repr=False)
    notices: tuple[str, ...] = ()

    def release(self, rng: RNGLike = None) -> PublishedTable:
        """Draw the release (it costs :attr:`loss`; charge it first)."""
        [out] = self.mechanism.sample(self.table, rng=rng)
        return out

    def observed_errors(self, release: PublishedTable) -> dict[str, Any]:
        """The release's error per level against the confidential counts: for the custodian only."""
        return {"observed_errors": self.mechanism.level_errors(release).to_dict(orient="records"), **self.custodian}

    def to_dict(self) -> dict[str, Any]:
        return {"description": self.description, "loss": self.loss.to_dict(), "notices": list(self.notices)}

    def summary(self) -> str:
        levels = ", ".join(f"{lv['level']} {lv['expected_rmse']:.3g}" for lv in self.description["levels"])
        return (
            f"topdown ({self.mechanism.noise}): every level of {self.mechanism.variable!r}, epsilon "
            f"{self.loss.epsilon:.4g} ({self.loss.relation}); a priori RMSE per cell: {levels}"
        )


def plan_hierarchical_counts(
    source: Any,
    domain: Domain | None,
    hierarchy: Hierarchy,
    *,
    variable: str,
    variables: Sequence[str] | None = None,
    epsilon: float,
    delta: float | None = None,
    noise: str = "discrete-gaussian",
    split: Sequence[float] | None = None,
    relation: str = REPLACE_ONE,
    count: str | None = None,
    outside: str = "error",
) -> HierarchicalPlan:
    """Plan a DP publication of counts at every level of ``hierarchy``, consistent and integral.

    Parameters
    ----------
    source : DataFrame, CountTable or path to a CSV or Parquet file
        Records, or a frequency table with ``count``.
    domain : Domain or None
        The public categories of the other variables (and of ``variable``, which must then equal
        the hierarchy's leaves; by default the leaves are its categories). None when the
        hierarchy's variable is the only one.
    hierarchy : Hierarchy
        Nested levels of ``variable`` (public).
    variable : str
        The variable the hierarchy groups.
    variables : sequence of str, optional
        The variables crossed with every level (default: the domain's other variables).
    epsilon, delta, noise, split, relation
        As for :class:`~cellsafe.mechanisms.TopDownNoise`; ``relation`` is the ledger's.
    count : str, optional
        The frequency column of a frequency table.
    outside : {'error', 'drop'}
        Records with a category outside the domain.

    Returns
    -------
    HierarchicalPlan

    Examples
    --------
    >>> import pandas as pd, cellsafe
    >>> h = cellsafe.Hierarchy.from_groups({"N": ["a", "b"], "S": ["c"]}, level="region")
    >>> records = pd.DataFrame({"area": list("aabcc"), "sex": list("FMFFM")})
    >>> plan = plan_hierarchical_counts(records, cellsafe.Domain({"sex": ["F", "M"]}), h, variable="area",
    ...                                 epsilon=1.0, noise="geometric")
    >>> [lv["level"] for lv in plan.description["levels"]]
    ['Total', 'region', 'area']
    >>> release = plan.release(rng=1)
    >>> bool((release.publication.X.T @ release.inner_released == release.released).all())   # additive
    True
    """
    if domain is not None and not isinstance(domain, Domain):
        raise InvalidArgumentError(f"domain must be a cellsafe.Domain (the public categories). Got {type(domain).__name__}.")
    if not isinstance(hierarchy, Hierarchy):
        raise InvalidArgumentError(f"hierarchy must be a cellsafe.Hierarchy. Got {type(hierarchy).__name__}.")
    cats = {} if domain is None else domain.to_dict()
    if variable not in cats:
        cats = {variable: list(hierarchy.leaves), **cats}
    full = Domain(cats)
    names = [variable, *(variables if variables is not None else [n for n in full.names if n != variable])]
    if variables is not None and variable in variables:
        raise InvalidArgumentError(f"variables lists {variable!r}, the hierarchy's variable; list the others only.")
    mech = TopDownNoise(variable, hierarchy, epsilon, delta, noise=noise, split=split, relation=relation)
    if isinstance(source, CountTable):
        table, dropped = full.select(names).adopt(source), 0
    else:
        table, dropped = full.table(source, names, count=count, outside=outside)
    loss = mech.privacy_loss(relation, delta=mech.stated_delta)
    expected = mech.expected_errors(table)
    description = {
        "mechanism": "topdown",
        "noise": noise,
        "relation": relation,
        "epsilon": epsilon,
        "delta": loss.delta,
        "rho": loss.rho,
        "loss": loss.to_dict(),
        "variable": variable,
        "variables": names[1:],
        "split": [float(s) for s in mech._shares],
        "levels": [
            {"level": str(r.level), "cells": int(r.cells), "noise_sd": float(r.noise_sd), "expected_rmse": float(r.expected_rmse)}
            for r in expected.itertuples()
        ],
        "outside": outside,
        "domain_sha256": full.select(names).sha256,
        "post_processing": "least squares over the hierarchy, then non-negative integers that add up at every level",
    }
    notices = []
    custodian: dict[str, Any] = {}
    if dropped:
        custodian["records_left_out"] = int(dropped)
        notices.append(f"{dropped:,} record(s) outside the domain were left out (not published: the total is noisy)")
    return HierarchicalPlan(mechanism=mech, table=table, loss=loss, description=description, custodian=custodian,
                            notices=tuple(notices))
