"""cellsafe publish --method ckm --value COL: the cell key method on a magnitude table, from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.cli.main import main

REF = Path(__file__).resolve().parents[1] / "reference" / "cellkey_magnitude"
RECORDS = str(REF / "records.csv")
COMMON = ["--variables", "sector,region", "--formula", "sector*region", "--method", "ckm", "--value", "turnover", "--quiet"]


def test_release_matches_cellkey(tmp_path):
    """Setting A of tests/reference/cellkey_magnitude/make_fixtures.R, through the command."""
    out = tmp_path / "turnover.csv"
    assert main(["publish", RECORDS, *COMMON, "--record-key", "rkey", "--ptable", str(REF / "nums_ptable.csv"),
                 "--fp", "400", "--top-k", "3", "--p-small", "0.3", "--flex-weights", "1,0.5,0.2", "--output", str(out)]) == 0
    frame = pd.read_csv(out, keep_default_na=False)
    assert list(frame.columns) == ["table", "sector", "region", "turnover"]
    ref = frame.merge(pd.read_csv(REF / "cells.csv", keep_default_na=False), on=["sector", "region"])
    assert len(ref) == len(frame) == 12
    assert_allclose(ref["turnover"], ref["released_A"], rtol=1e-10)
    manifest = json.loads((tmp_path / "turnover.csv.manifest.json").read_text())
    params = manifest["mechanism"]["parameters"]
    assert manifest["mechanism"]["class"] == "CellKeyMagnitude" and params["flex_weights"] == [1.0, 0.5, 0.2]
    assert params["ptable"]["class"] == "MagnitudePTable"


@pytest.mark.slow
def test_generated_ptable_seeded_keys_and_holdings(tmp_path):
    """No key column: keys drawn from --seed (the same seed, the same release); firms as holdings."""
    df = pd.read_csv(RECORDS)
    df["firm"] = np.arange(len(df)) // 2
    df.to_csv(tmp_path / "firms.csv", index=False)
    runs = []
    for name in ("a.csv", "b.csv"):
        out = tmp_path / name
        assert main(["publish", str(tmp_path / "firms.csv"), *COMMON, "--contributor", "firm", "--fp", "500",
                     "--D", "8", "--V", "2", "--icat", "1,4,8", "--seed", "3", "--output", str(out)]) == 0
        runs.append(pd.read_csv(out, keep_default_na=False))
    pd.testing.assert_frame_equal(runs[0], runs[1])
    assert (runs[0]["turnover"] >= 0).all() and len(runs[0]) == 12
    manifest = json.loads((tmp_path / "a.csv.manifest.json").read_text())
    assert manifest["mechanism"]["parameters"]["ptable"]["parameters"]["D"] == 8


@pytest.mark.parametrize(
    "extra, records, fragment",
    [
        (["--value", "profit"], None, "unknown column 'profit'"),
        ([], "sector,region,turnover\nA,N,12\nB,S,many\n", "'many' in column 'turnover' is not a DOUBLE"),
        ([], "sector,region,turnover\nA,N,12\nB,S,-3\n", "negative"),
        (["--record-key", "rk"], "sector,region,turnover,rk\nA,N,12,0.5\nB,S,3,1.5\n", "out-of-range key"),
        (["--record-key", "rk"], "sector,region,turnover,rk\nA,N,12,1\nB,S,3,2\n", "uniform key in [0, 1)"),
        (["--fp", None], None, "needs --fp X"),
        (["--rule", "p%=15"], None, "give both"),
        (["--mu-c", "2"], None, "give both"),
        (["--protect-zeros"], None, "--protect-zeros does not apply"),
        (["--js", "2"], None, "--js does not apply"),
        (["--flex-weights", "1,x"], None, "--flex-weights must be a comma-separated list of numbers"),
        (["--top-k", "2", "--flex-weights", "1"], None, "'flex_weights' parameter of CellKeyMagnitude"),
        (["--top-k", "9"], None, "'top_k' parameter"),
        (["--ptable", "nums_ptable.csv", "--D", "5"], None, "not both"),
        (["--D", "30"], None, "D * step below 50"),
    ],
)
def test_bad_input(tmp_path, capsys, extra, records, fragment):
    source = RECORDS
    if records is not None:
        (tmp_path / "r.csv").write_text(records)
        source = str(tmp_path / "r.csv")
    table = [] if "--ptable" in extra else ["--V", "3"] + ([] if "--D" in extra else ["--D", "10"])
    args = ["publish", source, *COMMON, *table, "--fp", "100", "--output", str(tmp_path / "out.csv")]
    if extra[:1] == ["--fp"]:
        i = args.index("--fp")
        del args[i : i + 2]
        extra = []
    if "--value" in extra:
        i = args.index("--value")
        del args[i : i + 2]
    if "--ptable" in extra:
        extra = [str(REF / "nums_ptable.csv") if e == "nums_ptable.csv" else e for e in extra]
    assert main(args + extra) == 2
    assert fragment in capsys.readouterr().err
    assert not (tmp_path / "out.csv").exists()


def test_the_ptable_is_given_never_assumed(tmp_path, capsys):
    """No --D/--V and no --ptable: the library declares no default ptable, so neither does the command."""
    code = main(["publish", RECORDS, *COMMON, "--fp", "100", "--output", str(tmp_path / "x.csv")])
    assert code == 2 and "needs its ptable: --D and --V" in capsys.readouterr().err


def test_magnitude_options_need_value(tmp_path, capsys):
    code = main(["publish", RECORDS, "--variables", "sector,region", "--formula", "sector*region", "--method", "ckm",
                 "--fp", "100", "--output", str(tmp_path / "x.csv")])
    assert code == 2 and "apply to --method ckm --value only" in capsys.readouterr().err


def test_extra_noise_for_the_cells_a_rule_flags(tmp_path):
    """--rule 'freq<=3' --mu-c 2: setting B of the R fixture, whose sensitive cells have at most 3 records."""
    base = ["publish", RECORDS, *COMMON, "--record-key", "rkey", "--ptable", str(REF / "nums_ptable.csv"), "--fp", "1000",
            "--p-small", "0.25", "--q", "2", "--use-zero-rkeys"]
    assert main([*base, "--rule", "freq<=3", "--mu-c", "2", "--output", str(tmp_path / "b.csv")]) == 0
    assert main([*base, "--output", str(tmp_path / "plain.csv")]) == 0
    flagged = pd.read_csv(tmp_path / "b.csv", keep_default_na=False)
    plain = pd.read_csv(tmp_path / "plain.csv", keep_default_na=False)
    ref = flagged.merge(pd.read_csv(REF / "cells.csv", keep_default_na=False), on=["sector", "region"])
    changed = (flagged["turnover"] != plain["turnover"]).to_numpy()
    assert_array_equal(changed, ref["sensitive_B"].astype(str).eq("TRUE").to_numpy())


def test_hierarchy(tmp_path):
    """Regions under one aggregate 'all' (a level named top): one more published cell per crossing with it."""
    (tmp_path / "h.csv").write_text("code,parent\nall,\nN,all\nS,all\n")
    out = tmp_path / "h_out.csv"
    assert main(["publish", RECORDS, "--variables", "sector,region", "--formula", "sector*top + sector*region",
                 "--hierarchy", f"region={tmp_path / 'h.csv'}:top", "--method", "ckm", "--value", "turnover",
                 "--record-key", "rkey", "--fp", "400", "--D", "10", "--V", "3", "--quiet", "--output", str(out)]) == 0
    frame = pd.read_csv(out, keep_default_na=False)
    assert set(frame["region"]) == {"all", "N", "S", "Total"}
    assert (frame["turnover"] >= 0).all()
