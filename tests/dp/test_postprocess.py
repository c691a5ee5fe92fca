"""Post-processing of noisy counts: non-negativity and rounding with the total kept."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from cellsafe.dp import clip_negative, make_counts, round_to_total
from cellsafe.exceptions import InvalidArgumentError


def test_clip_negative():
    assert_array_equal(clip_negative([-2, 0, 3]), [0, 0, 3])
    assert_array_equal(clip_negative(np.array([-0.5, 1.5])), [0.0, 1.5])


def test_round_to_total_examples():
    assert_array_equal(round_to_total([0.4, 1.4, 2.2]), [1, 1, 2])
    assert_array_equal(round_to_total([1.0, 1.0, 1.0], total=4), [2, 1, 1])
    assert_array_equal(round_to_total([0.0, 0.0], total=3), [2, 1])
    assert_array_equal(make_counts([-3.2, 5.6, 4.1], total=10), [0, 6, 4])


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    st.lists(st.floats(min_value=0, max_value=1e4, allow_nan=False), min_size=1, max_size=30),
    st.integers(min_value=0, max_value=10**5),
)
def test_round_to_total_keeps_total(values, total):
    out = round_to_total(values, total)
    assert out.dtype == np.int64
    assert int(out.sum()) == total
    assert np.all(out >= 0)
    s = sum(values)
    if s > 0:
        # each value moves by less than one unit from its scaled value
        scaled = np.asarray(values) * total / s
        assert np.all(np.abs(out - scaled) < 1 + 1e-6)


def test_round_to_total_bad_input():
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        round_to_total([-1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        round_to_total([1.0], total=-1)


def test_restore_additivity_is_the_published_tables_one():
    from cellsafe.dp import restore_additivity
    from cellsafe.fitting import nnls

    assert restore_additivity is nnls.restore_additivity
    # noisy inner cells and their total: least squares restores X^T y = fitted
    X = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]], dtype=float)
    z = np.array([3.2, -0.4, 5.1, 9.0])
    res = restore_additivity(X, z)
    inner = np.asarray(res.inner)
    assert np.all(inner >= 0)
    np.testing.assert_allclose(X.T @ inner, res.fitted, atol=1e-8)
