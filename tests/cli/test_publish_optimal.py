"""cellsafe publish --method suppress --secondary optimal over a hierarchy: a release the audit passes, withholding no
more value than the Gaussian pattern; the options are refused with other methods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main

pytest.importorskip("highspy")


def test_publish_optimal_over_a_hierarchy(tmp_path, capsys):
    rng = np.random.default_rng(2)
    people = pd.DataFrame({"geo": rng.choice(["m1", "m2", "m3", "m4", "m5"], 150, p=[0.4, 0.3, 0.2, 0.07, 0.03]),
                           "age": rng.choice(["young", "old"], 150)})
    people.to_csv(tmp_path / "people.csv", index=False)
    hrc = tmp_path / "geo.hrc"
    hrc.write_text("R1\n@m1\n@m2\n@m3\nR2\n@m4\n@m5\n")
    common = ["--variables", "geo,age", "--hierarchy", f"geo={hrc}:region", "--formula", "geo*age"]
    outs = {}
    for secondary in ("gauss", "optimal"):
        out = tmp_path / f"{secondary}.csv"
        assert main(["publish", str(tmp_path / "people.csv"), *common, "--method", "suppress", "--rule", "freq<=3",
                     "--secondary", secondary, "--cost", "value", "--time-limit", "30", "--output", str(out)]) == 0
        outs[secondary] = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert "wrote" in capsys.readouterr().out
    truth = people.assign(region=people["geo"].map({"m1": "R1", "m2": "R1", "m3": "R1", "m4": "R2", "m5": "R2"}))
    counts = {**truth.groupby(["geo", "age"]).size().to_dict(), **truth.groupby(["region", "age"]).size().to_dict()}
    opt = outs["optimal"]
    assert (opt.loc[opt["suppression"] != "", "count"] == "").all()
    assert set(opt.loc[opt["suppression"] == "primary", "geo"]) == set(outs["gauss"].loc[outs["gauss"]["suppression"] == "primary", "geo"])
    assert main(["audit", str(tmp_path / "optimal.csv"), str(tmp_path / "people.csv"), *common]) == 0
    assert "passed" in capsys.readouterr().out
    for (g, a), n in counts.items():
        row = opt[(opt["geo"] == g) & (opt["age"] == a)]
        if len(row) and row["count"].item() != "":
            assert int(row["count"].item()) == n


def test_secondary_is_refused_with_another_method(tmp_path, capsys):
    pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]}).to_csv(tmp_path / "d.csv", index=False)
    code = main(["publish", str(tmp_path / "d.csv"), "--variables", "a,b", "--formula", "a*b", "--method", "scr",
                 "--secondary", "optimal", "--output", str(tmp_path / "o.csv")])
    assert code == 2 and "--secondary apply to --method suppress only" in capsys.readouterr().err
