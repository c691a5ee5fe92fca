"""cellsafe audit on a magnitude publication written by cellsafe publish --method suppress --value --contributor."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from cellsafe.cli.main import main


def _firms(tmp_path):
    rng = np.random.default_rng(5)
    n = 90
    df = pd.DataFrame(
        {
            "sector": rng.choice(list("ABCD"), n),
            "region": rng.choice(["N", "S", "E"], n),
            "firm": rng.integers(0, 70, n),
            "turnover": np.round(rng.lognormal(3, 1.0, n), 1),
        }
    )
    df.loc[len(df)] = ["A", "N", 900, 4000.0]  # a dominant enterprise
    path = tmp_path / "firms.csv"
    df.to_csv(path, index=False)
    return path


COMMON = ["--variables", "sector,region", "--formula", "sector*region", "--value", "turnover", "--contributor", "firm",
          "--rule", "p%=15", "--rule", "freq<=2"]


def test_audit_reports_required_widths_and_passes(tmp_path, capsys):
    data = _firms(tmp_path)
    out = tmp_path / "turnover.csv"
    assert main(["publish", str(data), *COMMON, "--method", "suppress", "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out, keep_default_na=False)
    assert (frame["suppression"] == "primary").any()
    intervals = tmp_path / "intervals.csv"
    assert main(["audit", str(out), str(data), *COMMON, "--output", str(intervals)]) == 0
    assert "passed" in capsys.readouterr().out
    iv = pd.read_csv(intervals)
    primary = iv[iv["suppression"] == "primary"]
    assert (primary["upper_target"] > primary["turnover"]).any() and iv["safe"].all()
    assert (primary["upper"] >= primary["upper_target"] - 1e-6).all()
    # without --rule, the rules the release's manifest records
    assert main(["audit", str(out), str(data), *COMMON[:8], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["passed"] is True


def test_audit_flags_a_published_sensitive_cell_and_a_narrow_interval(tmp_path, capsys):
    data = _firms(tmp_path)
    out = tmp_path / "turnover.csv"
    assert main(["publish", str(data), *COMMON, "--method", "suppress", "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out)
    frame["suppression"] = frame["suppression"].fillna("")
    truth = pd.read_csv(data).groupby(["sector", "region"])["turnover"].sum()
    inner = (frame["sector"] != "Total") & (frame["region"] != "Total")
    # publish the inner secondary cells again: the primaries are left with their margins alone
    leaked = frame.copy()
    sec = (leaked["suppression"] == "secondary") & inner
    leaked.loc[sec, "turnover"] = [truth[k] for k in zip(leaked.loc[sec, "sector"], leaked.loc[sec, "region"])]
    leaked.loc[sec, "suppression"] = ""
    leaked.to_csv(tmp_path / "leaked.csv", index=False)
    assert main(["audit", str(tmp_path / "leaked.csv"), str(data), *COMMON]) == 1
    assert "narrower than required" in capsys.readouterr().out
    # publish a primary cell: the rules say it is sensitive
    shown = frame.copy()
    first = shown.index[(shown["suppression"] == "primary") & inner][0]
    shown.loc[first, "turnover"] = truth[(shown.loc[first, "sector"], shown.loc[first, "region"])]
    shown.loc[first, "suppression"] = ""
    shown.to_csv(tmp_path / "shown.csv", index=False)
    assert main(["audit", str(tmp_path / "shown.csv"), str(data), *COMMON, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["n_sensitive_published"] == 1


def test_magnitude_rule_without_value_refused(tmp_path, capsys):
    data = _firms(tmp_path)
    code = main(["audit", str(data), str(data), "--variables", "sector,region", "--formula", "sector*region",
                 "--rule", "p%=15"])
    assert code == 2 and "need --value" in capsys.readouterr().err


def test_publish_forced_and_hidden_cells(tmp_path, capsys):
    data = _firms(tmp_path)
    out = tmp_path / "turnover.csv"
    assert main(["publish", str(data), *COMMON, "--method", "suppress", "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out)
    frame["suppression"] = frame["suppression"].fillna("")
    sec = frame[(frame["suppression"] == "secondary") & (frame["region"] != "Total") & (frame["sector"] != "Total")].iloc[0]
    pd.DataFrame({"sector": [sec["sector"]], "region": [sec["region"]]}).to_csv(tmp_path / "forced.csv", index=False)
    pd.DataFrame({"region": ["S"]}).to_csv(tmp_path / "hidden.csv", index=False)  # (Total, S)
    out2 = tmp_path / "turnover2.csv"
    assert main(["publish", str(data), *COMMON, "--method", "suppress", "--forced", str(tmp_path / "forced.csv"),
                 "--hidden", str(tmp_path / "hidden.csv"), "--output", str(out2), "--quiet"]) == 0
    f2 = pd.read_csv(out2)
    f2["suppression"] = f2["suppression"].fillna("")
    row = (f2["sector"] == sec["sector"]) & (f2["region"] == sec["region"])
    assert f2.loc[row, "suppression"].item() == "" and not np.isnan(f2.loc[row, "turnover"].item())
    assert f2.loc[(f2["sector"] == "Total") & (f2["region"] == "S"), "suppression"].item() != ""
    capsys.readouterr()
    iv = tmp_path / "iv.csv"
    main(["audit", str(out2), str(data), *COMMON, "--json", "--output", str(iv)])  # the hidden cell itself may be exact
    assert json.loads(capsys.readouterr().out)["n_sensitive_published"] == 0
    iv = pd.read_csv(iv)
    assert iv.loc[iv["suppression"] == "primary", "safe"].all()
    code = main(["publish", str(data), "--variables", "sector,region", "--formula", "sector*region", "--method", "scr",
                 "--forced", str(tmp_path / "forced.csv"), "--output", str(tmp_path / "x.csv")])
    assert code == 2 and "apply to --method suppress" in capsys.readouterr().err
