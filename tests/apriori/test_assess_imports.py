"""The a priori assessment computes and prints without pandas: its frames are built only when asked for.

``cellsafe assess`` on a CSV file imports neither pandas nor DuckDB (a third of a second of start-up
where the metrics take hundredths), and prints what the pandas frames printed, to the byte.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from cellsafe import CountTable, Variable, apriori
from cellsafe._frames import MetricGrid, tau_dict, within_dict
from cellsafe.cli.main import main
from cellsafe.distributions import NBI
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms.saturated import SaturatedSynthesizer

_PROBE = r"""
import json, sys
from cellsafe.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


@pytest.fixture
def table_csv(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.choice(list("pqrs"), 3000), "b": rng.integers(0, 30, 3000),
                          "c": rng.choice(["x", "y"], 3000)})
    counts = frame.value_counts().rename("n").reset_index()
    path = tmp_path / "table.csv"
    counts.to_csv(path, index=False)
    return path, counts


def test_assess_command_imports_no_pandas_and_prints_the_same(table_csv, capsys):
    path, counts = table_csv
    argv = ["assess", str(path), "--variables", "a,b,c", "--count", "n", "--distribution", "nbi", "--sigma", "0.5",
            "--alpha", "0.01", "--d", "20"]
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv, "--json"], capture_output=True, text=True, check=True)
    *printed, last = done.stdout.splitlines()
    probe = json.loads(last)
    assert probe["code"] == 0
    assert not {"pandas", "duckdb"} & set(probe["loaded"])
    out = json.loads("\n".join(printed))
    table = CountTable.from_frame(counts, ["a", "b", "c"], count="n")
    ref = apriori.assess(table, SaturatedSynthesizer(NBI(0.5), alpha=0.01), d=[20])
    assert out == json.loads(json.dumps({**ref.to_dict(), "engine": "local"}))
    # the text report: what pandas' to_string printed
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert ref.tau.to_string(float_format=lambda x: f"{x:.4f}") in text
    assert ref.within.to_string(float_format=lambda x: f"{x:.4f}") in text


def test_frames_are_the_grids():
    a = apriori.assess({0: 90, 1: 6, 2: 4, 40: 1}, SaturatedSynthesizer(NBI(1.0), alpha=0.02), k=[0, 1, 7], p=[5, 50])
    assert isinstance(a.tau, pd.DataFrame) and a.tau is a.tau
    assert list(a.tau.columns) == ["tau1", "tau2", "tau3", "tau4"] and a.tau.index.name == "k"
    assert a.tau.index.tolist() == [0, 1, 7] and a.within.index.tolist() == [5.0, 50.0]
    mech = SaturatedSynthesizer(NBI(1.0), alpha=0.02)
    pd.testing.assert_frame_equal(a.to_frame(), apriori.tau({0: 90, 1: 6, 2: 4, 40: 1}, mech, k=[0, 1, 7]))
    pd.testing.assert_frame_equal(a.within, apriori.expected_within({0: 90, 1: 6, 2: 4, 40: 1}, mech, p=[5, 50]))
    assert tau_dict(a.tau) == tau_dict(a.tau_grid) and within_dict(a.within) == within_dict(a.within_grid)


_FMT = lambda x: f"{x:.4f}"  # noqa: E731


@pytest.mark.parametrize(
    "name, index",
    [
        ("k", np.array([0, 1, 2, 3], dtype=np.int64)),
        ("k", np.array([0, 10**8, 7], dtype=np.int64)),
        ("p", np.array([0.5, 1.0, 5.0, 10.0, 50.0])),
        ("p", np.array([10.0, 50.0])),
        ("p", np.array([0.001, 12345.678, 2.25])),
        ("p", np.array([1e-7, 3.0])),      # pandas' scientific layout: left to pandas
        ("p", np.array([1 / 3, 2.0])),     # more than 6 decimals: left to pandas
        ("p", np.array([2e6, 1.0])),
    ],
)
@pytest.mark.parametrize("columns", [("tau1", "tau2", "tau3", "tau4"), ("all", "nonzero")])
def test_grid_text_is_pandas_text(name, index, columns):
    rng = np.random.default_rng(index.size)
    values = rng.random((index.size, len(columns)))
    values[0, -1] = np.nan
    values[-1, 0] = 1.0
    grid = MetricGrid(name, index, columns, values)
    assert grid.to_string(_FMT) == grid.frame().to_string(float_format=_FMT)


def test_cell_sizes_of_a_table_without_its_series():
    v = [Variable("a", tuple(range(6))), Variable("b", ("x", "y"))]
    t = CountTable(v, [0, 3, 4, 7, 11], [1, 1, 2, 5, 900], structural_zeros=[1])
    a, b = apriori.cell_sizes(t), apriori.cell_sizes(t.cell_sizes())
    assert a.values.tolist() == b.values.tolist() == [0, 1, 2, 5, 900]
    assert a.cells.tolist() == b.cells.tolist() == [6, 2, 1, 1, 1]
    big = CountTable(v, [0, 3], [10**12, 3])  # counts too far apart to count by bincount
    assert apriori.cell_sizes(big).values.tolist() == [0, 3, 10**12]
    with pytest.raises(InvalidArgumentError, match="numeric counts"):
        apriori.cell_sizes({1: "many"})
