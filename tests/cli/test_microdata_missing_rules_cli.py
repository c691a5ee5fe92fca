"""synthesize-microdata and evaluate-microdata on penguins with R's NA: missing values, rules, strata."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from cellsafe.cli.main import main

PENGUINS = Path(__file__).resolve().parents[1] / "reference" / "penguins" / "penguins.csv"
NUMBERS = "bill_length_mm,bill_depth_mm,flipper_length_mm,body_mass_g"


@pytest.fixture()
def rules(tmp_path) -> Path:
    path = tmp_path / "rules.txt"
    path.write_text("# a penguin without a weight has no recorded sex\nsex: body_mass_g == NA -> NA\n"
                    "sex: species == 'Gentoo' and body_mass_g > 5700 -> 'male'\n")
    return path


@pytest.mark.slow
def test_penguins_with_na_rules_and_strata(tmp_path, rules, capsys):
    out = tmp_path / "out"
    rc = main(["synthesize-microdata", str(PENGUINS), "--missing-values", "sex=NA", "--rules", str(rules),
               "--strata", "island", "--jobs", "2", "--proper", "-m", "3", "--seed", "4", "--output", str(out)])
    assert rc == 0
    err = capsys.readouterr().err
    assert "notice: read as numbers (every value is a number): bill_length_mm (164 distinct values)" in err
    assert "body_mass_g (94 distinct values)" in err
    assert "strata smaller than 80 records (Torgersen (52))" in err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["strata"] == {"variable": "island", "sizes": {"Biscoe": 168, "Dream": 124, "Torgersen": 52}, "pooled": ["Torgersen"]}
    assert [r["broken"] for r in manifest["rules"]] == [0, 0]
    assert manifest["missing_values"] == {"sex": ["NA"]} and manifest["proper"] is True
    assert "--missing-values sex=NA" in manifest["command"] and "--strata island" in manifest["command"]
    original = pd.read_csv(PENGUINS)
    for i in (1, 2, 3):
        s = pd.read_csv(out / f"synthetic_{i}.csv")
        assert s["island"].tolist() == original["island"].tolist()
        assert s.loc[s["body_mass_g"].isna(), "sex"].isna().all()
        assert (s.loc[(s["species"] == "Gentoo") & (s["body_mass_g"] > 5700), "sex"] == "male").all()

    capsys.readouterr()
    rc = main(["evaluate-microdata", str(PENGUINS), *[str(out / f"synthetic_{i}.csv") for i in (1, 2, 3)],
               "--numeric", NUMBERS, "--missing-values", "sex=NA", "--rules", str(rules), "--tables", "1,2", "--json", "--quiet"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)["utility"]
    assert report["missingness"]["columns"]["sex"]["original"] == pytest.approx(11 / 344)
    assert [r["broken_synthetic"] for r in report["rules"]] == [[0, 0, 0], [0, 0, 0]]


@pytest.mark.parametrize(
    "args, match",
    [
        (["--missing-values", "sexx=NA"], "'sexx' is not a column"),
        (["--levels", "year"], "--levels must be COLUMN=A,B,C"),
        (["--min-stratum", "5"], "--min-stratum needs --strata"),
        (["--jobs", "0"], "--jobs must be a positive integer"),
        (["--rules", "missing.txt"], "rules file 'missing.txt' does not exist"),
        (["--numeric", "sex"], "declared numeric but has a value that is not a number, 'male'"),
    ],
)
def test_bad_options_say_what_to_fix(tmp_path, capsys, args, match):
    rc = main(["synthesize-microdata", str(PENGUINS), *args, "--output", str(tmp_path / "out")])
    assert rc == 2
    assert match in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
