"""A priori risk and utility of a cell-wise mechanism, known before any data are released.

A cell-wise mechanism treats all cells of equal count alike, so every expected metric depends on
the table only through its **cell-size distribution**: the number of (non-structural) cells w_j
with each count j, as given by :meth:`cellsafe.CountTable.cell_sizes`.  With the mechanism's
transition probabilities P(k | j) (:class:`cellsafe.mechanisms.CellwiseMechanism`) this module
computes, as sums over the distinct counts j weighted by w_j (never cell by cell):

- :func:`tau`: tau1(k) .. tau4(k) of 003 section 3.3;
- :func:`expected_squared_error`: L1 of 000 section 3.4.2, per implicate and for the mean of m;
- :func:`total_distribution`: mean and sd of the synthetic grand total, P(|n_syn - n| < d);
- :func:`expected_hellinger`: expected Hellinger distance and utility (001 eqs. 3-4);
- :func:`expected_within`: expected share of cells within p% of the original (003 Table 3);
- :func:`transition_table` / :func:`reverse_transition_table`: P(k | j) and P(j | k) for plots
  (000 Figures 4 and 5);
- :func:`assess`: all of the above in one frozen :class:`Assessment`.

Only the :class:`~cellsafe.mechanisms.CellwiseMechanism` interface is used, so the same code
serves the saturated synthesizer, a cell key ptable or any other cell-wise mechanism.  Sums over
whole rows of P(k | j) (Hellinger) are term by term over a window holding all but ``2 tol``
(1e-12 each side) of the mass when it spans at most 4096 counts; wider, heavy-tailed rows
(large sigma and large j) use a geometric-grid quadrature of the pmf, relative error about
1e-5.  tau, the squared error and the total need no row sums at all; the share within p% sums
the pmf over its window.  Only the pmf, mean and variance are called (the sf only when the
windows of 'within p%' hold more than 4 million counts), so a mechanism whose sf is slow does
not slow these down.
"""

from __future__ import annotations

# The private names are shared with cellsafe.tuning, cellsafe.report and the tests.
from ._assess import Assessment, assess
from ._marginal import MarginalAccuracy, marginal_error
from ._risk import _tau_frame, reverse_transition_table, tau, transition_table  # noqa: F401
from ._rows import TAIL_TOL, _row_sums  # noqa: F401
from ._sizes import DEFAULT_K, DEFAULT_P, CellSizes, _check_mechanism, cell_sizes  # noqa: F401
from ._sizes import _check_mechanism as check_mechanism
from ._utility import (
    ExpectedHellinger,
    SquaredError,
    TotalDistribution,
    _hellinger,  # noqa: F401
    _squared_error,  # noqa: F401
    _within,  # noqa: F401
    _within_bounds,  # noqa: F401
    expected_hellinger,
    expected_squared_error,
    expected_within,
    total_distribution,
)

__all__ = [
    "MarginalAccuracy",
    "marginal_error",
    "CellSizes",
    "cell_sizes",
    "check_mechanism",
    "tau",
    "expected_squared_error",
    "SquaredError",
    "total_distribution",
    "TotalDistribution",
    "expected_hellinger",
    "ExpectedHellinger",
    "expected_within",
    "transition_table",
    "reverse_transition_table",
    "assess",
    "Assessment",
    "DEFAULT_K",
    "DEFAULT_P",
]
