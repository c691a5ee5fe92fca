"""004's simulation study script runs and reproduces its qualitative result (small settings)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_county_data_matches_004_setting():
    sim = _load("dp_simulation")
    data = sim.county_data()
    assert data["population"].shape == (3109,)
    assert abs(np.sum(data["population"] * data["rate"]) - 11_364) < 20
    assert data["population"].max() / data["population"].min() > 100  # very unequal sizes


@pytest.mark.slow
def test_simulation_poisson_gamma_dominates_when_populations_differ(tmp_path, capsys):
    sim = _load("dp_simulation")
    out = tmp_path / "fig.png"
    assert sim.main(["--epsilons", "1,8", "--datasets", "1", "--implicates", "1", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "when n_i differ: True" in text
    assert out.stat().st_size > 10_000
