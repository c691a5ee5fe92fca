"""Whole transition rows from shared tables and closed-form tails: the same assessment as point by point."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cellsafe import apriori
from cellsafe.apriori._rows import _BIN_RATIO, _EXACT_PREFIX, _quadrature_points
from cellsafe.distributions import GAF, NBI, PIG, Poisson
from cellsafe.mechanisms import SaturatedSynthesizer


def _by_loop(lo, hi):
    """The grid as the loop over rows built it before (np.geomspace per row)."""
    points = []
    for lo_i, hi_i in zip(lo.tolist(), hi.tolist()):
        start = max(lo_i + _EXACT_PREFIX, int(math.ceil(1.0 / _BIN_RATIO)))
        if start >= hi_i:
            points.append(np.arange(lo_i, hi_i + 1))
            continue
        n_geo = int(math.ceil(math.log(hi_i / start) / math.log1p(_BIN_RATIO))) + 2
        e = np.concatenate([np.arange(lo_i, start), np.round(np.geomspace(start, hi_i, n_geo)).astype(np.int64)])
        points.append(e[np.r_[True, np.diff(e) > 0]])
    return np.concatenate(points), np.repeat(np.arange(lo.size), [p.size for p in points])


def test_quadrature_grid_is_the_per_row_geomspace():
    rng = np.random.default_rng(1)
    lo = rng.integers(0, 5000, 300)
    hi = lo + rng.integers(0, 10**6, 300)
    hi[:20] = lo[:20] + rng.integers(0, 300, 20)  # rows too short for a grid
    k, row = _quadrature_points(lo, hi)
    k_ref, row_ref = _by_loop(lo, hi)
    assert np.array_equal(k, k_ref) and np.array_equal(row, row_ref)


@pytest.mark.parametrize("dist", [Poisson(), NBI(1.0), NBI(0.01), NBI(100.0), NBI(1e-4), PIG(1.0), GAF(0.5, -0.25)])
def test_rows_equal_the_pmf_point_by_point(dist):
    mu = np.array([0.0, 0.01, 0.5, 1.0, 3.0, 17.5, 250.0, 1e4, 2e5])
    widths = [int(min(3 * m + 200, 20_000)) for m in mu]
    k = np.concatenate([np.arange(w) + (0 if m < 1e5 else int(m) - w // 2) for m, w in zip(mu, widths)])
    row = np.repeat(np.arange(mu.size), widths)
    expected = dist.pmf(k, mu[row])
    got = dist.pmf_rows(k, row, mu)
    small = expected < 1e-290  # at the edge of underflow relative errors mean nothing
    np.testing.assert_allclose(got[~small], expected[~small], rtol=1e-9, atol=0)
    assert np.all(got[small] < 1e-280)


def _point_by_point(monkeypatch):
    monkeypatch.setattr(SaturatedSynthesizer, "transition_pmf_rows", None)
    monkeypatch.setattr(SaturatedSynthesizer, "transition_tails_closed_form", lambda self: False)


@pytest.mark.parametrize("dist", [Poisson(), NBI(1.0), NBI(0.1), GAF(0.5, -0.25)])
def test_assessment_unchanged(dist, monkeypatch):
    rng = np.random.default_rng(4)
    sizes = {0: 50_000.0, **{int(v): float(c) for v, c in zip(rng.integers(1, 1500, 60), rng.integers(1, 50, 60))}}
    mech = SaturatedSynthesizer(dist, alpha=0.02)
    fast = apriori.assess(sizes, mech, d=[100]).to_dict()
    _point_by_point(monkeypatch)
    slow = apriori.assess(sizes, mech, d=[100]).to_dict()

    def numbers(x, path=""):
        if isinstance(x, dict):
            for key, value in x.items():
                yield from numbers(value, f"{path}/{key}")
        elif isinstance(x, float):
            yield path, x

    for (path, a), (_, b) in zip(numbers(fast), numbers(slow)):
        assert a == pytest.approx(b, rel=1e-11, abs=1e-14), path
