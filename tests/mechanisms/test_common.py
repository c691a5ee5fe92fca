"""Checks every mechanism must pass (style.md, 'Tests'): the same ``rng`` gives the same output,
``sample`` leaves the mechanism and the table unchanged, outputs keep the table's variables and
structural zeros and hold non-negative integer counts."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import cellsafe
from cellsafe import CountTable, Variable


def _table() -> CountTable:
    rng = np.random.default_rng(5)
    variables = [Variable("region", ["N", "S", "E", "W"]), Variable("sex", ["F", "M"]), Variable("age", range(6))]
    k = 4 * 2 * 6
    cells = np.flatnonzero(rng.random(k - 1) < 0.7)  # the last cell is impossible
    return CountTable(variables, cells, rng.integers(1, 30, size=cells.size), structural_zeros=[k - 1])


MECHANISMS = [
    cellsafe.SaturatedSynthesizer(cellsafe.Poisson()),
    cellsafe.SaturatedSynthesizer(cellsafe.NBI(sigma=1.0), alpha=0.1),
    cellsafe.SaturatedSynthesizer(cellsafe.PIG(sigma=2.0), zeros_to_ones=0.1),
    cellsafe.SaturatedSynthesizer(cellsafe.GAF(sigma=0.5, nu=0.5)),
    cellsafe.LogLinearSynthesizer("region*sex + sex*age", cellsafe.NBI(sigma=0.5)),
    cellsafe.CellKeyMethod(cellsafe.PTable.generate(D=3, V=1.5, js=1)),
    cellsafe.SmallCountRounding("region*sex + sex*age", base=3),
    cellsafe.MultinomialDirichletSynthesizer(alpha=2.0),
    cellsafe.PoissonGammaSynthesizer(a=2.0, b=0.05),
]


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: type(m).__name__ + str(MECHANISMS.index(m)))
def test_mechanism_contract(mechanism):
    table = _table()
    before = copy.deepcopy(vars(mechanism))
    counts_before = table.counts.copy()
    a = mechanism.sample(table, m=2, rng=123)
    b = mechanism.sample(table, m=2, rng=123)
    assert len(a) == 2
    for x, y in zip(a, b):
        assert x.equals(y)
        assert x.variables == table.variables
        assert_array_equal(x.structural_zeros, table.structural_zeros)
        assert x.is_integer and np.all(x.counts >= 0)
        assert np.intersect1d(x.index, table.structural_zeros).size == 0
    assert_array_equal(table.counts, counts_before)
    after = vars(mechanism)
    assert before.keys() == after.keys()
    for key in before:
        if isinstance(before[key], np.ndarray):
            assert_array_equal(before[key], after[key])
        else:
            assert repr(before[key]) == repr(after[key])
