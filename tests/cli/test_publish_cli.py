"""``cellsafe publish`` and ``cellsafe compare``: end to end, JSON keys, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main
from cellsafe.exceptions import CellsafeWarning
from cellsafe.mechanisms import make_mechanism

REF = Path(__file__).resolve().parents[1] / "reference"
LANG = REF / "langsrud"
ONS = REF / "ons_ptable" / "ptable_10_5_rule.csv"
FORMULA = "party*age + party*sex"


@pytest.fixture(scope="module")
def micro(tmp_path_factory):
    inner = pd.read_csv(LANG / "inner.csv")
    rows = inner.loc[inner.index.repeat(inner["count"]), ["party", "age", "sex"]].reset_index(drop=True)
    rows["rkey"] = np.random.default_rng(3).integers(0, 256, len(rows))
    path = tmp_path_factory.mktemp("micro") / "people.csv"
    rows.to_csv(path, index=False)
    return path


def _run(argv, capsys):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_publish_ckm_generated_ptable(tmp_path, micro, capsys):
    out = tmp_path / "ckm.csv"
    rc, stdout, _ = _run(
        ["publish", micro, "--variables", "party,age,sex", "--formula", FORMULA, "--method", "ckm",
         "--D", 5, "--V", 3, "--js", 2, "--seed", 1, "--output", out], capsys)
    assert rc == 0 and "PublishedTable(method='ckm'" in stdout
    df = pd.read_csv(out)
    assert list(df.columns) == ["table", "party", "age", "sex", "count"] and len(df) == 24
    assert not df["count"].isin([1, 2]).any()
    again = tmp_path / "again.csv"
    rc, _, err = _run(["publish", micro, "--variables", "party,age,sex", "--formula", FORMULA, "--method", "ckm",
                       "--seed", 1, "--output", again, "--quiet"], capsys)
    assert rc == 2 and "needs its ptable: --D and --V" in err  # no default ptable: the library declares none


@pytest.mark.parametrize("words", [["--D", "5", "--V", "3"], ["--D", "5", "--V", "3", "--js", "2"]])
def test_publish_and_assess_with_the_same_words_use_the_same_ptable(tmp_path, micro, capsys, words):
    """The ptable published is the ptable assessed: its sha256 in publish's manifest, assess's JSON and report's
    manifest are one (publish used js = 2 where assess used the library's js = 0)."""
    spec = "ckm:" + ",".join(f"{a[2:]}={b}" for a, b in zip(words[::2], words[1::2]))
    out = tmp_path / "published.csv"
    assert _run(["publish", micro, "--variables", "party,age,sex", "--formula", FORMULA, "--method", "ckm", *words,
                 "--seed", 1, "--quiet", "--output", out], capsys)[0] == 0
    published = json.loads(Path(f"{out}.manifest.json").read_text())["mechanism"]
    rc, stdout, _ = _run(["assess", micro, "--variables", "party,age,sex", "--mechanism", spec, "--json"], capsys)
    assessed = json.loads(stdout)
    report = tmp_path / "report.html"
    assert _run(["report", micro, "--variables", "party,age,sex", "--mechanism", spec, "--no-frontier",
                 "--no-hellinger", "--quiet", "--output", report], capsys)[0] == 0
    reported = json.loads(Path(f"{report}.manifest.json").read_text())["details"]["report"]["mechanisms"][0]
    assert rc == 0 and len(published["ptable_sha256"]) == 64
    assert published["ptable_sha256"] == assessed["ptable_sha256"] == reported["ptable_sha256"]
    assert published["spec"] == f"{spec},publication={FORMULA}" and assessed["spec"] == spec == reported["spec"]
    assert make_mechanism(published["spec"]).ptable == make_mechanism(assessed["spec"]).ptable


def test_publish_ckm_ons(tmp_path, micro, capsys):
    out = tmp_path / "ons.csv"
    rc, _, _ = _run(
        ["publish", micro, "--variables", "party,age,sex", "--formula", "party:age - 1", "--method", "ckm",
         "--ptable", ONS, "--record-key", "rkey", "--output", out], capsys)
    assert rc == 0
    df = pd.read_csv(out)
    vals = df["count"].dropna()
    assert len(df) == 9 and np.all(vals >= 10) and np.all(vals % 5 == 0)
    assert df["count"].isna().sum() >= 1


def test_publish_manifest_records_the_parameters(tmp_path, micro, capsys):
    base = ["publish", micro, "--variables", "party,age,sex", "--formula", FORMULA, "--seed", 1, "--quiet"]

    def mechanism(*extra):
        out = tmp_path / f"p{len(list(tmp_path.iterdir()))}.csv"
        assert _run([*base, *extra, "--output", out], capsys)[0] == 0
        entry = json.loads(Path(f"{out}.manifest.json").read_text())["mechanism"]
        json.dumps(entry, allow_nan=False)  # plain JSON, no reprs of objects
        return entry

    ckm = mechanism("--method", "ckm", "--D", 4, "--V", 2.5, "--js", 1)
    assert ckm["spec"] == f"ckm:D=4,V=2.5,js=1,publication={FORMULA}" and ckm["class"] == "CellKeyMethod"
    assert {"D": 4, "V": 2.5, "js": 1}.items() <= ckm["parameters"]["ptable"]["parameters"].items()
    assert ckm["parameters"]["publication"] == FORMULA and ckm["parameters"]["threshold_in_use"] == 0
    ons = mechanism("--method", "ckm", "--ptable", ONS, "--record-key", "rkey")
    assert "spec" not in ons and ons["parameters"]["ptable"]["file"] == str(ONS)
    assert ons["parameters"]["ptable"]["layout"] == "ons" and ons["parameters"]["threshold_in_use"] == 10
    scr = mechanism("--method", "scr", "--base", 5)
    assert scr["spec"] == f"scr:publication={FORMULA},base=5" and scr["parameters"]["base"] == 5 and scr["parameters"]["publication"] == FORMULA
    sup = mechanism("--method", "suppress", "--rule", "freq<=2")
    assert sup["parameters"]["rules"] == ["freq<=2"] and sup["method"] == "suppress"


def test_publish_scr_frequency_table(tmp_path, capsys):
    out = tmp_path / "scr.csv"
    rc, stdout, _ = _run(
        ["publish", LANG / "inner.csv", "--variables", "party,age,sex", "--count", "count", "--formula", FORMULA,
         "--method", "scr", "--base", 3, "--seed", 2, "--output", out], capsys)
    assert rc == 0 and "PublishedTable(method='scr'" in stdout
    df = pd.read_csv(out)
    assert not df["count"].isin([1, 2]).any()
    total = df.loc[(df.party == "Total") & (df.age == "Total") & (df.sex == "Total"), "count"].item()
    assert total == 57


def test_publish_scr_lists_the_frame_unless_asked(tmp_path, capsys):
    # 001's inner table has empty cells: listed and rounded by default (R's extend0; --zeros says the same),
    # left out with --list nonzero
    base = ["publish", LANG / "inner.csv", "--variables", "party,age,sex", "--count", "count", "--formula", FORMULA,
            "--method", "scr", "--seed", 2, "--quiet", "--output"]
    _run(base + [tmp_path / "z.csv"], capsys)
    _run(base + [tmp_path / "z2.csv", "--zeros"], capsys)
    with pytest.warns(CellsafeWarning, match="holds 1 to 2 in truth"):
        _run(base + [tmp_path / "nz.csv", "--list", "nonzero"], capsys)
    nz, z = pd.read_csv(tmp_path / "nz.csv"), pd.read_csv(tmp_path / "z.csv")
    assert len(z) == 24 and len(nz) == 23  # one published cell (party C, age young) holds only empty inner cells
    assert pd.read_csv(tmp_path / "z2.csv").equals(z)
    assert not nz["count"].isin([1, 2]).any() and not z["count"].isin([1, 2]).any()


def test_compare_json(capsys):
    rc, stdout, _ = _run(
        ["compare", LANG / "inner.csv", "--variables", "party,age,sex", "--count", "count", "--formula", FORMULA,
         "--published", f"ckm={LANG / 'published_cell_key.csv'}",
         "--published", f"scr={LANG / 'published_small_count_rounding.csv'}",
         "--sensitive", "party", "--keys", "age,sex", "--beta", "0.5", "--json"], capsys)
    assert rc == 0
    out = json.loads(stdout)
    assert set(out) == {"ckm", "scr"}
    for name in out:
        assert {"additive", "hellinger_utility", "risk", "restored", "expected_inner"} <= set(out[name])
        assert set(out[name]["hellinger_utility"]) == {"published", "restored"}
        assert {"a", "b", "c", "f_beta"} <= set(out[name]["risk"]["plain"])
        assert {"a", "b", "c", "f_beta"} <= set(out[name]["risk"]["know_yourself"])
        assert set(out[name]["restored"][0]) == {"party", "age", "sex", "count"}
        assert set(out[name]["expected_inner"][0]) == {"party", "age", "sex", "count"}
        assert len(out[name]["restored"]) == 24 and len(out[name]["expected_inner"]) == 18
    ckm, scr = out["ckm"], out["scr"]
    assert ckm["additive"] is False and scr["additive"] is True
    assert round(ckm["hellinger_utility"]["published"], 4) == 0.9326
    assert round(ckm["hellinger_utility"]["restored"], 4) == 0.9481
    assert round(ckm["risk"]["plain"]["f_beta"], 4) == 0.5556
    assert round(ckm["risk"]["know_yourself"]["f_beta"], 4) == 0.9091
    assert round(scr["risk"]["plain"]["f_beta"], 4) == 0.0
    assert round(scr["risk"]["know_yourself"]["f_beta"], 4) == 0.7143
    a_total = [r for r in ckm["restored"] if r["party"] == "A" and r["age"] == "Total" and r["sex"] == "Total"]
    assert abs(a_total[0]["count"] - 18.9375) < 1e-4  # Table 6


def test_compare_text(capsys):
    rc, stdout, _ = _run(
        ["compare", LANG / "inner.csv", "--variables", "party,age,sex", "--count", "count", "--formula", FORMULA,
         "--published", f"scr={LANG / 'published_small_count_rounding.csv'}", "--sensitive", "party",
         "--keys", "age,sex"], capsys)
    assert rc == 0 and "F_beta=0.7143" in stdout


@pytest.mark.parametrize(
    "argv,match",
    [
        (["publish", "{micro}", "--variables", "party,age,sex", "--formula", FORMULA, "--method", "ckm",
          "--ptable", "{ons}", "--D", "5", "--output", "{out}"], "either --ptable"),
        (["publish", "{micro}", "--variables", "party,age,sex", "--formula", FORMULA, "--method", "scr",
          "--D", "5", "--output", "{out}"], "apply to --method ckm only"),
        (["publish", "{micro}", "--variables", "party,age,sex", "--formula", "party*nope", "--method", "scr",
          "--output", "{out}"], "unknown variable 'nope'"),
        (["publish", "{micro}", "--variables", "party,age,sex", "--formula", FORMULA, "--method", "ckm",
          "--D", "0", "--V", "3", "--output", "{out}"], "'D' parameter"),
        (["compare", "{inner}", "--variables", "party,age,sex", "--count", "count", "--formula", FORMULA,
          "--published", "nofile", "--sensitive", "party", "--keys", "age,sex"], "NAME=FILE"),
        (["compare", "{inner}", "--variables", "party,age,sex", "--count", "count", "--formula", FORMULA,
          "--published", "x={ckm}", "--sensitive", "income", "--keys", "age,sex"], "not among --variables"),
    ],
)
def test_bad_input(argv, match, micro, tmp_path, capsys):
    fill = {"micro": micro, "ons": ONS, "out": tmp_path / "o.csv", "inner": LANG / "inner.csv",
            "ckm": LANG / "published_cell_key.csv"}
    rc, _, err = _run([a.format(**fill) for a in argv], capsys)
    assert rc == 2
    assert match in err


def test_compare_text_cell_without_a_probability(tmp_path, capsys):
    # know_yourself leaves nobody to guess from in a quasi-identifier cell of one unit
    inner = tmp_path / "inner.csv"
    pd.DataFrame({"s": ["a", "a", "b"], "q": ["x", "y", "y"], "count": [1, 3, 2]}).to_csv(inner, index=False)
    published = tmp_path / "exact.csv"
    pd.DataFrame(
        {"s": ["Total", "a", "b", "Total", "Total", "a", "a", "b", "b"],
         "q": ["Total", "Total", "Total", "x", "y", "x", "y", "x", "y"],
         "count": [6, 4, 2, 1, 5, 1, 3, 0, 2]}
    ).to_csv(published, index=False)
    rc, stdout, _ = _run(
        ["compare", inner, "--variables", "s,q", "--count", "count", "--formula", "s*q",
         "--published", f"p={published}", "--sensitive", "s", "--keys", "q"], capsys)
    assert rc == 0 and "q=x: n/a (s=a)" in stdout
