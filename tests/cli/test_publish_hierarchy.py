"""cellsafe publish over a hierarchy given as a tau-Argus .hrc file or a CSV of code,parent: small count rounding is
additive through every level, the cell key method publishes the aggregates' codes, and bad hierarchy files are refused
with a message saying what to fix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main

COUNTS = {("m1", "F"): 5, ("m1", "M"): 1, ("m2", "F"): 7, ("m2", "M"): 8, ("m3", "F"): 2, ("m3", "M"): 9,
          ("m4", "F"): 6, ("m4", "M"): 4}
PARENT = {"m1": "D1", "m2": "D1", "m3": "D2", "m4": "D3", "D1": "R1", "D2": "R1", "D3": "R2"}
FORMULA = "region*sex + district*sex + geo"


def _people(tmp_path):
    rows = [{"geo": g, "sex": s} for (g, s), n in COUNTS.items() for _ in range(n)]
    pd.DataFrame(rows).to_csv(tmp_path / "people.csv", index=False)
    return tmp_path / "people.csv"


def _publish(tmp_path, hierarchy, *method):
    out = tmp_path / "out.csv"
    code = main(["publish", str(_people(tmp_path)), "--variables", "geo,sex", "--hierarchy", hierarchy,
                 "--formula", FORMULA, *method, "--output", str(out), "--overwrite", "--quiet"])
    return code, out


@pytest.mark.parametrize("form", ["hrc", "csv", "csv-without-roots"])
def test_rounding_is_additive_through_every_level(tmp_path, form):
    if form == "hrc":
        path = tmp_path / "geo.hrc"
        path.write_text("R1\n@D1\n@@m1\n@@m2\n@D2\n@@m3\nR2\n@D3\n@@m4\n")
    else:
        rows = [] if form == "csv-without-roots" else ["R1,", "R2,"]
        path = tmp_path / "geo.csv"
        path.write_text("\n".join(["code,parent", *rows, *(f"{c},{p}" for c, p in PARENT.items())]) + "\n")
    code, out = _publish(tmp_path, f"geo={path}:region,district", "--method", "scr", "--base", "3", "--seed", "1")
    assert code == 0
    f = pd.read_csv(out, dtype=str, keep_default_na=False).set_index(["geo", "sex"])["count"].astype(int)
    assert not ((f > 0) & (f < 3)).any()
    for sex in ("F", "M"):
        for parent in ("D1", "D2", "D3", "R1", "R2"):
            kids = [c for c, p in PARENT.items() if p == parent]
            if parent.startswith("D"):
                continue  # municipalities are published by total only
            assert f[parent, sex] == sum(f[k, sex] for k in kids)
    for parent in ("D1", "D2", "D3"):
        assert f[parent, "Total"] == sum(f[c, "Total"] for c, p in PARENT.items() if p == parent)
    assert f["Total", "Total"] == f["R1", "Total"] + f["R2", "Total"]


def test_cell_key_method_publishes_aggregate_codes(tmp_path):
    path = tmp_path / "geo.hrc"
    path.write_text("R1\n@D1\n@@m1\n@@m2\n@D2\n@@m3\nR2\n@D3\n@@m4\n")
    code, out = _publish(tmp_path, f"geo={path}:region,district", "--method", "ckm", "--D", "3", "--V", "1.5", "--js", "0", "--seed", "3")
    assert code == 0
    f = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert {"R1", "R2", "D1", "D2", "D3", "m1", "m4", "Total"} <= set(f["geo"])
    assert np.all(f["count"].astype(int) >= 0)


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("geo.csv", "m1,D1\nm2,D1\nm3,D2\nm4,D3\nD1,R1\nD2,R1\nD3,R2\n", "header names the columns 'code' and 'parent'"),
        ("geo.csv", "code,parent\nm1,D1\nm2,D1\nm3,D2\nD1,R1\nD2,R1\n", "'m4' is not a leaf of the hierarchy"),
        ("geo.csv", "code,parent\nm1,D1\nm1,D2\nm2,D1\nm3,D2\nm4,D2\n", "appears more than once"),
        ("geo.csv", "code,parent\nm1,D1\nD1,m1\nm2,D1\nm3,D1\nm4,D1\n", "cycle"),
        ("geo.hrc", "R1\n@@m1\n", "more than one below the line before"),
        ("missing.hrc", None, "does not exist"),
    ],
)
def test_bad_hierarchy_files_are_refused(tmp_path, capsys, name, text, message):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    code, out = _publish(tmp_path, f"geo={path}:region,district", "--method", "scr", "--base", "3", "--seed", "1")
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert not out.exists()


def test_compare_and_report_read_a_hierarchical_suppressed_publication(tmp_path, capsys):
    import json

    path = tmp_path / "geo.csv"
    path.write_text("\n".join(["code,parent", *(f"{c},{p}" for c, p in PARENT.items())]) + "\n")
    hierarchy = f"geo={path}:region,district"
    code, out = _publish(tmp_path, hierarchy, "--method", "suppress", "--rule", "freq<=2")
    assert code == 0
    people = str(tmp_path / "people.csv")
    common = ["--variables", "geo,sex", "--hierarchy", hierarchy, "--sensitive", "sex", "--keys", "geo"]
    assert main(["compare", people, *common, "--formula", FORMULA, "--published", f"sup={out}", "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)["sup"]
    assert compared["additive"] is False  # withheld cells are restored before the risk
    html = tmp_path / "report.html"
    assert main(["report", people, *common, "--formula", FORMULA, "--published", f"sup={out}",
                 "--output", str(html), "--quiet"]) == 0
    [entry] = json.loads(html.with_suffix(".json").read_text())["sections"]["published"]
    assert entry["hellinger_utility"] == compared["hellinger_utility"]
    written = pd.read_csv(out, dtype=str, keep_default_na=False)["suppression"]
    assert entry["suppression"] == {"primary": int((written == "primary").sum()),
                                    "secondary": int((written == "secondary").sum()),
                                    "audited": int((written != "").sum()), "unsafe": 0, "passed": True,
                                    "listing": "frame", "problems": []}
    assert "cells pinned down" in html.read_text()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cell_key_method_with_record_keys_through_a_hierarchy_equals_the_flat_release(tmp_path, suffix):
    """Each aggregate's cell key is the sum of its records' keys: the same release as the flat publication of records
    carrying their region and district as columns (the ONS-style path, checked against the ONS package elsewhere)."""
    ptable = str(Path(__file__).resolve().parents[1] / "reference" / "ons_ptable" / "ptable_10_5_rule.csv")
    rows = [{"geo": g, "sex": s} for (g, s), n in COUNTS.items() for _ in range(3 * n)]
    people = pd.DataFrame(rows)
    people["rk"] = np.random.default_rng(5).integers(0, 256, len(people))
    people["district"] = people["geo"].map(PARENT)
    people["region"] = people["district"].map(PARENT)
    src = tmp_path / f"people{suffix}"
    people.to_parquet(src, index=False) if suffix == ".parquet" else people.to_csv(src, index=False)
    hrc = tmp_path / "geo.hrc"
    hrc.write_text("R1\n@D1\n@@m1\n@@m2\n@D2\n@@m3\nR2\n@D3\n@@m4\n")
    common = ["--method", "ckm", "--ptable", ptable, "--record-key", "rk", "--overwrite", "--quiet"]
    hier, flat = tmp_path / "hier.csv", tmp_path / "flat.csv"
    assert main(["publish", str(src), "--variables", "geo,sex", "--hierarchy", f"geo={hrc}:region,district",
                 "--formula", "region:sex + district:sex", "--output", str(hier), *common]) == 0
    assert main(["publish", str(src), "--variables", "region,district,sex", "--formula", "region:sex + district:sex - 1",
                 "--output", str(flat), *common]) == 0
    h = pd.read_csv(hier, dtype=str, keep_default_na=False)
    f = pd.read_csv(flat, dtype=str, keep_default_na=False)
    f["geo"] = f["district"].where(f["district"] != "Total", f["region"])
    got = dict(zip(zip(h["geo"], h["sex"]), h["count"]))
    want = dict(zip(zip(f["geo"], f["sex"]), f["count"]))
    assert want and all(got[k] == v for k, v in want.items())
    raw = {**people.groupby(["region", "sex"]).size().to_dict(), **people.groupby(["district", "sex"]).size().to_dict()}
    assert any(v != str(raw[k]) for k, v in want.items())  # the ptable changed some cells: the keys mattered


def test_record_key_with_a_frequency_table_is_refused(tmp_path, capsys):
    path = tmp_path / "geo.hrc"
    path.write_text("R1\n@D1\n@@m1\n@@m2\n@D2\n@@m3\nR2\n@D3\n@@m4\n")
    code, _ = _publish(tmp_path, f"geo={path}:region,district", "--method", "ckm", "--count", "n", "--record-key", "rk")
    assert code == 2 and "--record-key needs microdata" in capsys.readouterr().err


def _people_by_age(tmp_path):
    rng = np.random.default_rng(7)
    people = pd.DataFrame({"geo": rng.choice(["m1", "m2", "m3", "m4"], 400), "age": rng.choice(["0-15", "16-64", "65+"], 400)})
    people.to_csv(tmp_path / "ages.csv", index=False)
    return people


@pytest.mark.parametrize("method", [["--method", "suppress", "--rule", "freq<=3"], ["--method", "scr", "--seed", "1"]])
def test_naming_a_variable_with_a_hierarchy_publishes_all_its_levels(tmp_path, method):
    """--hierarchy geo=geo.hrc with --formula 'age*geo': every level of geo crossed with age, as tau-Argus publishes
    it (the leaves only, before)."""
    people = _people_by_age(tmp_path)
    hrc = tmp_path / "geo.hrc"
    hrc.write_text("R1\n@D1\n@@m1\n@@m2\n@D2\n@@m3\nR2\n@D3\n@@m4\n")
    out = tmp_path / "out.csv"
    assert main(["publish", str(tmp_path / "ages.csv"), "--variables", "age,geo", "--hierarchy", f"geo={hrc}",
                 "--formula", "age*geo", *method, "--output", str(out), "--quiet"]) == 0
    f = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert set(f["table"]) == {"Total", "age", "geo1", "geo2", "geo", "age:geo1", "age:geo2", "age:geo"}
    assert len(f) == (1 + 2 + 3 + 4) * (1 + 3)
    if method[1] == "suppress":
        counts = f.set_index(["geo", "age"])["count"]
        shown = counts[counts != ""].astype(int)
        truth = people.assign(region=people["geo"].map({"m1": "R1", "m2": "R1", "m3": "R1", "m4": "R2"}))
        for (region, age), n in truth.groupby(["region", "age"]).size().items():
            if (region, age) in shown.index:
                assert shown[region, age] == n


def test_a_code_parent_csv_with_a_total_root_and_a_typo(tmp_path, capsys):
    _people_by_age(tmp_path)
    rows = ["code,parent", "Total,", "R1,Total", "R2,Total", "D1,R1", "D2,R1", "D3,R2", "m1,D1", "m2,D1", "m3,D2", "m4,D3"]
    path = tmp_path / "geo.csv"
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.csv"
    argv = ["publish", str(tmp_path / "ages.csv"), "--variables", "age,geo", "--hierarchy", f"geo={path}:region,district",
            "--formula", "region*age + district", "--method", "scr", "--seed", "1", "--output", str(out), "--quiet"]
    assert main(argv) == 0
    assert set(pd.read_csv(out, dtype=str, keep_default_na=False)["table"]) == {"Total", "region", "age", "district", "region:age"}
    path.write_text("\n".join(rows[:-1] + ["m4,D33"]) + "\n")
    assert main([*argv, "--overwrite"]) == 2
    assert "names parent 'D33' (of 'm4'), which is not one of its codes; did you mean 'D3'?" in capsys.readouterr().err
