"""CI overlap (003 eq. 12), the SSO match (002 section 3.10) and the combining rules (003 eq. 13; Reiter 2003)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.exceptions import InvalidArgumentError
from cellsafe.metrics import ci_overlap, combine_fully_synthetic, combine_partially_synthetic, compare_intervals


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
    lo, up = c.conf_int(0.95)
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


def test_sso_of_002_exercise():
    # 002 section 3.13: means 2.79 (CI 2.308338, 3.276984) and 2.08 (CI 1.512416, 2.656643): "Yes! The
    # confidence intervals overlap, the signs are the same, and the statistical significance is the same."
    r = compare_intervals(2.7926609008331, 2.308338, 3.276984, 2.08452909904545, 1.512416, 2.656643)
    assert r["same_sign"][0] and r["same_significance"][0] and r["sso"][0]
    assert r["overlap_signed"][0] == pytest.approx(ci_overlap(2.308338, 3.276984, 1.512416, 2.656643, clamp=False))


@pytest.mark.parametrize(
    "case, sign, significance, sso",
    [
        ((1.0, 0.5, 1.5, 1.2, 0.7, 1.7), True, True, True),
        ((1.0, 0.5, 1.5, 1.0, -0.2, 2.2), True, False, False),  # synthetic interval includes 0
        ((0.2, -0.5, 0.9, -0.1, -0.8, 0.6), False, True, False),  # both include 0, signs differ
        ((1.0, 0.5, 1.5, 2.0, 1.5, 2.5), True, True, False),  # adjacent: 002 3.11 says not overlapping
        ((1.0, 0.5, 1.5, 3.0, 2.0, 4.0), True, True, False),  # a gap
        ((1.0, 0.5, 1.5, np.nan, np.nan, np.nan), False, False, False),  # not estimable
    ],
)
def test_compare_intervals_definitions(case, sign, significance, sso):
    r = compare_intervals(*case)
    assert (r["same_sign"][0], r["same_significance"][0], r["sso"][0]) == (sign, significance, sso)


def test_compare_intervals_vectorized_matches_scalar():
    rng = np.random.default_rng(3)
    est = rng.normal(size=(2, 50))
    half = rng.uniform(0.1, 1.0, size=(2, 50))
    r = compare_intervals(est[0], est[0] - half[0], est[0] + half[0], est[1], est[1] - half[1], est[1] + half[1])
    for j in range(50):
        one = compare_intervals(est[0, j], est[0, j] - half[0, j], est[0, j] + half[0, j],
                                est[1, j], est[1, j] - half[1, j], est[1, j] + half[1, j])
        for key in r:
            assert_array_equal(r[key][j : j + 1], one[key])
    assert_allclose(r["overlap"], np.maximum(r["overlap_signed"], 0))


def test_conf_int_takes_a_confidence_level():
    c = combine_fully_synthetic([1.0], [0.04], 100, 100)
    lo, up = c.conf_int(0.9)
    assert_allclose(up - c.estimate, 1.6448536269514722 * c.se)
    with pytest.raises(InvalidArgumentError, match="'level' parameter"):
        c.conf_int(95)
