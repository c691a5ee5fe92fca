"""The attacker's programs of cell suppression (``_intruder.Intruder``): verdicts where a side has no bound."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from cellsafe.mechanisms import CellSuppression
from cellsafe.mechanisms._intruder import Intruder
from cellsafe.metrics import audit_suppression
from cellsafe.published import magnitude_table


def test_an_unbounded_side_meets_any_target_for_the_last_cell_asked():
    """Inner cells y0, y1; published cells y0, y1, y0 + y1.  A reader who knows only y0 = 2 cannot bound
    y1 or the total above: each reaches any target, the last cell asked as well as the first."""
    X = sp.csc_matrix(np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]))
    values = np.array([2.0, 3.0, 5.0])
    known = np.array([True, False, False])
    for cells in ([1, 2], [2], [1]):
        reader = Intruder(X, values, known)
        cells = np.array(cells)
        met_dn, met_up, _, greatest = reader.reach(reader.columns(cells), np.full(cells.size, 1e6), np.full(cells.size, np.inf))
        assert met_up.all() and met_dn.all()
        assert np.isinf(greatest).all()


def test_audit_of_a_contributor_who_cannot_bound_another_cell():
    """Found by the random magnitude tables: every cell withheld, firm 1 knows its own cells (b1), and firm
    0's cell a0:b0 has no upper bound for it; the audit passes (it reported a shortfall with bound inf)."""
    df = pd.DataFrame({"a": ["a0"] * 4, "b": ["b0", "b0", "b0", "b1"], "firm": [0, 0, 0, 1], "v": [1.0] * 4})
    mt = magnitude_table(df, ["a", "b"], "v", "a*b", contributor="firm")
    res = CellSuppression(mt.publication, rules=["p%=15", "freq<=1"], priority="value").suppress_magnitude(mt)
    assert np.isnan(res.released).all()
    audit = audit_suppression(res)
    assert audit.passed, audit.singletons


def test_attacker_programs_stopped_at_their_warm_limit_give_the_same_intervals(monkeypatch):
    """An attacker's program that reaches its iteration limit from the last basis is solved from scratch: with the
    warm limit at 0 every program is, and the audit's intervals and verdicts are those of the warm solves."""
    from cellsafe.mechanisms import _intruder
    from cellsafe.table import CountTable, Variable

    rng = np.random.default_rng(4)
    counts = rng.poisson(0.4, (6, 5, 4))
    t = CountTable.from_dense(counts, [Variable(f"v{i}", [f"{i}{j}" for j in range(k)]) for i, k in enumerate(counts.shape)])
    [res] = CellSuppression("(v0+v1+v2)^2", rules=["freq<=2"]).sample(t)
    warm = audit_suppression(res)
    monkeypatch.setattr(_intruder, "WARM_ITERATIONS", 0)
    stopped = []
    run = _intruder.run_within_limits

    def counted(h, done, *args):
        status = run(h, done, *args)
        stopped.append(h.getInfo().simplex_iteration_count)
        return status

    monkeypatch.setattr(_intruder, "run_within_limits", counted)
    cold = audit_suppression(res)
    assert warm.n_lp > 0 and stopped  # programs were solved, every one past its warm limit of 0 iterations
    assert warm.passed and cold.passed
    np.testing.assert_allclose(cold.lower, warm.lower, atol=1e-7)
    np.testing.assert_allclose(cold.upper, warm.upper, atol=1e-7)
