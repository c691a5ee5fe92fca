"""Invariants of the disclosure and table measures on random small data (hypothesis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from cellsafe.metrics.microdata import attribute_disclosure, table_utility

_frames = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 2)), min_size=n, max_size=n),
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=40),
    )
)


def _df(rows):
    return pd.DataFrame(rows, columns=["a", "b", "t"])


@settings(max_examples=60, deadline=None)
@given(_frames)
def test_disclosure_orderings(data):
    o, s = (_df(x) for x in data)
    r = attribute_disclosure(o, s, ["a", "b"], "t")
    eps = 1e-12
    assert r.DiSDiO <= r.DiSCO + eps <= r.iS + 2 * eps
    assert r.repU <= r.UiOiS + eps <= r.UiO + 2 * eps
    assert r.DiSDiO <= r.DiO + eps
    assert 0 <= r.DCAP <= 1 and 0 <= r.baseCAPd <= 1
    if not np.isnan(r.TCAP):
        assert r.DiSCO <= r.TCAP + eps
    same = attribute_disclosure(o, o, ["a", "b"], "t")
    assert same.DiSCO == same.DiO and same.repU == same.UiO


@settings(max_examples=60, deadline=None)
@given(_frames)
def test_table_statistics_are_non_negative_and_vanish_for_equal_tables(data):
    o, s = (_df(x) for x in data)
    r = table_utility(o, s, ["a", "b"])
    assert r.VW >= 0 and r.FT >= 0 and 0 <= r.JSD <= 1 + 1e-12
    both = pd.concat([o, s])
    assert r.df + 1 + r.nempty == both["a"].nunique() * both["b"].nunique()
    z = table_utility(o, o, ["a", "b"])
    assert z.VW == 0 and z.FT == 0 and abs(z.JSD) < 1e-12
