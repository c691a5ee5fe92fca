"""``publish --method ckm`` from Parquet with record keys: the file the frame would write, without importing pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from cellsafe.cli.main import main
from cellsafe.mechanisms import CellKeyMethod, PTable

ONS = Path(__file__).resolve().parents[1] / "reference" / "ons_ptable" / "ptable_10_5_rule.csv"
FORMULA = "area*sex + area:eth - area"


def _records(path: Path) -> None:
    rng = np.random.default_rng(8)
    n = 40_000
    pd.DataFrame({
        "area": rng.choice([f"E{i:02d}" for i in range(12)], n),
        "eth": rng.choice(["a,b", 'say "x"', "=1+1", "10", "9"], n, p=[0.3, 0.3, 0.3, 0.098, 0.002]),  # quoting, formulas, small cells
        "sex": rng.choice(["F", "M"], n),
        "record_key": rng.integers(0, 256, n),
    }).to_parquet(path, index=False, row_group_size=7_000)


def test_same_file_as_the_frame_and_no_pandas(tmp_path):
    records = tmp_path / "r.parquet"
    _records(records)
    out = tmp_path / "out.csv"
    argv = ["publish", str(records), "--variables", "area,eth,sex", "--formula", FORMULA, "--method", "ckm",
            "--ptable", str(ONS), "--record-key", "record_key", "--output", str(out), "--quiet"]
    code = ("import sys; from cellsafe.cli.main import main; rc = main(sys.argv[1:]); "
            "print(rc, 'pandas' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["0", "False"]
    res = CellKeyMethod(PTable.read(ONS), FORMULA).perturb(pd.read_parquet(records), variables=["area", "eth", "sex"],
                                                          record_key="record_key")
    expected = tmp_path / "expected.csv"
    res.release_frame().to_csv(expected, index=False)
    assert out.read_bytes() == expected.read_bytes()
    assert res.n_suppressed > 0  # empty count fields are part of the comparison
    # --escape-formulas: the frame's neutralised cells
    escaped = tmp_path / "escaped.csv"
    assert main([*argv[:-3], "--output", str(escaped), "--quiet", "--escape-formulas"]) == 0
    assert "'=1+1" in escaped.read_text() and "\n=1+1" not in escaped.read_text()


def test_write_csv_is_the_release_frame_csv(tmp_path):
    """PublishedTable.write_csv (coded labels) writes what release_frame().to_csv writes, escaped or not."""
    records = tmp_path / "r.parquet"
    _records(records)
    res = CellKeyMethod(PTable.read(ONS), FORMULA).perturb(pd.read_parquet(records), variables=["area", "eth", "sex"],
                                                          record_key="record_key")
    for escape in (False, True):
        ours, theirs = tmp_path / f"ours{escape}.csv", tmp_path / f"theirs{escape}.csv"
        res.write_csv(ours, escape_formulas=escape)
        from cellsafe.io import neutralise_formulas

        frame = res.release_frame()
        (neutralise_formulas(frame) if escape else frame).to_csv(theirs, index=False)
        assert ours.read_bytes() == theirs.read_bytes()
