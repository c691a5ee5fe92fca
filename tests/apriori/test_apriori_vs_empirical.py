"""A priori metrics of any cell-wise mechanism agree with what its samples show.

For each mechanism, the expected tau1..tau4 computed from the transition probabilities and the
table's cell sizes must lie within 3 standard errors (across implicates) of the empirical values
(the issue's acceptance check for the one yardstick).  Fixed seeds: deterministic.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cellsafe
from cellsafe import CountTable, Variable
from cellsafe._registry import registered
from cellsafe.mechanisms import make_mechanism
from cellsafe.published import PublishedTable

SPECS = [
    "nbi:sigma=1,alpha=0.01",
    "poisson:alpha=0.02",
    "ckm:D=5,V=3,js=2",
    "ckm:D=3,V=1",
    "geometric:epsilon=1",
    "discrete-gaussian:sigma=2",
]
M = 40


def _table() -> CountTable:
    """60,000 cells, half empty, counts with the long right tail of register data."""
    rng = np.random.default_rng(2026)
    variables = [Variable("a", range(300)), Variable("b", range(20)), Variable("c", range(10))]
    n = 300 * 20 * 10
    cells = np.flatnonzero(rng.random(n) < 0.5)
    counts = rng.negative_binomial(0.4, 0.08, size=cells.size)
    keep = counts > 0
    return CountTable(variables, cells[keep], counts[keep])


def _available(spec: str) -> bool:
    name = spec.split(":")[0]
    return name in registered("distribution") or name in registered("mechanism")


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS)
def test_apriori_tau_within_three_standard_errors(spec):
    if not _available(spec):
        pytest.skip(f"{spec.split(':')[0]} is not registered")
    mech = make_mechanism(spec)
    table = _table()
    k = [0, 1, 2, 3]
    expected = cellsafe.apriori.tau(table, mech, k=k)
    from cellsafe.mechanisms import DPMechanism

    # a DP mechanism releases only on a public domain: this table's categories are declared public here
    on_domain = {"domain": cellsafe.Domain(list(table.variables))} if isinstance(mech, DPMechanism) else {}
    releases = mech.sample(table, m=M, rng=1, **on_domain)
    tables = [r.released_table() if isinstance(r, PublishedTable) else r for r in releases]
    per = np.array([cellsafe.metrics.tau(table, [t], k=k).to_numpy() for t in tables])  # (M, k, 4)
    with warnings.catch_warnings():  # tau4(k) is undefined where no cell is released as k
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(per, axis=0)
        se = np.nanstd(per, axis=0, ddof=1) / np.sqrt(M)
    exp = expected.to_numpy()
    ok = np.isfinite(exp) & np.isfinite(mean)
    gap = np.abs(mean - exp)[ok]
    tol = (3 * se + 1e-9)[ok]
    assert np.all(gap <= tol), f"{spec}: a priori {exp[ok]} vs empirical {mean[ok]} (3 SE {tol})"
