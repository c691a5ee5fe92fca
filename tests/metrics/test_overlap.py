"""CI overlap (003 eq. 12) and the combining rules (003 eq. 13; Reiter 2003)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from cellsafe.exceptions import InvalidArgumentError
from cellsafe.metrics import ci_overlap, combine_fully_synthetic, combine_partially_synthetic


@pytest.mark.parametrize(
    "lo_o, up_o, lo_s, up_s, clamped, signed",
    [
        (0.0, 1.0, 0.0, 1.0, 1.0, 1.0),  # identical
        (0.0, 2.0, 1.0, 3.0, 0.5, 0.5),  # half of each
        (0.0, 1.0, 1.0, 2.0, 0.0, 0.0),  # touching
        (0.0, 1.0, 2.0, 3.0, 0.0, -1.0),  # gap of 1: (-1/1 - 1/1) / 2
        (0.0, 1.0, -100.0, 100.0, 0.5025, 0.5025),  # one interval far wider: tends to 1/2 (003 4.4.1)
        (0.0, 4.0, 1.0, 2.0, 0.625, 0.625),  # synthetic inside: (1/4 + 1/1) / 2
    ],
)
def test_ci_overlap_values(lo_o, up_o, lo_s, up_s, clamped, signed):
    assert ci_overlap(lo_o, up_o, lo_s, up_s) == pytest.approx(clamped)
    assert ci_overlap(lo_o, up_o, lo_s, up_s, clamp=False) == pytest.approx(signed)


def test_ci_overlap_vectorized_and_symmetric():
    rng = np.random.default_rng(0)
    lo_o, lo_s = rng.normal(size=(2, 50))
    up_o, up_s = lo_o + rng.gamma(2, size=50), lo_s + rng.gamma(2, size=50)
    a = ci_overlap(lo_o, up_o, lo_s, up_s, clamp=False)
    b = ci_overlap(lo_s, up_s, lo_o, up_o, clamp=False)
    assert a.shape == (50,)
    assert_allclose(a, b)
    assert np.all(ci_overlap(lo_o, up_o, lo_s, up_s) == np.maximum(a, 0))
    assert np.all(a <= 1 + 1e-12)
    assert np.isnan(ci_overlap(0.0, 0.0, 0.0, 1.0))  # zero-length interval


def test_raab_rule_matches_003_eq13():
    # m = 1, n_syn = n: twice the implicate's variance (003 section 4.4)
    c = combine_fully_synthetic([[1.0, -2.0]], [[0.04, 0.09]], 1000, 1000)
    assert_allclose(c.variance, [0.08, 0.18])
    assert_allclose(c.se, np.sqrt([0.08, 0.18]))
    assert np.all(np.isinf(c.df)) and c.m == 1 and c.rule == "fully"
    # m = 3, n_syn varies: v_bar (mean(n_syn)/n + 1/m)
    q = np.array([[1.0], [2.0], [3.0]])
    v = np.array([[0.1], [0.2], [0.3]])
    c = combine_fully_synthetic(q, v, 100, [90, 100, 110])
    assert_allclose(c.estimate, [2.0])
    assert_allclose(c.variance, [0.2 * (1.0 + 1.0 / 3.0)])
    lo, up = c.conf_int(0.05)
    assert_allclose(up - c.estimate, 1.959963984540054 * c.se)


def test_reiter_rule():
    q = np.array([[1.0, 0.0], [3.0, 0.0], [2.0, 0.0]])
    v = np.array([[0.5, 1.0], [0.7, 1.0], [0.6, 1.0]])
    c = combine_partially_synthetic(q, v)
    b = 1.0  # sample variance of 1, 3, 2
    assert_allclose(c.estimate, [2.0, 0.0])
    assert_allclose(c.variance, [0.6 + b / 3, 1.0])
    assert_allclose(c.df[0], 2 * (1 + 0.6 / (b / 3)) ** 2)
    assert np.isinf(c.df[1])  # no between-implicate variance
    one = combine_partially_synthetic([1.0], [0.5])
    assert np.isnan(one.variance[0])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: combine_fully_synthetic([1.0, 2.0], [0.1], 10, 10), "same shape"),
        (lambda: combine_fully_synthetic([[[1.0]]], [[[0.1]]], 10, 10), "shape"),
        (lambda: combine_fully_synthetic([1.0], [-0.1], 10, 10), "non-negative"),
        (lambda: combine_fully_synthetic([1.0], [0.1], 0, 10), "n_original must be positive"),
        (lambda: combine_partially_synthetic([], []), "m >= 1"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(InvalidArgumentError, match=match):
        call()
