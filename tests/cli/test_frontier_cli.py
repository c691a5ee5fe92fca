"""cellsafe frontier."""

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main


@pytest.fixture
def freq(tmp_path):
    rng = np.random.default_rng(2)
    a, b = np.meshgrid(np.arange(20), np.arange(25), indexing="ij")
    df = pd.DataFrame({"a": a.ravel(), "b": b.ravel(), "n": rng.negative_binomial(0.4, 0.1, size=a.size)})
    path = tmp_path / "freq.csv"
    df.to_csv(path, index=False)
    return path


def test_frontier_writes_points_and_plot(freq, tmp_path, capsys):
    out, png = tmp_path / "f.csv", tmp_path / "f.png"
    rc = main(["frontier", str(freq), "--variables", "a,b", "--count", "n", "--distributions", "poisson,nbi,pig",
               "--grid", "24", "--output", str(out), "--plot", str(png)])
    assert rc == 0
    pts = pd.read_csv(out)
    assert len(pts) == 24 and pts["efficient"].any()
    assert png.stat().st_size > 10_000
    assert "on the frontier" in capsys.readouterr().out


def test_frontier_settings_file(freq, tmp_path):
    settings = tmp_path / "settings.csv"
    pd.DataFrame({"family": ["nbi", "gaf"], "sigma": [0.5, 1.0], "nu": [np.nan, -0.5]}).to_csv(settings, index=False)
    out = tmp_path / "f.csv"
    assert main(["frontier", str(freq), "--variables", "a,b", "--count", "n", "--grid", str(settings),
                 "--utility", "hellinger", "--output", str(out)]) == 0
    assert list(pd.read_csv(out)["family"]) == ["nbi", "gaf"]


@pytest.mark.parametrize(
    "extra, message",
    [(["--distributions", "weibull"], "unknown family"), (["--grid", "0"], "--grid"), (["--plot", "x.jpg"], ".png or .svg")],
)
def test_frontier_bad_input(freq, tmp_path, capsys, extra, message):
    args = ["frontier", str(freq), "--variables", "a,b", "--count", "n", "--output", str(tmp_path / "f.csv")]
    assert main(args + extra) == 2
    assert message in capsys.readouterr().err


def test_frontier_of_mixed_mechanisms(tmp_path, capsys):
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": np.repeat(np.arange(20), 10), "b": np.tile(np.arange(10), 20)})
    df["n"] = rng.negative_binomial(0.5, 0.2, size=len(df))
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "mixed.csv"
    args = ["frontier", str(src), "--variables", "a,b", "--count", "n", "--output", str(out)]
    for spec in ("nbi:sigma=0.5", "ckm:D=3,V=1", "poisson:alpha=0.01"):
        args += ["--mechanism", spec]
    assert main(args) == 0
    points = pd.read_csv(out)
    assert list(points["mechanism"]) == ["nbi", "ckm", "poisson"]
    assert list(points["spec"]) == ["nbi:sigma=0.5", "ckm:D=3,V=1", "poisson:alpha=0.01"]
