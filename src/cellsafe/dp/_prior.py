"""How much of a fixed-total DP release is prior: the prior's weight against the data's.

The fixed-total synthesizers buy their epsilon with a prior: alpha pseudo-counts per cell for the
multinomial-Dirichlet synthesizer (004 eq. 5), shapes a_i for the Poisson-gamma one.  When the
prior outweighs the records, the release is mostly prior (near uniform, or near the prior rates)
and says little about the data.  :func:`prior_weight` states it before anything is released: the
prior's total weight, the number of records, and the Hellinger utility (001 eq. 4) of the expected
release against the original counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._results import Result
from ..exceptions import InvalidArgumentError
from ..mechanisms import MultinomialDirichletSynthesizer, PoissonGammaSynthesizer
from ..table import CountTable

__all__ = ["PriorWeight", "prior_weight"]


@dataclass(frozen=True)
class PriorWeight(Result):
    """The prior's weight against the data's, and the utility of the expected release.

    Attributes
    ----------
    prior : float
        Total prior weight in pseudo-records (sum of alpha, or of the shapes a_i, over the cells).
    data : int
        Records (the table's total).
    utility : float
        Hellinger utility 1 - HD(y, E z) / sqrt(n) of the expected release E z (001 eq. 4).
    """

    prior: float
    data: int
    utility: float

    @property
    def prior_dominates(self) -> bool:
        """Whether the prior weighs more than the records."""
        return self.prior > self.data

    def to_dict(self) -> dict[str, Any]:
        return {"prior": self.prior, "data": int(self.data), "utility": self.utility, "prior_dominates": self.prior_dominates}


def _utility(y: np.ndarray, expected: np.ndarray, n_other: int, expected_other: float, total: int) -> float:
    """Hellinger utility over the listed cells plus ``n_other`` empty cells each expecting ``expected_other``."""
    s = float(np.sum((np.sqrt(y) - np.sqrt(expected)) ** 2)) + n_other * expected_other
    return 1.0 - math.sqrt(0.5 * s) / math.sqrt(total)


def prior_weight(synthesizer: Any, table: CountTable) -> PriorWeight:
    """The prior's weight, the data's, and the Hellinger utility of the expected release.

    Parameters
    ----------
    synthesizer : MultinomialDirichletSynthesizer or PoissonGammaSynthesizer
    table : CountTable
        The confidential table.

    Notes
    -----
    Multinomial-Dirichlet: E z_i = n (y_i + alpha_i) / (n + A), A the sum of alpha over the
    non-structural cells (004 eq. 2), exactly.  Poisson-gamma: the posterior predictive means
    (y_i + a_i) q_i / (1 - q_i) of 004 eq. 8, scaled to the total n (the law conditioned on the
    total has nearly these means when the cells are many).  The cells without records enter in
    closed form (their expected counts are equal, or summed), never one by one for the Dirichlet.

    Examples
    --------
    >>> from cellsafe import CountTable, Variable
    >>> t = CountTable([Variable("a", ("x", "y", "z", "w"))], [0, 1], [6, 2])
    >>> w = prior_weight(MultinomialDirichletSynthesizer(alpha=4.0), t)
    >>> w.prior, w.data, w.prior_dominates
    (16.0, 8, True)
    """
    n = int(table.total)
    if n <= 0:
        raise InvalidArgumentError("prior_weight needs a table with at least one record.")
    if isinstance(synthesizer, MultinomialDirichletSynthesizer):
        k = table.n_cells - table.n_structural_zeros
        if np.ndim(synthesizer.alpha) == 0:
            a = float(synthesizer.alpha)
            big_a = a * k
            y = table.counts.astype(float)
            e = n * (y + a) / (n + big_a)
            util = _utility(y, e, k - y.shape[0], n * a / (n + big_a), n)
            return PriorWeight(big_a, n, util)
        alpha = np.asarray(synthesizer.alpha, dtype=float).copy()
        if table.n_structural_zeros:
            alpha[table.structural_zeros] = 0.0
        y = np.zeros(table.n_cells)
        y[table.index] = table.counts
        big_a = float(alpha.sum())
        e = n * (y + alpha) / (n + big_a)
        return PriorWeight(big_a, n, _utility(y, e, 0, 0.0, n))
    if isinstance(synthesizer, PoissonGammaSynthesizer):
        cells = synthesizer._cells(table, "prior_weight")
        r, q = synthesizer._nb_parameters(cells)
        mean = r * q / (1.0 - q)
        e = n * mean / mean.sum()
        return PriorWeight(float(cells.a.sum()), n, _utility(cells.y.astype(float), e, 0, 0.0, n))
    raise InvalidArgumentError(
        "prior_weight applies to MultinomialDirichletSynthesizer and PoissonGammaSynthesizer. "
        f"Got {type(synthesizer).__name__} instead."
    )
