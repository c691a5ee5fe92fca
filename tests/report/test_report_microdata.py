"""A microdata release in the report: its measures equal those of ``cellsafe evaluate-microdata --json``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from _json_compare import assert_same_numbers

from cellsafe.cli.main import main

pytestmark = pytest.mark.slow


def test_microdata_release_numbers_equal_evaluate_microdata(tmp_path, capsys):
    gen = np.random.default_rng(5)
    n = 800
    age = gen.integers(18, 80, n)
    people = pd.DataFrame({
        "age": age,
        "sex": gen.choice(["F", "M"], n),
        "region": gen.choice(["N", "S", "E", "W"], n),
        "income": (gen.random(n) < 0.2 + 0.005 * (age - 18)).astype(int),
    })
    people.to_csv(tmp_path / "adult.csv", index=False)
    assert main(["synthesize-microdata", str(tmp_path / "adult.csv"), "--method", "sample", "-m", "2", "--seed", "1",
                 "--output", str(tmp_path / "syn"), "--quiet"]) == 0
    measures = ["--keys", "age,sex,region", "--model", "income ~ age + sex", "--family", "binomial", "--seed", "4"]
    out = tmp_path / "micro.html"
    assert main(["report", str(tmp_path / "adult.csv"), "--variables", "sex,region", "--release", str(tmp_path / "syn"),
                 "--sensitive", "income", *measures, "--output", str(out), "--quiet"]) == 0
    [entry] = json.loads(out.with_suffix(".json").read_text())["sections"]["microdata"]
    files = sorted(str(p) for p in (tmp_path / "syn").glob("synthetic_*.csv"))
    capsys.readouterr()
    assert main(["evaluate-microdata", str(tmp_path / "adult.csv"), *files, "--sensitive", "income", *measures,
                 "--tables", "1,2", "--numeric", "age,income", "--json", "--quiet"]) == 0  # as the report reads them
    ref = json.loads(capsys.readouterr().out)
    assert entry["m"] == 2
    for key in ("pmse", "pmse_ratio", "auc", "regression"):
        assert_same_numbers(entry["evaluation"]["utility"][key], ref["utility"][key], key)
    for key in ("DiSCO", "DiSCO_chance", "TCAP", "baseCAPd", "repU", "DiO"):
        assert_same_numbers(entry["evaluation"]["risk"][key], ref["risk"][key], key)
    html = out.read_text()
    assert html.count("<svg") == 3  # one-way distributions, propensity scores, CI overlap
    assert "all 2 implicates" in html
