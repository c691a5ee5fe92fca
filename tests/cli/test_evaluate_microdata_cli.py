"""``cellsafe evaluate-microdata``: JSON summary, text output, figures and errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main

ADULT = Path(__file__).resolve().parents[1] / "reference" / "adult" / "adult.csv.gz"

COLS = ["age", "sex", "race", "relationship", "income>50K"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if not ADULT.exists():
        pytest.skip("the Adult data are not available")
    d = tmp_path_factory.mktemp("emd")
    df = pd.read_csv(ADULT, usecols=COLS).sample(3000, random_state=1).reset_index(drop=True)
    o, h = df.iloc[:2000], df.iloc[2000:]
    gen = np.random.default_rng(2)
    ind = pd.DataFrame({c: gen.permutation(o[c].to_numpy()) for c in COLS})
    o.to_csv(d / "orig.csv", index=False)
    h.to_parquet(d / "hold.parquet", index=False)
    ind.to_csv(d / "ind.csv", index=False)
    return d


def test_json_summary(files, capsys):
    rc = main(
        [
            "evaluate-microdata",
            str(files / "orig.csv"),
            str(files / "ind.csv"),
            str(files / "orig.csv"),
            "--holdout",
            str(files / "hold.parquet"),
            "--keys",
            "age,sex,race",
            "--sensitive",
            "income>50K",
            "--json",
            "--seed",
            "3",
            "--sample",
            "200",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for k in ("pmse", "pmse_ratio", "specks", "auc"):
        assert isinstance(out["utility"][k], float)
    for k in ("repU", "DiSCO", "TCAP"):
        assert 0 <= out["risk"][k] <= 1
    assert len(out["utility"]["implicates"]) == 2
    assert out["utility"]["implicates"][0]["pmse_ratio"] > 5  # independent columns
    assert out["risk"]["membership"]["auc"] is not None


@pytest.mark.slow
def test_text_output_and_plots(files, capsys, tmp_path):
    rc = main(
        [
            "evaluate-microdata",
            str(files / "orig.csv"),
            str(files / "ind.csv"),
            "--categorical",
            "sex,race",
            "--tables",
            "1,2",
            "--plot",
            str(tmp_path / "figs"),
            "--seed",
            "1",
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "pMSE ratio" in text and "SPECKS" in text and "AUC" in text
    assert "DiSCO" not in text  # no keys, no disclosure section
    for name in ("univariate.png", "propensity.png"):
        assert (tmp_path / "figs" / name).stat().st_size > 1000


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--keys", "age"], "--keys and --sensitive"),
        (["--keys", "age", "--sensitive", "nope"], "nope"),
        (["--tables", "1,x"], "--tables"),
        (["--seed", "-1"], "--seed"),
        (["--sample", "0"], "--sample"),
    ],
)
def test_errors(files, capsys, extra, message):
    rc = main(["evaluate-microdata", str(files / "orig.csv"), str(files / "ind.csv"), *extra])
    assert rc == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("old, new", [("--target", "--sensitive"), ("--formula", "--model"), ("--method", "--propensity")])
def test_renamed_options_name_their_new_names(files, capsys, old, new):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate-microdata", str(files / "orig.csv"), str(files / "ind.csv"), old, "x"])
    assert exit_.value.code == 2 and f"{old} is now called {new}" in capsys.readouterr().err


def test_regression_option(files, capsys):
    rc = main(
        [
            "evaluate-microdata",
            str(files / "orig.csv"),
            str(files / "orig.csv"),
            "--categorical",
            "all",
            "--model",
            "`income>50K` ~ age + sex",
            "--family",
            "binomial",
            "--tables",
            "1",
            "--json",
        ]
    )
    assert rc == 0
    reg = json.loads(capsys.readouterr().out)["utility"]["regression"]
    assert reg["sso_share"] == 1.0 and reg["rule"] == "fully"
    assert "sex1" in reg["coefficients"]  # sex as a category: treatment contrast against 0


def test_missing_file(files, capsys):
    assert main(["evaluate-microdata", str(files / "nope.csv"), str(files / "ind.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_help_lists_the_command(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate-microdata", "--help"])
    assert "examples:" in capsys.readouterr().out
