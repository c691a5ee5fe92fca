"""Said, never dropped: a metric undefined for a mechanism is shown as undefined, with the reason.

The cell key method with js >= 1 never releases a 1, so tau4(1) = P(original 1 | released 1) has
nothing to condition on.  Its frontier point used to get an empty risk and efficient=False without a
word, and the report's frontier was an empty plot.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main
from cellsafe.tuning import frontier

SIZES = {0: 900, 1: 60, 2: 40, 7: 10, 30: 5}
GRID = ["nbi:sigma=1", "ckm:D=5,V=3,js=2", "ckm:D=5,V=3"]


def test_the_frontier_keeps_the_point_and_says_why():
    f = frontier(SIZES, GRID)
    row = f.points.set_index("spec").loc["ckm:D=5,V=3,js=2"]
    assert np.isnan(row["risk"]) and np.isfinite(row["utility"]) and not row["efficient"]
    assert "tau4(1) is undefined: no cell is ever released as 1" in row["undefined"]
    assert list(f.undefined["spec"]) == ["ckm:D=5,V=3,js=2"]
    assert f.points.set_index("spec").loc["ckm:D=5,V=3", "undefined"] == ""  # js = 0 releases ones: defined
    assert "ckm:D=5,V=3,js=2" in f.to_dict()["undefined"] and "undefined=1" in repr(f)


def test_the_plot_draws_it_in_the_margin():
    pytest.importorskip("matplotlib")
    from cellsafe.report import plot_frontier

    fig = plot_frontier(frontier(SIZES, GRID))
    ax = fig.axes[0]
    assert "risk undefined (margin)" in [c.get_label() for c in ax.collections]
    assert any("js=2: risk undefined" in t.get_text() for t in ax.texts)


@pytest.fixture
def table_file(tmp_path):
    rows = [(a, b, n) for (a, b), n in zip([(a, b) for a in "pqrstu" for b in "vwxyz"],
                                           [0, 1, 1, 2, 3, 1, 0, 7, 1, 2, 30, 1, 4, 0, 1, 1, 2, 9, 1, 0, 5, 1, 1, 2, 1, 0, 3, 1, 8, 1])]
    path = tmp_path / "t.csv"
    pd.DataFrame(rows, columns=["a", "b", "n"]).to_csv(path, index=False)
    return path


def test_the_command_line_and_the_report_say_it(tmp_path, table_file, capsys):
    common = [str(table_file), "--variables", "a,b", "--count", "n"]
    out = tmp_path / "f.csv"
    assert main(["frontier", *common, *(x for s in GRID for x in ("--mechanism", s)), "--output", str(out)]) == 0
    assert "ckm:D=5,V=3,js=2: tau4(1) is undefined" in capsys.readouterr().out
    points = pd.read_csv(out, keep_default_na=False).set_index("spec")
    assert points.loc["ckm:D=5,V=3,js=2", "risk"] == "" and "is undefined" in points.loc["ckm:D=5,V=3,js=2", "undefined"]

    report = tmp_path / "r.html"
    assert main(["report", *common, "--mechanism", "ckm:D=5,V=3,js=2", "--mechanism", "nbi:sigma=1",
                 "--target", "tau4(1)<=0.4", "--no-hellinger", "--quiet", "--output", str(report)]) == 0
    d = json.loads(report.with_suffix(".json").read_text())["sections"]
    ckm = next(p for p in d["frontier"]["points"] if p["spec"] == "ckm:D=5,V=3,js=2")
    assert ckm["risk"] is None and "no cell is ever released as 1" in ckm["undefined"]
    verdict = next(v for v in d["summary"]["verdicts"] if v["spec"] == "ckm:D=5,V=3,js=2")
    assert verdict["passed"] is None and "no cell is ever released as 1" in verdict["checks"][0]["undefined"]
    html = report.read_text()
    assert "risk undefined" in html and "UNDECIDED" in html and "undefined: tau4(1) is undefined" in html
