"""Randomized response (002 section 6): the course's example and unbiasedness."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cellsafe.dp import (
    randomized_response,
    randomized_response_epsilon,
    randomized_response_estimate,
    randomized_response_probability,
)
from cellsafe.exceptions import InvalidArgumentError


def test_course_example_20830():
    # 002 section 6: n = 100,000, p = 0.6, q = 0.4 and 44,166 "yes" give (44,166 - 40,000) / 0.2 = 20,830
    assert randomized_response_estimate(44_166, 100_000, 0.6) == pytest.approx(20_830)


def test_epsilon_and_probability():
    p = randomized_response_probability(math.log(3))
    assert p == pytest.approx(0.75)
    assert randomized_response_epsilon(0.75) == pytest.approx(math.log(3))
    assert randomized_response_epsilon(0.6) == pytest.approx(math.log(1.5))
    # generalized: p = e^eps / (e^eps + k - 1)
    assert randomized_response_probability(1.0, k=4) == pytest.approx(math.e / (math.e + 3))


def test_binary_unbiased():
    n = 200_000
    rng = np.random.default_rng(1)
    truth = rng.random(n) < 0.2
    rep = randomized_response(truth, p=0.6, rng=2)
    assert rep.dtype == bool
    est = randomized_response_estimate(rep.sum(), n, 0.6)
    # sd of the estimate: sqrt(n * pi (1 - pi)) / (p - q), pi = P(report yes)
    pi = 0.2 * 0.6 + 0.8 * 0.4
    se = math.sqrt(n * pi * (1 - pi)) / 0.2
    assert abs(est - truth.sum()) < 4 * se


def test_generalized_unbiased():
    n, k = 100_000, 4
    rng = np.random.default_rng(3)
    truth = rng.choice(k, size=n, p=[0.5, 0.3, 0.15, 0.05])
    rep = randomized_response(truth, epsilon=2.0, k=k, rng=4)
    p = randomized_response_probability(2.0, k)
    est = randomized_response_estimate(np.bincount(rep, minlength=k), n, p, k=k)
    q = (1 - p) / (k - 1)
    true = np.bincount(truth, minlength=k)
    pi = true / n * p + (1 - true / n) * q
    se = np.sqrt(n * pi * (1 - pi)) / (p - q)
    assert np.all(np.abs(est - true) < 4 * se)
    assert est.sum() == pytest.approx(n)


def test_other_categories_equally_likely():
    rep = randomized_response(np.zeros(60_000, dtype=int), p=0.4, k=4, rng=5)
    counts = np.bincount(rep, minlength=4)
    # each other category with probability 0.2
    for c in counts[1:]:
        assert abs(c - 12_000) < 4 * math.sqrt(60_000 * 0.2 * 0.8)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: randomized_response([True], rng=1), "exactly one"),
        (lambda: randomized_response([True], p=0.6, epsilon=1.0), "exactly one"),
        (lambda: randomized_response([0, 5], p=0.6, k=3), "outside"),
        (lambda: randomized_response([-1], p=0.6), "codes"),
        (lambda: randomized_response([0.5, 1.0], p=0.6), "whole numbers"),
        (lambda: randomized_response_estimate(10, 100, 0.5), "'p'"),
        (lambda: randomized_response_estimate(10, 100, 0.2, k=4), "'p'"),
        (lambda: randomized_response_probability(0.0), "epsilon"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(InvalidArgumentError, match=match):
        call()
