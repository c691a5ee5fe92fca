"""dp.prior_weight: the prior's weight against the data's, and the expected release it implies."""

import numpy as np
import pytest

from cellsafe import CountTable, Variable
from cellsafe.dp import prior_weight
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import MultinomialDirichletSynthesizer, PoissonGammaSynthesizer
from cellsafe.metrics import hellinger_utility


def test_dirichlet_expected_release_against_simulation_and_metrics():
    t = CountTable([Variable("a", tuple("wxyz"), public=True)], [0, 1], [6, 2])
    s = MultinomialDirichletSynthesizer(alpha=1.5)
    w = prior_weight(s, t)
    assert w.prior == 6.0 and w.data == 8 and not w.prior_dominates
    expected = 8 * (np.array([6, 2, 0, 0]) + 1.5) / (8 + 6.0)
    draws = np.array([d.dense() for d in s.sample(t, m=4000, rng=1)], dtype=float)
    se = draws.std(axis=0) / np.sqrt(draws.shape[0])
    assert np.all(np.abs(draws.mean(axis=0) - expected) < 5 * se)
    assert w.utility == pytest.approx(hellinger_utility([6, 2, 0, 0], expected), rel=1e-12)
    # a per-cell alpha gives the same numbers
    assert prior_weight(MultinomialDirichletSynthesizer(alpha=np.full(4, 1.5)), t).utility == pytest.approx(w.utility)


def test_a_heavy_prior_is_flagged_and_utility_falls():
    t = CountTable([Variable("a", tuple(range(100)), public=True)], [0, 1], [30, 20])
    light = prior_weight(MultinomialDirichletSynthesizer.for_epsilon(5.0, 50), t)
    heavy = prior_weight(MultinomialDirichletSynthesizer.for_epsilon(0.1, 50), t)
    assert not light.prior_dominates and heavy.prior_dominates
    assert heavy.utility < light.utility


def test_poisson_gamma_weight_is_the_sum_of_shapes():
    t = CountTable([Variable("a", ("x", "y", "z"), public=True)], [0, 1, 2], [5, 1, 4])
    s = PoissonGammaSynthesizer.for_epsilon(2.0, t, population=np.array([1000.0, 200.0, 800.0]))
    w = prior_weight(s, t)
    assert w.prior == pytest.approx(float(np.sum(s.a)))
    assert 0 < w.utility <= 1
    with pytest.raises(InvalidArgumentError, match="applies to"):
        prior_weight(object(), t)
