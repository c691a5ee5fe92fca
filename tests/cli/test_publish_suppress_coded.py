"""``publish --method suppress`` of counts: the file the release frame would write, without importing pandas."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd

from cellsafe import CountTable
from cellsafe.mechanisms import CellSuppression


def _table(path) -> None:
    rng = np.random.default_rng(5)
    n = 3_000
    d = pd.DataFrame({
        "area": rng.choice([f"E{i:02d}" for i in range(9)], n, p=np.r_[0.3, 0.3, 0.2, 0.1, 0.05, 0.03, 0.01, 0.005, 0.005]),
        "eth": rng.choice(["a,b", 'say "x"', "=1+1", "10"], n, p=[0.4, 0.3, 0.29, 0.01]),  # quoting, formulas, small cells
        "sex": rng.choice(["F", "M"], n),
    })
    d.value_counts().rename("n").reset_index().to_csv(path, index=False)


def test_same_file_as_the_frame_and_no_pandas(tmp_path):
    table_csv = tmp_path / "t.csv"
    _table(table_csv)
    out = tmp_path / "out.csv"
    argv = ["publish", str(table_csv), "--count", "n", "--variables", "area,eth,sex", "--formula", "area*eth + sex",
            "--method", "suppress", "--rule", "freq<=3", "--output", str(out), "--quiet"]
    code = "import sys; from cellsafe.cli.main import main; rc = main(sys.argv[1:]); print(rc, 'pandas' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["0", "False"]
    d = pd.read_csv(table_csv, dtype={"area": str, "eth": str, "sex": str})
    table = CountTable.from_frame(d, ["area", "eth", "sex"], "n")
    [res] = CellSuppression("area*eth + sex", rules=["freq<=3"]).sample(table)
    assert {"primary", "secondary"} <= set(res.suppression.tolist())  # withheld cells and their marks are compared
    expected = tmp_path / "expected.csv"
    res.release_frame().to_csv(expected, index=False)
    assert out.read_bytes() == expected.read_bytes()
    for escape in (False, True):  # the library's writer, escaped or not
        from cellsafe.io import neutralise_formulas

        ours, theirs = tmp_path / f"ours{escape}.csv", tmp_path / f"theirs{escape}.csv"
        res.write_csv(ours, escape_formulas=escape)
        frame = res.release_frame()
        (neutralise_formulas(frame) if escape else frame).to_csv(theirs, index=False)
        assert ours.read_bytes() == theirs.read_bytes()


def test_a_variable_named_like_a_column_the_release_adds_is_refused(tmp_path):
    """A variable named 'suppression' lost its labels to the marks, one named 'count' doubled the header: refused,
    nothing written, in the library and the command."""
    import pytest

    from cellsafe.cli.main import main
    from cellsafe.exceptions import DataError

    for name in ("suppression", "count"):
        d = pd.DataFrame({name: ["a", "a", "b", "b"], "sex": ["F", "M", "F", "M"], "n": [1, 5, 7, 9]})
        table = CountTable.from_frame(d, [name, "sex"], "n")
        [res] = CellSuppression(f"{name}*sex", rules=["freq<=3"]).sample(table)
        with pytest.raises(DataError, match=f"variable is named '{name}'"):
            res.release_frame()
        with pytest.raises(DataError, match=f"variable is named '{name}'"):
            res.write_csv(tmp_path / "x.csv")
        path = tmp_path / f"{name}.csv"
        d.to_csv(path, index=False)
        out = tmp_path / f"{name}_out.csv"
        assert main(["publish", str(path), "--count", "n", "--variables", f"{name},sex", "--formula", f"{name}*sex",
                     "--method", "suppress", "--rule", "freq<=3", "--output", str(out), "--quiet"]) == 2
        assert not out.exists() and not (tmp_path / "x.csv").exists()
