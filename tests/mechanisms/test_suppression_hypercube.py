"""Cell suppression of a 1e6-record, 6-variable hypercube against GaussSuppression (committed fixtures).

All 2-way margins of 20 x 2 x 10 x 6 x 8 x 5 categories (10,769 non-empty inner cells, 818 published
cells), frequency rule maxN = 2, zeros neither primary nor secondary; the table and R's outputs are
made by tests/reference/suppression/make_hypercube_table.py and make_hypercube.R.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pandas as pd
from numpy.testing import assert_array_equal

from cellsafe import CountTable
from cellsafe.mechanisms import CellSuppression
from cellsafe.metrics import audit_suppression

REF = Path(__file__).resolve().parents[1] / "reference" / "suppression"
NAMES = ["geo", "sex", "age", "edu", "occ", "cob"]


def _reference(method: str) -> pd.DataFrame:
    return pd.read_csv(REF / f"hypercube_maxn2_{method}.csv.gz", dtype={v: str for v in NAMES})


@pytest.mark.slow
def test_hypercube_two_way_margins_against_gauss_suppression():
    """Same published cells and primaries as SuppressSmallCounts; the same 88 suppressed cells as with
    singletonMethod = "none" (no singleton handling, as here), and fewer than its default "anySum"."""
    data = pd.read_csv(REF / "hypercube_table.csv.gz", dtype={v: str for v in NAMES})
    table = CountTable.from_frame(data, NAMES, "n")
    [res] = CellSuppression("(geo+sex+age+edu+occ+cob)^2", rules=["freq<=2"], list="nonzero", intervals=False, singletons=False).sample(table)
    ours = res.to_frame(details=True)
    none = _reference("none")
    m = ours.merge(none, on=NAMES, how="outer", indicator=True)
    assert (m["_merge"] == "both").all(), "the published cells differ from GaussSuppression's"
    assert res.n_published == len(none) == 818
    assert_array_equal(m["original"].to_numpy(np.int64), m["n"].to_numpy(np.int64))
    assert_array_equal((m["suppression"] == "primary").to_numpy(), m["primary"].to_numpy(bool))
    assert int(none["primary"].sum()) == 45
    # the criterion: no more suppressed cells than GaussSuppression (within 5%) ...
    assert res.n_suppressed <= 1.05 * int(none["suppressed"].sum())
    # ... and here the greedy rule with the same candidate order gives the same cells
    assert_array_equal((m["suppression"] != "").to_numpy(), m["suppressed"].to_numpy(bool))
    assert res.n_suppressed == 88
    assert res.n_suppressed <= int(_reference("anysum")["suppressed"].sum())
    # GaussSuppression's guarantee: no cell computable exactly by a reader who takes counts as non-negative ...
    audit = audit_suppression(res, required=0.0, singletons=False, list="frame")
    assert audit.passed and audit.n_unsafe == 0 and len(audit.cells) == 88
    # ... but this release lists its non-empty cells only, so every listed withheld cell is at least 1,
    # and with that floor the reader pins some of them: why cellsafe now lists the frame by default
    audit = audit_suppression(res, required=0.0, singletons=False)
    assert audit.listing == "nonzero" and not audit.passed
    np.testing.assert_allclose(audit.upper[~audit.safe], audit.lower[~audit.safe], atol=1e-6)
