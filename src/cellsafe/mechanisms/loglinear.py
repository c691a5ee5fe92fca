"""Smoothed synthesis from a log-linear model.

:class:`LogLinearSynthesizer` replaces the saturated model's means (the original counts) by the
fitted values of a non-saturated log-linear model (for example all two-way interactions), fitted
by :func:`cellsafe.fitting.ipf`, and then draws each cell from a count distribution around its
fitted mean, exactly as :class:`~cellsafe.mechanisms.saturated.SaturatedSynthesizer` does around
the original counts (Graham and Penny; synthpop's ``syn.ipf``; methods.md section 5).
"""

from __future__ import annotations

from typing import Any

from .._catalog import declared
from .._random import RNGLike
from .._registry import register
from .._validation import check_integer, check_real
from ..distributions import CountDistribution
from ..exceptions import InvalidArgumentError
from ..fitting import ipf
from ..formula import Formula, parse_formula
from ..table import CountTable, check_table
from ._base import Mechanism
from .saturated import SaturatedSynthesizer

__all__ = ["LogLinearSynthesizer"]


@register("mechanism", "loglinear")
class LogLinearSynthesizer(Mechanism):
    """Synthesize a table from the fitted values of a hierarchical log-linear model.

    Parameters
    ----------
    margins : str or sequence of sequence of str
        The model: a formula such as ``'(geography + ethnicity + sex + age + language)^2'`` or
        its generating margins (``[['a', 'b'], ['b', 'c']]``).
    distribution : CountDistribution
        The noise: ``Poisson()``, ``NBI(sigma)``, ``PIG(sigma)`` or ``GAF(sigma, nu)``.
    alpha : float, default 0
        Mean used for cells whose fitted value is zero (cells in a zero margin).  Structural zeros
        never change.
    tol : float, default 1e-8
        IPF tolerance (relative to the grand total).
    max_iter : int, default 1000
        IPF cycle cap.

    Notes
    -----
    ``mu`` = IPF fit of the model to the table's margins (the Poisson maximum-likelihood fitted
    values, which reproduce the model's margins exactly), then ``f_i^syn ~ D(mu_i)`` independently.
    With the saturated model (all variables in one margin) this is the saturated synthesizer.

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.table import CountTable, Variable
    >>> v = [Variable("a", ["x", "y"]), Variable("b", ["u", "v"])]
    >>> t = CountTable.from_dense(np.array([[10, 20], [30, 40]]), v)
    >>> [s] = LogLinearSynthesizer("a + b", Poisson()).sample(t, rng=1)
    >>> s.shape
    (2, 2)
    """

    _params = declared("mechanism", "loglinear")

    def __init__(
        self,
        margins: Any,
        distribution: CountDistribution,
        alpha: float = 0.0,
        *,
        tol: float = 1e-8,
        max_iter: int = 1000,
    ) -> None:
        if not isinstance(distribution, CountDistribution):
            raise InvalidArgumentError(
                "The 'distribution' parameter of LogLinearSynthesizer must be a cellsafe count distribution "
                f"(Poisson(), NBI(sigma), PIG(sigma) or GAF(sigma, nu)). Got {distribution!r} instead."
            )
        if isinstance(margins, (str, Formula)):
            parse_formula(margins)  # syntax errors early; names are checked against the table in sample
        elif not isinstance(margins, (list, tuple)) or not margins:
            raise InvalidArgumentError(
                "The 'margins' parameter of LogLinearSynthesizer must be a formula such as 'a*b + b*c' or a "
                f"non-empty list of lists of variable names. Got {margins!r} instead."
            )
        check_real(alpha, "alpha", "LogLinearSynthesizer", low=0.0)
        check_real(tol, "tol", "LogLinearSynthesizer", low=0.0, low_open=True)
        check_integer(max_iter, "max_iter", "LogLinearSynthesizer", low=1)
        self.margins = margins
        self.distribution = distribution
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter


    def expected(self, table: CountTable) -> CountTable:
        """The model's fitted values ``mu`` for ``table`` (a CountTable of float counts)."""
        check_table(table, "LogLinearSynthesizer.expected")
        return ipf(table, self.margins, tol=self.tol, max_iter=self.max_iter).fitted

    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[CountTable]:
        """``m`` synthetic tables: integer tables on the original's variables and structural zeros."""
        mu = self.expected(table)
        return SaturatedSynthesizer(self.distribution, alpha=self.alpha).sample(mu, m=m, rng=rng, progress=progress)
