"""Bad parameters and arguments: one row per case, matching the message's key phrase."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cellsafe.distributions import GAF, NBI, PIG, Poisson, make_distribution
from cellsafe.exceptions import InvalidArgumentError

BAD_CONSTRUCTION = [
    (lambda: NBI(0.0), r"The 'sigma' parameter of NBI must be a float in \(0, 1e\+12\]\. Got 0\.0 instead\."),
    (lambda: NBI(-1), r"The 'sigma' parameter of NBI must be a float in \(0, 1e\+12\]\. Got -1 instead\."),
    (lambda: NBI(0.0), r"Got 0\.0 instead\.$"),  # the hint is for values too large only
    (lambda: NBI(1e13), r"\(0, 1e\+12\]\. Got 10000000000000\.0 instead\. Choose a smaller sigma"),
    (lambda: PIG(1e300), r"Got 1e\+300 instead\. Choose a smaller sigma"),
    (lambda: GAF(1e300), r"Got 1e\+300 instead\. Choose a smaller sigma"),
    (lambda: NBI(math.nan), r"'sigma' parameter of NBI .* Got nan"),
    (lambda: NBI(math.inf), r"'sigma' parameter of NBI .* Got inf"),
    (lambda: NBI("1"), r"'sigma' parameter of NBI .* Got '1'"),
    (lambda: NBI(None), r"'sigma' parameter of NBI .* Got None"),
    (lambda: NBI(True), r"'sigma' parameter of NBI .* Got True"),
    (lambda: PIG(-0.5), r"The 'sigma' parameter of PIG must be a float in \(0, 1e\+12\]"),
    (lambda: PIG(math.nan), r"'sigma' parameter of PIG"),
    (lambda: PIG([1.0]), r"'sigma' parameter of PIG"),
    (lambda: GAF(0.0), r"The 'sigma' parameter of GAF must be a float in \(0, 1e\+12\]"),
    (lambda: GAF(1.0, math.nan), r"'nu' parameter of GAF .* Got nan"),
    (lambda: GAF(1.0, math.inf), r"'nu' parameter of GAF must be a finite float"),
    (lambda: GAF(1.0, "0"), r"'nu' parameter of GAF"),
    (
        lambda: make_distribution("negbin", sigma=1.0),
        r"'name' parameter of make_distribution must be one of 'poisson', 'nbi', 'pig', 'gaf'\. Got 'negbin'",
    ),
    (lambda: make_distribution(3), r"'name' parameter of make_distribution must be one of"),
    (lambda: make_distribution("nbi"), r"'nbi' distribution needs a 'sigma' parameter"),
    (lambda: make_distribution("gaf", nu=0.0), r"'gaf' distribution needs a 'sigma' parameter"),
    (lambda: make_distribution("poisson", sigma=1.0), r"'poisson' distribution takes no 'sigma' parameter \(it has no parameters\)"),
    (lambda: make_distribution("pig", sigma=1.0, nu=0.5), r"'pig' distribution takes no 'nu' parameter"),
    (lambda: make_distribution("nbi", sigma=-2.0), r"'sigma' parameter of NBI"),
]


@pytest.mark.parametrize(("build", "message"), BAD_CONSTRUCTION)
def test_bad_construction(build, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        build()


DISTS = [Poisson(), NBI(1.0), PIG(1.0), GAF(1.0, 0.0)]
BAD_CALLS = [
    (lambda d: d.pmf(1, -1.0), r"The 'mu' argument of \w+\.pmf must be finite and >= 0.*Got -1\.0"),
    (lambda d: d.logpmf(1, [1.0, math.nan]), r"'mu' argument of \w+\.logpmf .* at index \(1,\)"),
    (lambda d: d.cdf(1, math.inf), r"'mu' argument of \w+\.cdf must be finite"),
    (lambda d: d.sf(1, "a"), r"'mu' argument of \w+\.sf must be numeric"),
    (lambda d: d.pmf(math.nan, 1.0), r"'k' argument of \w+\.pmf must be a count, not NaN"),
    (lambda d: d.pmf([[1, 2]], [1.0, 2.0, 3.0]), r"'k' and 'mu' arguments of \w+\.pmf must broadcast"),
    (lambda d: d.sample([-0.1, 1.0]), r"'mu' argument of \w+\.sample must be finite and >= 0"),
    (lambda d: d.sample(1.0, rng=-3), r"non-negative"),
    (lambda d: d.sample(1.0, rng="seed"), r"rng must be"),
    (lambda d: d.mean(-2.0), r"'mu' argument of \w+\.mean"),
    (lambda d: d.var(np.array([1.0, -1.0])), r"'mu' argument of \w+\.var .* at index \(1,\)"),
    (lambda d: d.upper_quantile(1.0, tol=0.0), r"'tol' parameter of \w+\.upper_quantile must be a float in \(0, 1\)"),
    (lambda d: d.upper_quantile(1.0, tol=1.5), r"'tol' parameter"),
    (lambda d: d.upper_quantile(-1.0), r"'mu' argument of \w+\.upper_quantile"),
]


@pytest.mark.parametrize("dist", DISTS, ids=repr)
@pytest.mark.parametrize(("call", "message"), BAD_CALLS)
def test_bad_arguments(dist, call, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        call(dist)


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        NBI(-1.0)
