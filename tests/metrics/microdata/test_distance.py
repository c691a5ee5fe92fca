"""Distance to the closest record and membership inference with a holdout (002, 3.16.2 - 3.16.4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics.microdata import distance_to_closest_record, membership_inference


def test_gower_distance_by_hand():
    o = pd.DataFrame({"x": [0.0, 10.0], "k": ["a", "b"]})
    s = pd.DataFrame({"x": [5.0, 10.0], "k": ["a", "a"]})
    r = distance_to_closest_record(o, s)
    # (|5 - 0| / 10 + 0) / 2 = 0.25 ; second record: min((1 + 0) / 2, (0 + 1) / 2) = 0.5
    assert_allclose(r.dcr_original, [0.25, 0.5])
    assert r.share_exact_original == 0.0


def _split(adult, n, seed):
    idx = np.random.default_rng(seed).permutation(len(adult))
    return [adult.iloc[idx[i * n : (i + 1) * n]].reset_index(drop=True) for i in range(3)]


def test_copies_are_flagged(adult):
    o, h, _ = _split(adult, 1500, 1)
    r = distance_to_closest_record(o, o, h, n_sample=400, rng=0)
    assert r.share_exact_original == 1.0
    assert r.share_closer_to_original > 0.95
    mi = membership_inference(o, o, h, n_sample=400, rng=0)
    assert mi.exact_tpr == 1.0 and mi.auc > 0.95 and mi.advantage > 0.9


def test_a_fresh_sample_is_as_close_as_the_holdout(adult):
    """Synthetic records from the population, not from the original: no closer to it than to a holdout."""
    o, h, s = _split(adult, 1500, 2)
    r = distance_to_closest_record(o, s, h, n_sample=600, rng=1)
    se = 0.5 / np.sqrt(600)
    assert abs(r.share_closer_to_original - 0.5) < 4 * se
    mi = membership_inference(o, s, h, n_sample=600, rng=1)
    se_auc = np.sqrt((600 + 600 + 1) / (12 * 600 * 600))
    assert abs(mi.auc - 0.5) < 4 * se_auc
    assert mi.n_members == mi.n_nonmembers == 600


def test_reference_sets_are_cut_to_the_same_size(adult):
    o, h, s = _split(adult, 900, 3)
    r = distance_to_closest_record(o, s, h.iloc[:300], n_sample=50, rng=2)
    assert r.n_reference == 300 and r.dcr_holdout.size == 50


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda o: distance_to_closest_record(o, o, n_sample=0), InvalidArgumentError),
        (lambda o: distance_to_closest_record(o, [o, o]), InvalidArgumentError),
        (lambda o: membership_inference(o, o, o.drop(columns="a"), columns=["a", "b"]), DataError),
        (lambda o: membership_inference(o, o, o, columns=["zz"]), DataError),
        (lambda o: membership_inference(o, o, None), InvalidArgumentError),
        (lambda o: distance_to_closest_record(o, o, o.iloc[:0]), DataError),
    ],
)
def test_bad_input(call, error):
    o = pd.DataFrame({"a": list("xyz"), "b": [1.0, 2.0, 3.0]})
    with pytest.raises(error):
        call(o)
