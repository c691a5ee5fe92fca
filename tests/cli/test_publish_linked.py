"""cellsafe publish --table ... --earlier: linked tables and an earlier release from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from cellsafe.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mechanisms"))
from test_linked import NAMES, _records  # noqa: E402  the constructed example of the library's test

COMMON = ["--variables", ",".join(NAMES), "--method", "suppress", "--rule", "freq<=2", "--quiet"]


def test_linked_tables_with_an_earlier_release(tmp_path, capsys):
    data = tmp_path / "records.csv"
    _records().to_csv(data, index=False)
    old = tmp_path / "old.csv"
    assert main(["publish", str(data), *COMMON, "--formula", "region*size", "--output", str(old)]) == 0
    out = tmp_path / "linked"
    assert main(["publish", str(data), *COMMON, "--table", "counts:region*activity",
                 "--table", "turnover:region*activity:turnover", "--earlier", str(old), "--output", str(out)]) == 0
    counts = pd.read_csv(out / "counts.csv", keep_default_na=False)
    turnover = pd.read_csv(out / "turnover.csv", keep_default_na=False)
    assert list(turnover.columns) == ["table", *NAMES, "turnover", "suppression"]
    # what the earlier release withheld stays withheld (the totals of y and z), the same pattern in both tables
    totals = counts[(counts.activity == "Total") & (counts["size"] == "Total")].set_index("region")
    assert totals.loc["y", "count"] == "" and totals.loc["z", "count"] == ""
    assert ((counts["count"] == "") == (turnover["turnover"] == "")).all()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["details"]["tables"]["turnover.csv"] == {"formula": "region*activity", "value": "turnover"}
    assert manifest["details"]["joint_audit"] == "passed"
    # a linked output is itself an earlier release of the next run
    again = tmp_path / "next"
    assert main(["publish", str(data), *COMMON, "--table", "sizes:activity*size", "--earlier", str(old),
                 "--earlier", str(out / "counts.csv"), "--earlier", str(out / "turnover.csv"), "--output", str(again)]) == 0


def test_an_earlier_release_changed_since_published_is_refused(tmp_path, capsys):
    data = tmp_path / "records.csv"
    _records().to_csv(data, index=False)
    old = tmp_path / "old.csv"
    assert main(["publish", str(data), *COMMON, "--formula", "region*size", "--output", str(old)]) == 0
    old.write_text(old.read_text().replace(",,secondary", ",3,secondary", 1))
    assert main(["publish", str(data), *COMMON, "--table", "counts:region*activity", "--earlier", str(old),
                 "--output", str(tmp_path / "linked")]) == 2
    assert "sha256" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--formula", "region"], "--table replaces --formula"),
    (["--method", "scr"], "--method suppress"),
])
def test_linked_options_refused_where_they_do_not_apply(tmp_path, capsys, extra, message):
    data = tmp_path / "records.csv"
    _records().to_csv(data, index=False)
    args = ["publish", str(data), *COMMON, "--table", "counts:region*activity", "--output", str(tmp_path / "o"), *extra]
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_linked_tables_by_the_optimal_method_pass_the_joint_audit(tmp_path):
    # the optimal method protects each measure's system (earlier release included) and the pattern is made one across
    # measures, as with the Gaussian elimination: the joint audit passes and both tables withhold the same cells
    data = tmp_path / "records.csv"
    _records().to_csv(data, index=False)
    old = tmp_path / "old.csv"
    assert main(["publish", str(data), *COMMON, "--formula", "region*size", "--output", str(old)]) == 0
    out = tmp_path / "linked"
    assert main(["publish", str(data), *COMMON, "--secondary", "optimal", "--table", "counts:region*activity",
                 "--table", "turnover:region*activity:turnover", "--earlier", str(old), "--output", str(out)]) == 0
    counts = pd.read_csv(out / "counts.csv", keep_default_na=False)
    turnover = pd.read_csv(out / "turnover.csv", keep_default_na=False)
    assert ((counts["count"] == "") == (turnover["turnover"] == "")).all()
    totals = counts[(counts.activity == "Total") & (counts["size"] == "Total")].set_index("region")
    assert totals.loc["y", "count"] == "" and totals.loc["z", "count"] == ""  # what the earlier release withheld
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["details"]["joint_audit"] == "passed"
    assert manifest["mechanism"]["parameters"]["secondary"] == "optimal"


def test_audit_reads_a_linked_folder_and_earlier_releases_together(tmp_path, capsys):
    # what a panel runs after the fact: the files, the records and the rules (from the manifests); tables published
    # one at a time each pass alone and fail together, as the reader of both recovers (z, p) = 2
    data = tmp_path / "records.csv"
    _records().to_csv(data, index=False)
    variables = ["--variables", ",".join(NAMES)]
    old = tmp_path / "old.csv"
    assert main(["publish", str(data), *COMMON, "--formula", "region*size", "--output", str(old)]) == 0
    out = tmp_path / "linked"
    assert main(["publish", str(data), *COMMON, "--table", "counts:region*activity",
                 "--table", "turnover:region*activity:turnover", "--earlier", str(old), "--output", str(out)]) == 0
    capsys.readouterr()
    intervals = tmp_path / "intervals.csv"
    assert main(["audit", str(out), str(data), *variables, "--earlier", str(old), "--output", str(intervals)]) == 0
    assert "3 release(s) audited together" in capsys.readouterr().out
    assert set(pd.read_csv(intervals)["measure"]) == {"count", "turnover"}
    alone = tmp_path / "alone.csv"
    assert main(["publish", str(data), *COMMON, "--formula", "region*activity", "--output", str(alone)]) == 0
    assert main(["audit", str(alone), str(data), *variables, "--formula", "region*activity"]) == 0
    capsys.readouterr()
    assert main(["audit", str(alone), str(data), *variables, "--earlier", str(old)]) == 1
    assert "FAILED: count: " in capsys.readouterr().out
    # what a joint audit cannot take
    assert main(["audit", str(tmp_path), str(data), *variables]) == 2
    assert "without the manifest of a linked release" in capsys.readouterr().err
    assert main(["audit", str(out), str(data), *variables, "--formula", "region*activity"]) == 2
    assert "drop --formula" in capsys.readouterr().err
    assert main(["audit", str(alone), str(data), *variables]) == 2
    assert "audit needs --formula F" in capsys.readouterr().err
