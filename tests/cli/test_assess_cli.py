"""cellsafe assess."""

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe import CountTable, apriori
from cellsafe.cli.main import main
from cellsafe.distributions import NBI
from cellsafe.mechanisms.saturated import SaturatedSynthesizer


@pytest.fixture
def micro(tmp_path):
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.integers(0, 6, 2000), "b": rng.choice(list("xyz"), 2000), "c": rng.integers(0, 20, 2000)})
    path = tmp_path / "micro.csv"
    df.to_csv(path, index=False)
    return path, df


def test_assess_json_keys_and_values(micro, capsys):
    path, df = micro
    rc = main(["assess", str(path), "--variables", "a,b,c", "--distribution", "nbi", "--sigma", "0.5",
               "--alpha", "0.01", "--k", "0,1", "--d", "50", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["tau"]) == {"0", "1"}
    assert set(out["tau"]["1"]) == {"tau1", "tau2", "tau3", "tau4"}
    assert {"expected", "sd"} <= set(out["total"])
    table = CountTable.from_frame(df, ["a", "b", "c"])
    mech = SaturatedSynthesizer(NBI(0.5), alpha=0.01)
    ref = apriori.assess(table, mech, k=[0, 1], d=[50])
    assert out["tau"]["1"]["tau4"] == pytest.approx(ref.tau.at[1, "tau4"], rel=1e-12)
    assert out["expected_squared_error"] == pytest.approx(ref.squared_error.per_implicate, rel=1e-12)
    assert out["expected_hellinger_utility"] == pytest.approx(ref.hellinger.utility, rel=1e-12)
    assert out["total"]["sd"] == pytest.approx(ref.total_distribution.sd, rel=1e-12)
    assert out["total"]["prob_within"]["50"] == pytest.approx(ref.total_distribution.prob_within(50), rel=1e-12)


def test_assess_text(micro, capsys):
    path, _ = micro
    assert main(["assess", str(path), "--variables", "a,b,c", "--distribution", "poisson", "--no-hellinger"]) == 0
    out = capsys.readouterr().out
    assert "tau4" in out and "expected squared error" in out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--k", "-1"], "--k must list counts >= 0"),
        (["--k", "a"], "integer counts"),
        (["--distribution", "nbi"], "needs --sigma"),
        (["--distribution", "poisson", "--p", "x"], "--p must be"),
    ],
)
def test_assess_bad_input(micro, capsys, extra, message):
    path, _ = micro
    args = ["assess", str(path), "--variables", "a,b,c"]
    if "--distribution" not in extra:
        args += ["--distribution", "poisson"]
    assert main(args + extra) == 2
    assert message in capsys.readouterr().err
