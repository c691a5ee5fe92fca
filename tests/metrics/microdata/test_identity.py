"""Identity disclosure by key matching: the course's worked examples (002, sections 3.15 and 3.17)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_equal

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics.microdata import key_matches, match_rates


def _starwars() -> tuple[pd.DataFrame, pd.DataFrame]:
    """100 confidential records and their partially synthetic release (skin colour synthesized).

    Record 0 is Jar Jar Binks (Naboo, Gungan), records 1 and 2 two other Naboo Gungans; record 3
    is R2-D2, the only Naboo Droid.  The remaining 96 records live on other worlds.
    """
    worlds = ["Naboo"] * 4 + ["Tatooine"] * 48 + ["Alderaan"] * 48
    species = ["Gungan", "Gungan", "Gungan", "Droid"] + ["Human"] * 96
    conf = pd.DataFrame(
        {"homeworld": worlds, "species": species, "skin_color": ["orange", "grey", "green", "white, blue"] + ["fair"] * 96}
    )
    synth = conf.copy()
    synth["skin_color"] = ["green", "orange", "grey", "white, blue"] + ["light"] * 96
    return conf, synth


def test_course_3_15_match_rates():
    conf, synth = _starwars()
    # the intruder's external data: Jar Jar Binks and R2-D2
    r = match_rates(conf, synth, ["homeworld", "species"], targets=[0, 3])
    assert_allclose(r.expected_match_rate, 1 / 3 + 1)  # 1.333
    assert_allclose(r.true_match_rate, 0.01)  # 1 of 100 confidential records
    assert_allclose(r.false_match_rate, 0.0)  # 0 of 1 unique match
    assert r.n_unique_matches == 1 and r.n_targets == 2 and r.n_original == 100


def test_course_3_17_adam_and_betsy():
    attacker = pd.DataFrame({"Name": ["Adam", "Betsy"], "Year": [2009, 2010], "Elective": ["Chorus", "Band"]})
    released = pd.DataFrame(
        {
            "Year": [2008, 2008, 2009, 2009, 2010, 2010, 2010],
            "Elective": ["Chorus", "Chorus", "Chorus", "Band", "Band", "Band", "Band"],
            "Synthetic SAT": [1100, 1420, 900, 1100, 1420, 900, 1200],
        }
    )
    m = key_matches(attacker, released, ["Year", "Elective"])
    assert_equal(m.n_matches, [1, 3])  # Adam's unique match, Betsy's three
    assert_equal(m.rows(0), [2])
    assert_equal(np.sort(m.rows(1)), [4, 5, 6])
    assert_equal(released.loc[m.rows(0), "Synthetic SAT"].tolist(), [900])


def test_false_match_when_the_key_was_synthesized():
    o = pd.DataFrame({"k": ["a", "b", "c"]})
    s = pd.DataFrame({"k": ["b", "a", "c"]})  # records 0 and 1 swapped their keys
    r = match_rates(o, s, ["k"])
    assert_allclose(r.expected_match_rate, 1.0)  # only record 2 is found
    assert_allclose(r.true_match_rate, 1 / 3)
    assert_allclose(r.false_match_rate, 2 / 3)


def test_key_matches_no_match():
    m = key_matches(pd.DataFrame({"k": ["z"]}), pd.DataFrame({"k": ["a", "b"]}), ["k"])
    assert_equal(m.n_matches, [0])
    assert len(m.pairs) == 0


@pytest.mark.parametrize(
    "original, synthetic, keys, kwargs, error",
    [
        (pd.DataFrame({"k": [1, 2]}), pd.DataFrame({"k": [1]}), ["k"], {}, DataError),
        (pd.DataFrame({"k": [1, 2]}), pd.DataFrame({"k": [1, 2]}), ["x"], {}, DataError),
        (pd.DataFrame({"k": [1, 2]}), pd.DataFrame({"k": [1, 2]}), [], {}, InvalidArgumentError),
        (pd.DataFrame({"k": [1, 2]}), pd.DataFrame({"k": [1, 2]}), ["k"], {"targets": [5]}, InvalidArgumentError),
    ],
)
def test_match_rates_bad_input(original, synthetic, keys, kwargs, error):
    with pytest.raises(error):
        match_rates(original, synthetic, keys, **kwargs)
