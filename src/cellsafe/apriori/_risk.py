"""Risk: the tau metrics and the transition tables P(k | j), P(j | k) (003 section 3.3, 000 Figures 4-5)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._frames import MetricGrid, pd
from .._validation import check_integer
from ..mechanisms import CellwiseMechanism
from ._sizes import DEFAULT_K, CellSizes, _check_counts, _check_mechanism, cell_sizes


def tau(table_or_cell_sizes: Any, mechanism: CellwiseMechanism, k: Any = DEFAULT_K) -> pd.DataFrame:
    """Expected tau1(k) .. tau4(k) of a cell-wise mechanism (003 section 3.3).

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
        The original table or its cell-size distribution (count -> number of cells).
    mechanism : CellwiseMechanism
        For example ``SaturatedSynthesizer(NBI(sigma=1), alpha=0.02)``.
    k : int or sequence of int, default (0, 1, 2, 3)
        Counts to report (non-negative).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``k`` with columns ``tau1`` (share of released cells equal to k), ``tau2``
        (share of original cells equal to k), ``tau3`` (P(released k | original k)) and
        ``tau4`` (P(original k | released k); NaN where no cell is expected to be released as k).

    Notes
    -----
    tau1(k) = sum_j P(k | j) tau2(j) over the observed counts j; tau3(k) = P(k | k) (for k = 0
    the random zeros: 1 when alpha = 0); tau4(k) = tau3(k) tau2(k) / tau1(k) (003 eqs. 8-11,
    000 section 3.4.1).  Cells are the non-structural ones; k = 0 refers to random zeros.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> t = tau({0: 90, 1: 6, 2: 4}, SaturatedSynthesizer(Poisson()), k=[0, 1])
    >>> t.loc[1].round(4).to_dict()
    {'tau1': 0.0329, 'tau2': 0.06, 'tau3': 0.3679, 'tau4': 0.6709}
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "tau")
    kk = _check_counts(k, "k", "tau")
    return _tau_frame(cs, mech, kk)


def _tau_frame(cs: CellSizes, mech: CellwiseMechanism, kk: np.ndarray) -> pd.DataFrame:
    return _tau_grid(cs, mech, kk).frame()


def _tau_grid(cs: CellSizes, mech: CellwiseMechanism, kk: np.ndarray) -> MetricGrid:
    n = cs.n_cells
    p = np.asarray(mech.transition_pmf(kk[:, None], cs.values[None, :]), dtype=np.float64)
    tau1 = p @ cs.cells / n
    tau2 = cs.tau2(kk)
    tau3 = np.asarray(mech.transition_pmf(kk, kk), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau4 = np.where(tau1 > 0, np.minimum(tau3 * tau2 / tau1, 1.0), np.nan)
    return MetricGrid("k", kk, ("tau1", "tau2", "tau3", "tau4"), np.column_stack([tau1, tau2, tau3, tau4]))


def transition_table(mechanism: CellwiseMechanism, j: Any = (1, 5, 10, 20), k_max: int | None = None) -> pd.DataFrame:
    """P(released k | original j) as a table: one row per j, one column per k = 0..k_max.

    ``k_max`` defaults to the largest count whose upper tail mass exceeds 1e-6 over the rows.
    000 Figure 4 plots these rows.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> transition_table(SaturatedSynthesizer(Poisson()), j=[1], k_max=2).round(4).values.tolist()
    [[0.3679, 0.3679, 0.1839]]
    """
    mech = _check_mechanism(mechanism, "transition_table")
    jj = _check_counts(j, "j", "transition_table")
    if k_max is None:
        k_max = int(np.max(mech.transition_support(jj, 1e-6)))
    k_max = check_integer(k_max, "k_max", "transition_table", low=0)
    k = np.arange(k_max + 1)
    p = np.asarray(mech.transition_pmf(k[None, :], jj[:, None]), dtype=np.float64)
    return pd.DataFrame(p, index=pd.Index(jj, name="j"), columns=pd.Index(k, name="k"))


def reverse_transition_table(
    table_or_cell_sizes: Any, mechanism: CellwiseMechanism, k: Any = (1, 5, 10, 20), j_max: int | None = None
) -> pd.DataFrame:
    """P(original j | released k) = P(k | j) tau2(j) / tau1(k): one row per k, columns j = 0..j_max.

    000 Figure 5 plots these rows.  ``j_max`` defaults to the largest original count carrying
    more than 1e-6 of any row's probability.
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "reverse_transition_table")
    kk = _check_counts(k, "k", "reverse_transition_table")
    p = np.asarray(mech.transition_pmf(kk[:, None], cs.values[None, :]), dtype=np.float64) * cs.cells
    with np.errstate(invalid="ignore", divide="ignore"):
        post = p / p.sum(axis=1, keepdims=True)
    if j_max is None:
        big = np.flatnonzero(np.nan_to_num(post).max(axis=0) > 1e-6)
        j_max = int(cs.values[big[-1]]) if big.size else int(kk.max())
    j_max = check_integer(j_max, "j_max", "reverse_transition_table", low=0)
    cols = np.arange(j_max + 1)
    out = np.zeros((kk.size, cols.size))
    inside = cs.values <= j_max
    out[:, cs.values[inside]] = post[:, inside]
    return pd.DataFrame(out, index=pd.Index(kk, name="k"), columns=pd.Index(cols, name="j"))
