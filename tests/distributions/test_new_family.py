"""A new count family is two pieces: its module (the distribution) and one registration (its catalog entry).

Registered here at run time, a toy family (a zero-inflated Poisson of mean mu) appears everywhere a family does,
with nothing else edited: the command line's choices and options, specs, the a priori assessment, tuning, the
frontier's default grid and the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from scipy import special

from cellsafe import _catalog
from cellsafe._params import Param
from cellsafe._registry import register
from cellsafe.cli.main import build_parser, main
from cellsafe.distributions import CountDistribution, make_distribution
from cellsafe.mechanisms import make_mechanism, mechanism_spec
from cellsafe.report import Report
from cellsafe.tuning import default_grid, frontier, tune

SIZES = {0: 400, 1: 60, 2: 30, 5: 12, 40: 3}


def _toy_family() -> type:
    """The module of the new family: a zero-inflated Poisson with mean mu (P(structural 0) = theta / (1 + theta))."""

    @dataclass(frozen=True)
    class ZeroInflatedPoisson(CountDistribution):
        theta: float
        name: ClassVar[str] = "toy"
        _params: ClassVar[tuple[Param, ...]] = (
            Param("theta", low=0.0, low_open=True, high=1e6, scan=(0.01, 10.0), log=True, doc="zero inflation"),
        )

        def __post_init__(self) -> None:
            self._check_params()

        def _logpmf(self, k: np.ndarray, mu: np.ndarray) -> np.ndarray:
            lam = mu * (1.0 + self.theta)
            pois = k * np.log(lam) - lam - special.gammaln(k + 1.0) - np.log1p(self.theta)
            return np.where(k == 0, np.logaddexp(np.log(self.theta) - np.log1p(self.theta), pois), pois)

        def _sample(self, mu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
            keep = rng.random(mu.shape) >= self.theta / (1.0 + self.theta)
            return np.where(keep, rng.poisson(mu * (1.0 + self.theta)), 0).astype(np.int64)

        def _mean(self, mu: np.ndarray) -> np.ndarray:
            return np.asarray(mu, dtype=np.float64)

        def _var(self, mu: np.ndarray) -> np.ndarray:
            return mu + self.theta * mu**2

    return ZeroInflatedPoisson


@pytest.fixture
def toy():
    """The registration: one entry, with its part of the frontier's default grid; taken out again afterwards."""
    cls = register("distribution", "toy", title="zero-inflated Poisson",
                   grid=_catalog.Grid(1, (("theta", 0.1, 10.0, True),)))(_toy_family())
    yield cls
    _catalog.remove("distribution", "toy")


def test_the_library_knows_it(toy):
    d = make_distribution("toy", theta=0.5)
    assert isinstance(d, toy) and float(d.mean(3.0)) == 3.0
    assert float(np.sum(d.pmf(np.arange(200), 3.0))) == pytest.approx(1.0, abs=1e-12)
    mech = make_mechanism("toy:theta=0.5,alpha=0.01")
    assert mechanism_spec(mech) == "toy:theta=0.5,alpha=0.01" and make_mechanism(mechanism_spec(mech)) == mech


def test_the_command_line_offers_it(toy, tmp_path, capsys):
    sub = next(a for a in build_parser("_assess")._actions if a.dest == "command").choices["assess"]
    options = {o: a for a in sub._actions for o in a.option_strings}
    assert "toy" in options["--distribution"].choices and "--theta" in options
    assert "toy" in options["--mechanism"].help
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": list("xxyyzzww"), "b": list("uvuvuvuv"), "n": [0, 1, 2, 5, 1, 0, 9, 1]}).to_csv(path, index=False)
    common = [str(path), "--variables", "a,b", "--count", "n"]
    assert main(["assess", *common, "--distribution", "toy", "--theta", "0.5", "--json"]) == 0
    by_option = json.loads(capsys.readouterr().out)
    assert main(["assess", *common, "--mechanism", "toy:theta=0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tau"] == by_option["tau"]
    assert main(["tune", *common, "--distribution", "toy", "--theta", "1", "--solve", "theta",
                 "--target", "tau3(1)=0.2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["theta"] > 0


def test_tuning_and_the_frontier_use_it(toy):
    result = tune(SIZES, make_mechanism("toy:theta=1"), "theta", "tau3(1)=0.2")
    assert result.achieved == pytest.approx(0.2, abs=1e-9)
    grid = default_grid(n=50)
    assert {p["family"] for p in grid} == {"poisson", "nbi", "pig", "gaf", "toy"}
    f = frontier(SIZES, default_grid(["toy", "nbi"], n=10))
    assert set(f.points["mechanism"]) == {"toy", "nbi"} and "theta" in f.points.columns


def test_the_report_assesses_it(toy):
    from cellsafe import CountTable, Variable

    t = CountTable([Variable("a", list("pqrs")), Variable("b", list("uvw"))], [0, 1, 2, 5, 7], [1, 2, 5, 1, 9])
    r = Report(t, ["toy:theta=0.5", "nbi:sigma=1"], name="toy", targets=["tau4(1)<=0.9"], hellinger=False)
    specs = [m["spec"] for m in r.sections["mechanisms"]]
    assert "toy:theta=0.5" in specs
    drawn = {p["spec"] for p in r.sections["frontier"]["points"]}
    assert {"toy:theta=0.5", "toy:theta=1", "toy:theta=0.25"} <= drawn  # its neighbourhood scales its own theta
