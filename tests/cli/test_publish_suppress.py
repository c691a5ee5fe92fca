"""cellsafe publish --method suppress with a tau-Argus hierarchy, and cellsafe audit on its output."""

from __future__ import annotations

import pandas as pd

from cellsafe.cli.main import main


def _data(tmp_path):
    rows = []
    counts = {("m1", "F"): 5, ("m1", "M"): 1, ("m2", "F"): 7, ("m2", "M"): 8, ("m3", "F"): 2, ("m3", "M"): 9, ("m4", "F"): 6, ("m4", "M"): 4}
    for (geo, sex), n in counts.items():
        rows += [{"geo": geo, "sex": sex}] * n
    pd.DataFrame(rows).to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "geo.hrc").write_text("R1\n@D1\n@@m1\n@@m2\n@D2\n@@m3\nR2\n@D3\n@@m4\n")


def test_publish_suppress_and_audit(tmp_path, capsys):
    _data(tmp_path)
    common = ["--variables", "geo,sex", "--hierarchy", f"geo={tmp_path / 'geo.hrc'}:region,district",
              "--formula", "region*sex + district + geo*sex"]
    out = tmp_path / "suppressed.csv"
    assert main(["publish", str(tmp_path / "people.csv"), *common, "--method", "suppress", "--rule", "freq<=2",
                 "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out, keep_default_na=False)
    assert list(frame.columns) == ["table", "geo", "sex", "count", "suppression"]
    # geo*sex brings every level of geo crossed with sex: district D2 holds m3 alone, so (D2, F) = 2 is primary too
    assert set(frame.loc[frame["suppression"] == "primary", "geo"]) == {"m1", "m3", "D2"}
    assert {"region:sex", "sex:district", "sex:geo"} <= set(frame["table"])
    assert "R1" in set(frame["geo"]) and "D2" in set(frame["geo"])
    assert (frame.loc[frame["suppression"] != "", "count"] == "").all()
    intervals = tmp_path / "intervals.csv"
    assert main(["audit", str(out), str(tmp_path / "people.csv"), *common, "--output", str(intervals)]) == 0
    assert "passed" in capsys.readouterr().out
    assert len(pd.read_csv(intervals)) == (frame["suppression"] != "").sum()


def test_rule_without_suppress_refused(tmp_path, capsys):
    _data(tmp_path)
    code = main(["publish", str(tmp_path / "people.csv"), "--variables", "geo,sex", "--formula", "geo*sex",
                 "--method", "scr", "--rule", "freq<=2", "--output", str(tmp_path / "x.csv")])
    assert code == 2 and "apply to --method suppress" in capsys.readouterr().err


def test_a_published_value_that_is_not_a_number_is_refused_not_read_as_withheld(tmp_path, capsys):
    _data(tmp_path)
    people = str(tmp_path / "people.csv")
    out = tmp_path / "suppressed.csv"
    assert main(["publish", people, "--variables", "geo,sex", "--formula", "geo*sex", "--method", "suppress",
                 "--rule", "freq<=2", "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    row = frame.index[(frame["count"] != "") & (frame["table"] == "geo:sex")][0]
    frame.loc[row, "count"] = "seven"
    bad = tmp_path / "bad.csv"
    frame.to_csv(bad, index=False)
    common = ["--variables", "geo,sex"]
    runs = [
        ["audit", str(bad), people, *common, "--formula", "geo*sex", "--rule", "freq<=2"],
        ["compare", people, *common, "--formula", "geo*sex", "--published", f"x={bad}", "--sensitive", "sex", "--keys", "geo"],
        ["report", people, *common, "--formula", "geo*sex", "--published", f"x={bad}", "--sensitive", "sex",
         "--keys", "geo", "--output", str(tmp_path / "r.html")],
    ]
    for args in runs:
        capsys.readouterr()
        assert main(args) == 2, args[0]
        assert f"row {row} of the published table has 'count' = 'seven', which is not a number" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
