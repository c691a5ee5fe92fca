"""cellsafe tune."""

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe import CountTable
from cellsafe.cli.main import main
from cellsafe.tuning import poisson_alpha_for_zero_share


@pytest.fixture
def freq(tmp_path):
    rng = np.random.default_rng(11)
    a, b = np.meshgrid(np.arange(30), np.arange(40), indexing="ij")
    n = rng.negative_binomial(0.3, 0.1, size=a.size)
    df = pd.DataFrame({"a": a.ravel(), "b": b.ravel(), "n": n})
    path = tmp_path / "freq.csv"
    df.to_csv(path, index=False)
    return path, df


def _run(path, *extra):
    return main(["tune", str(path), "--variables", "a,b", "--count", "n", *extra])


def test_tune_alpha_zero_share(freq, capsys):
    path, df = freq
    assert _run(path, "--distribution", "poisson", "--solve", "alpha", "--target", "tau1(0)=tau2(0)", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    table = CountTable.from_frame(df[df.n > 0], ["a", "b"], count="n")
    assert out["alpha"] == pytest.approx(poisson_alpha_for_zero_share(table), rel=1e-12)


def test_tune_sigma_and_nu(freq, capsys):
    path, _ = freq
    assert _run(path, "--distribution", "nbi", "--solve", "sigma", "--target", "tau3(1)=0.25", "--json") == 0
    assert json.loads(capsys.readouterr().out)["sigma"] == pytest.approx(1.0, rel=1e-8)
    assert _run(path, "--distribution", "gaf", "--sigma", "1", "--solve", "nu", "--target", "tau4(1)=0.6") == 0
    assert capsys.readouterr().out.startswith("nu = ")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--distribution", "nbi", "--solve", "sigma", "--target", "tau4(1)=1.5"], "must lie in [0, 1]"),
        (["--distribution", "nbi", "--solve", "sigma", "--target", "tau4(1)=0.001"], "unreachable"),
        (["--distribution", "nbi", "--solve", "sigma", "--target", "pmse=0.1"], "unknown metric"),
        (["--distribution", "poisson", "--solve", "sigma", "--target", "tau4(1)=0.4"], "Poisson has no sigma"),
        (["--distribution", "nbi", "--sigma", "1", "--solve", "nu", "--target", "loss=5"], "only the gamma family"),
    ],
)
def test_tune_bad_input(freq, capsys, extra, message):
    path, _ = freq
    assert _run(path, *extra) == 2
    assert message in capsys.readouterr().err


def test_tune_any_cellwise_mechanism_by_spec(freq, capsys):
    path, _ = freq
    assert _run(path, "--mechanism", "ckm:D=3,V=1", "--solve", "V", "--target", "tau3(1)=0.5", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["V"] > 0 and out["achieved"] == pytest.approx(0.5, abs=1e-9)


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--mechanism", "nbi:sigma=1", "--sigma", "2", "--solve", "sigma"], "drop --sigma"),
        (["--mechanism", "scr:publication=a,base=3", "--solve", "base"], "not a cell-wise mechanism"),
        (["--mechanism", "ckm:D=3,V=1", "--solve", "sigma"], "tunable parameter of CellKeyMethod: 'V'"),
        (["--solve", "alpha"], "give --distribution NAME"),
    ],
)
def test_tune_mechanism_spec_errors(freq, capsys, extra, message):
    path, _ = freq
    assert _run(path, *extra, "--target", "tau3(1)=0.5") == 2
    assert message in capsys.readouterr().err


def test_one_target_syntax_with_report(freq, capsys):
    """tune accepts the report's bounds ('tau3(1)<=0.25'): solved at the boundary, with the side that meets it."""
    path, _ = freq
    assert _run(path, "--distribution", "nbi", "--solve", "sigma", "--target", "tau3(1)=0.25", "--json") == 0
    equal = json.loads(capsys.readouterr().out)
    assert _run(path, "--distribution", "nbi", "--solve", "sigma", "--target", "tau3(1)<=0.25", "--json") == 0
    bound = json.loads(capsys.readouterr().out)
    assert bound["sigma"] == pytest.approx(equal["sigma"], rel=1e-10) and equal["meets"] is None
    # more dispersion, fewer real uniques stay unique: sigma at or above the boundary meets tau3(1) <= 0.25
    assert bound["target"] == "tau3(1)<=0.25" and bound["meets"].startswith("sigma >= ")
    from cellsafe.report import parse_requirement

    assert parse_requirement("tau3(1)<=0.25").text == "tau3(1) <= 0.25"
