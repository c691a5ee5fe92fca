"""``cellsafe dp-synthesize`` and ``cellsafe budget`` end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main


@pytest.fixture
def deaths_csv(tmp_path):
    df = pd.DataFrame(
        {
            "state": ["N", "N", "N", "S", "S"],
            "county": ["a", "b", "c", "d", "e"],
            "deaths": [4, 0, 7, 1, 3],
            "pop": [1000, 300, 2500, 800, 1200],
        }
    )
    path = tmp_path / "deaths.csv"
    df.to_csv(path, index=False)
    return path


def test_poisson_gamma_with_population(tmp_path, deaths_csv, capsys):
    out = tmp_path / "out"
    rc = main(
        ["dp-synthesize", str(deaths_csv), "--variables", "county", "--count", "deaths", "--population", "pop",
         "--mechanism", "poisson-gamma", "--epsilon", "2", "-m", "2", "--seed", "1", "--output", str(out)]
    )
    assert rc == 0
    assert "epsilon 1 per implicate, 2 in total" in capsys.readouterr().out
    for i in (1, 2):
        df = pd.read_csv(out / f"synthetic_{i}.csv")
        assert df["count"].sum() == 15
    meta = json.loads((out / "dp_synthesis.json").read_text())
    assert meta["epsilon_total"] == pytest.approx(2.0)
    assert meta["epsilon_per_implicate"] == pytest.approx(1.0)


def test_same_seed_same_output(tmp_path, deaths_csv):
    args = ["dp-synthesize", str(deaths_csv), "--variables", "state,county", "--count", "deaths", "--population",
            "pop", "--mechanism", "poisson-gamma", "--epsilon", "3", "--seed", "5", "--quiet"]
    assert main(args + ["--output", str(tmp_path / "a")]) == 0
    assert main(args + ["--output", str(tmp_path / "b")]) == 0
    a = pd.read_csv(tmp_path / "a" / "synthetic_1.csv")
    b = pd.read_csv(tmp_path / "b" / "synthetic_1.csv")
    assert a.equals(b)


def test_regional_prior_with_budget(tmp_path, deaths_csv, capsys):
    log = tmp_path / "budget.json"
    assert main(["budget", str(log), "--create", "--epsilon", "3"]) == 0
    args = ["dp-synthesize", str(deaths_csv), "--variables", "state,county", "--count", "deaths", "--population",
            "pop", "--mechanism", "poisson-gamma", "--epsilon", "2", "--prior", "regional:state",
            "--prior-epsilon", "0.5", "--seed", "2", "--budget-log", str(log), "--quiet"]
    assert main(args + ["--output", str(tmp_path / "o1")]) == 0
    data = json.loads(log.read_text())
    assert data["spent"]["epsilon"] == pytest.approx(2.5)
    # a second release would exceed the budget: refused before anything is written
    rc = main(args + ["--output", str(tmp_path / "o2")])
    assert rc == 2
    assert "beyond the budget" in capsys.readouterr().err
    assert not (tmp_path / "o2" / "synthetic_1.csv").exists()
    capsys.readouterr()
    assert main(["budget", str(log)]) == 0
    shown = capsys.readouterr().out
    assert "spent    epsilon 2.5" in shown and "releases 1" in shown
    assert main(["budget", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["spent"]["epsilon"] == pytest.approx(2.5)


def test_multinomial_dirichlet_on_microdata(tmp_path):
    rng = np.random.default_rng(0)
    micro = pd.DataFrame({"sex": rng.choice(["F", "M"], 50), "age": rng.choice(["y", "m", "o"], 50)})
    micro.to_csv(tmp_path / "m.csv", index=False)
    out = tmp_path / "o"
    rc = main(["dp-synthesize", str(tmp_path / "m.csv"), "--variables", "sex,age", "--mechanism",
               "multinomial-dirichlet", "--epsilon", "1", "--seed", "3", "--output", str(out), "--quiet",
               "--format", "parquet"])
    assert rc == 0
    assert pd.read_parquet(out / "synthetic_1.parquet")["count"].sum() == 50
    meta = json.loads((out / "dp_synthesis.json").read_text())
    assert meta["parameters"]["alpha"] == pytest.approx(50 / np.expm1(1.0))


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--epsilon", "0"], "--epsilon must be positive"),
        (["--epsilon", "1", "--prior", "state"], "--prior must be"),
        (["--epsilon", "1", "--population", "nope"], "population column 'nope'"),
        (["--epsilon", "1", "-m", "0"], "-m must be"),
        (["--epsilon", "1", "--prior-epsilon", "0.5"], "--prior-epsilon applies to --prior regional"),
    ],
)
def test_bad_input(tmp_path, deaths_csv, capsys, extra, message):
    rc = main(["dp-synthesize", str(deaths_csv), "--variables", "county", "--count", "deaths", "--mechanism",
               "poisson-gamma", "--output", str(tmp_path / "o")] + extra)
    assert rc == 2
    assert message in capsys.readouterr().err


def test_budget_bad_input(tmp_path, capsys):
    assert main(["budget", str(tmp_path / "missing.json")]) == 2
    assert "no privacy budget log" in capsys.readouterr().err
    assert main(["budget", str(tmp_path / "b.json"), "--create"]) == 2
    assert "--epsilon" in capsys.readouterr().err
