"""cellsafe evaluate."""

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe import CountTable
from cellsafe.cli.main import main
from cellsafe.distributions import NBI
from cellsafe.mechanisms.saturated import SaturatedSynthesizer
from cellsafe.metrics import table_metrics


def test_evaluate_against_api(tmp_path, capsys):
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"a": rng.integers(0, 5, 1500), "b": rng.integers(0, 12, 1500)})
    df.to_csv(tmp_path / "orig.csv", index=False)
    table = CountTable.from_frame(df, ["a", "b"])
    released = SaturatedSynthesizer(NBI(0.3)).sample(table, m=2, rng=1)
    files = []
    for i, t in enumerate(released):
        p = tmp_path / f"syn{i}.csv"
        t.to_frame().to_csv(p, index=False)
        files.append(str(p))
    assert main(["evaluate", str(tmp_path / "orig.csv"), *files, "--variables", "a,b", "--k", "0,1,2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = table_metrics(table, released, k=[0, 1, 2])
    assert out["m"] == 2
    assert set(out["tau"]) == {"0", "1", "2"}
    assert out["tau"]["1"]["tau1"] == pytest.approx(ref.tau.at[1, "tau1"])
    tau4_0 = ref.tau.at[0, "tau4"]  # undefined (0/0): null in standard JSON, never a NaN token
    assert out["tau"]["0"]["tau4"] is None if np.isnan(tau4_0) else out["tau"]["0"]["tau4"] == pytest.approx(tau4_0)
    assert out["squared_error"] == pytest.approx(ref.squared_error)
    assert out["hellinger_utility"] == pytest.approx(ref.hellinger_utility)
    assert out["total"]["original"] == 1500
    assert main(["evaluate", str(tmp_path / "orig.csv"), files[0], "--variables", "a,b"]) == 0
    assert "tau4" in capsys.readouterr().out


def test_evaluate_unknown_category(tmp_path, capsys):
    pd.DataFrame({"a": [0, 1, 1]}).to_csv(tmp_path / "o.csv", index=False)
    pd.DataFrame({"a": [7], "count": [2]}).to_csv(tmp_path / "s.csv", index=False)
    assert main(["evaluate", str(tmp_path / "o.csv"), str(tmp_path / "s.csv"), "--variables", "a"]) == 2
    assert "error" in capsys.readouterr().err
