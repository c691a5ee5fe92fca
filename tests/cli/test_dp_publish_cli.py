"""``cellsafe dp-publish``: consistent DP counts at every level of a hierarchy, end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    areas = [f"{r}{d}{a}" for r in "NS" for d in "xy" for a in "123"]
    rows = [("Total", "")] + [(r, "Total") for r in "NS"] + [(r + d, r) for r in "NS" for d in "xy"]
    rows += [(a, a[:2]) for a in areas]
    geo = tmp_path / "geo.csv"
    pd.DataFrame(rows[1:], columns=["code", "parent"]).to_csv(geo, index=False)
    people = tmp_path / "people.csv"
    pd.DataFrame({"area": rng.choice(areas[:-1], size=400), "sex": rng.choice(["F", "M"], size=400)}).to_csv(people, index=False)
    dom = tmp_path / "sex.json"
    dom.write_text(json.dumps({"sex": ["F", "M", "X"]}))
    return geo, people, dom, areas


def keys(obj):
    """Every key of a JSON document, at any depth."""
    if isinstance(obj, dict):
        return set(obj) | set().union(*(keys(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(keys(v) for v in obj)) if obj else set()
    return set()


def run(files, out, *extra):
    geo, people, dom, _ = files
    return main(["dp-publish", str(people), "--variables", "area,sex", "--hierarchy", f"area={geo}", "--domain", str(dom),
                 "--epsilon", "1", "--output", str(out), *extra])


def test_every_level_is_published_consistent_and_the_folder_is_public(tmp_path, files, capsys):
    out = tmp_path / "out"
    assert run(files, out, "--quiet") == 0
    counts = pd.read_csv(out / "counts.csv", dtype=str, keep_default_na=False)
    counts["count"] = counts["count"].astype(int)
    assert (counts["count"] >= 0).all()
    # every area (the empty one too) x every sex (X too): the listing depends on public input only
    areas = files[3]
    leaf = counts[counts["area"].isin(areas)]
    assert len(leaf) == len(areas) * 3
    # additive at every level: districts from areas, regions from districts, the total from regions
    by = lambda df, key: df.groupby([key, "sex"])["count"].sum()  # noqa: E731
    leaf = leaf.assign(district=leaf["area"].str[:2], region=leaf["area"].str[:1])
    districts = counts[counts["area"].str.len() == 2].set_index(["area", "sex"])["count"]
    regions = counts[counts["area"].isin(["N", "S"])].set_index(["area", "sex"])["count"]
    total = counts[counts["area"] == "Total"].set_index("sex")["count"]
    assert by(leaf, "district").rename_axis(["area", "sex"]).sort_index().equals(districts.sort_index())
    dsum = districts.reset_index().assign(region=lambda d: d["area"].str[:1]).groupby(["region", "sex"])["count"].sum()
    assert dsum.rename_axis(["area", "sex"]).sort_index().equals(regions.sort_index())
    assert regions.groupby(level="sex").sum().sort_index().equals(total.sort_index())
    # the folder holds no input hash, no seed, no command line; the custodian's record is beside it
    for name in ("manifest.json", "dp_publication.json"):
        text = (out / name).read_text()
        assert "people.csv" not in text and str(tmp_path) not in text
        assert not keys(json.loads(text)) & {"seed", "argv", "inputs", "command_line", "custodian"}
    description = json.loads((out / "dp_publication.json").read_text())
    assert [lv["level"] for lv in description["levels"]][0] == "Total"
    assert description["loss"]["epsilon"] <= 1.0
    custodian = json.loads((tmp_path / "out.custodian.json").read_text())
    text = json.dumps(custodian)
    assert "people.csv" in text and "observed_errors" in text


def test_charged_to_the_ledger_and_refused_beyond_it(tmp_path, files, capsys):
    log = tmp_path / "budget.log"
    assert main(["budget", str(log), "--create", "--epsilon", "1.5"]) == 0
    assert run(files, tmp_path / "a", "--budget-log", str(log), "--noise", "geometric", "--quiet") == 0
    assert run(files, tmp_path / "b", "--budget-log", str(log), "--noise", "geometric") == 2
    assert "budget" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_same_seed_same_release(tmp_path, files):
    assert run(files, tmp_path / "a", "--seed", "3", "--quiet") == 0
    assert run(files, tmp_path / "b", "--seed", "3", "--quiet") == 0
    assert (tmp_path / "a" / "counts.csv").read_bytes() == (tmp_path / "b" / "counts.csv").read_bytes()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--split", "1,1"], "each of the 4 levels"),
        (["--noise", "geometric", "--delta", "1e-6"], "pure"),
        (["--epsilon", "0"], "epsilon"),
        (["--variables", "sex"], "not among --variables"),
    ],
)
def test_bad_input(tmp_path, files, capsys, extra, message):
    assert run(files, tmp_path / "out", *extra) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_other_variables_need_a_domain(tmp_path, files, capsys):
    geo, people, _, _ = files
    rc = main(["dp-publish", str(people), "--variables", "area,sex", "--hierarchy", f"area={geo}", "--epsilon", "1",
               "--output", str(tmp_path / "out")])
    assert rc == 2 and "--domain" in capsys.readouterr().err


def test_a_record_outside_the_hierarchy(tmp_path, files, capsys):
    geo, people, dom, _ = files
    df = pd.read_csv(people)
    df.loc[0, "area"] = "Z99"
    df.to_csv(people, index=False)
    assert run(files, tmp_path / "out") == 2
    assert "outside" in capsys.readouterr().err
    assert run(files, tmp_path / "out", "--outside", "drop", "--quiet") == 0
    custodian = json.loads((tmp_path / "out.custodian.json").read_text())
    assert "records_left_out" in json.dumps(custodian)
    assert "left_out" not in (tmp_path / "out" / "dp_publication.json").read_text()


def test_the_hierarchy_variable_alone_needs_no_domain(tmp_path, files):
    geo, people, _, areas = files
    rc = main(["dp-publish", str(people), "--variables", "area", "--hierarchy", f"area={geo}", "--epsilon", "1",
               "--noise", "geometric", "--quiet", "--output", str(tmp_path / "out")])
    assert rc == 0
    out = pd.read_csv(tmp_path / "out" / "counts.csv", keep_default_na=False)
    assert set(areas) <= set(out["area"])  # every leaf, the empty one too
