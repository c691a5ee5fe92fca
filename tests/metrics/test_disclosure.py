"""Disclosure probabilities and the F-beta risk: edge cases beyond 001's example."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics import disclosure_probabilities, disclosure_risk, f_beta_risk
from cellsafe.table import CountTable, Variable

S = Variable("s", ["a", "b", "c"])
Q = Variable("q", ["x", "y", "z", "w"])


def _table(rows):
    """rows: per q, counts of s = a, b, c."""
    arr = np.array(rows, dtype=float).T  # shape (s, q)
    return CountTable.from_dense(arr, [S, Q])


def test_plain_and_know_yourself_by_hand():
    t = _table([[1, 0, 0], [2, 2, 0], [0.5, 0.25, 0], [3, 1, 1]])
    p = disclosure_probabilities(t, "s", ["q"])
    assert_allclose(p.probability, [1.0, 0.5, 0.5 / 0.75, 3 / 5])
    k = disclosure_probabilities(t, "s", ["q"], know_yourself=True)
    # x: alone in the cell, nothing left to guess; y: remove one of a tie -> 2/3;
    # fractional: remove 0.25 of b -> 1; w: remove one b or c -> 3/4
    assert math.isnan(k.probability[0])
    assert_allclose(k.probability[1:], [2 / 3, 1.0, 3 / 4])
    assert_array_equal(k.exact(), [False, False, True, False])
    assert list(k.to_frame().columns) == ["q", "total", "probability", "guess"]


def test_empty_key_cells_are_left_out_and_guesses_compared():
    orig = _table([[2, 0, 0], [0, 0, 0], [1, 1, 0], [0, 3, 0]])
    prot = _table([[0, 2, 0], [1, 0, 0], [1, 1, 0], [0, 2.5, 0]])
    r = disclosure_risk(orig, prot, "s", ["q"])
    # original exact: x (a), w (b); protected exact: x (b, wrong party), y (empty in original: ignored), w (b)
    assert (r.a, r.b, r.c) == (2, 2, 1)
    assert r.precision == 0.5 and r.recall == 0.5
    assert round(r.f_beta, 4) == round(1.25 * 1 / (0.25 * 2 + 2), 4)


def test_f_beta():
    assert f_beta_risk(0, 0, 0) == 0.0
    assert f_beta_risk(1, 0, 0) == 0.0
    assert f_beta_risk(2, 2, 2, beta=1) == 1.0
    with pytest.raises(InvalidArgumentError, match="'beta' parameter"):
        f_beta_risk(1, 1, 1, beta=0)


@pytest.mark.parametrize(
    "sensitive,keys,match",
    [("zz", ["q"], "unknown variable"), ("s", ["s"], "other than the sensitive"), ("s", [], "one or more")],
)
def test_bad_arguments(sensitive, keys, match):
    with pytest.raises(InvalidArgumentError, match=match):
        disclosure_probabilities(_table([[1, 0, 0]] * 4), sensitive, keys)


def test_tables_must_match():
    t = _table([[1, 0, 0]] * 4)
    other = CountTable.from_frame(pd.DataFrame({"s": ["a"], "q": ["x"]}), ["s", "q"])
    with pytest.raises(DataError, match="same variables"):
        disclosure_risk(t, other, "s", ["q"])
