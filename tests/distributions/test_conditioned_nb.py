"""Independent negative binomials conditioned on their sum (004 eq. 9): exact log pmf and exact sampler."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from cellsafe.distributions import ConditionedNegativeBinomial, conditioned_nb_log_pmf, sample_conditioned_nb
from cellsafe.exceptions import InvalidArgumentError

REF = Path(__file__).resolve().parents[1] / "reference" / "dp"


def _compositions(total: int, parts: int) -> np.ndarray:
    """Every vector of ``parts`` non-negative integers summing to ``total``."""
    rows = [c for c in itertools.product(range(total + 1), repeat=parts) if sum(c) == total]
    return np.array(rows, dtype=np.int64)


def test_log_pmf_matches_r_fixture():
    # tests/reference/dp/make_fixtures.R: y = (1, 3, 0), a, b, n as below; r = y + a, q = n / (b + 2n)
    ref = pd.read_csv(REF / "conditioned_nb.csv")
    y = np.array([1.0, 3.0, 0.0])
    a = np.array([0.8, 2.0, 1.3])
    b = np.array([50.0, 4000.0, 900.0])
    n = np.array([100.0, 20000.0, 1500.0])
    got = conditioned_nb_log_pmf(ref[["z1", "z2", "z3"]].to_numpy(), y + a, n / (b + 2 * n))
    assert_allclose(got, ref["logp"], rtol=1e-10)


def test_equal_q_is_dirichlet_multinomial():
    # with one q the conditioned law is DM(z.; r), whatever q
    r = np.array([0.5, 1.5, 3.0])
    z = _compositions(4, 3)
    want = stats.dirichlet_multinomial.logpmf(z, r, 4)
    assert_allclose(conditioned_nb_log_pmf(z, r, np.full(3, 0.37)), want, rtol=1e-10)


def test_sampler_is_exact():
    r = np.array([0.7, 2.5, 1.2])
    q = np.array([0.3, 0.05, 0.6])
    support = _compositions(5, 3)
    law = ConditionedNegativeBinomial(r, q, 5)
    logp = law.log_pmf(support)
    assert np.exp(logp).sum() == pytest.approx(1.0, rel=1e-12)
    gen = np.random.default_rng(20240601)
    draws = np.array([law.draw(gen) for _ in range(5000)])
    key = {tuple(z): k for k, z in enumerate(support)}
    obs = np.bincount([key[tuple(d)] for d in draws], minlength=len(support))
    assert stats.chisquare(obs, np.exp(logp) * len(draws)).pvalue > 1e-3


def test_degenerate_totals_and_one_variable():
    assert ConditionedNegativeBinomial([1.0, 2.0], [0.2, 0.3], 0).draw(1).tolist() == [0, 0]
    assert ConditionedNegativeBinomial([1.0], [0.2], 4).draw(1).tolist() == [4]
    z = sample_conditioned_nb([1.0, 2.0, 0.5], [0.2, 0.4, 0.1], 9, rng=3)
    assert z.sum() == 9 and z.dtype == np.int64
    assert_allclose(sample_conditioned_nb([1.0, 2.0, 0.5], [0.2, 0.4, 0.1], 9, rng=3), z)  # one seed, one draw


@pytest.mark.parametrize(
    ("r", "q", "total", "match"),
    [
        ([1.0, -1.0], [0.2, 0.3], 3, "'r' parameter"),
        ([1.0, 2.0], [0.2, 1.0], 3, "'q' parameter"),
        ([1.0, 2.0], [0.2], 3, "one length"),
        ([1.0, 2.0], [0.2, 0.3], -1, "'total' parameter"),
        ([1.0, 2.0], [0.2, 0.3], 2.5, "'total' parameter"),
    ],
)
def test_bad_parameters_are_refused(r, q, total, match):
    with pytest.raises(InvalidArgumentError, match=match):
        ConditionedNegativeBinomial(r, q, total)


def test_log_pmf_needs_one_total():
    with pytest.raises(InvalidArgumentError, match="one common total"):
        conditioned_nb_log_pmf([[1, 0], [1, 1]], [1.0, 1.0], [0.5, 0.5])
    with pytest.raises(InvalidArgumentError, match="last axis"):
        conditioned_nb_log_pmf([[1, 0, 0]], [1.0, 1.0], [0.5, 0.5])
