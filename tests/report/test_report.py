"""The release report: its sections, and numbers equal to those of assess, evaluate and budget --json."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from cellsafe import CountTable, Variable
from _json_compare import assert_same_numbers

from cellsafe.cli.main import main
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.report import SECTIONS, Report, parse_requirement

VARIABLES = "area,sex,age"

CANDIDATES = ["geometric:epsilon=1", "ckm:D=5,V=3"]
TARGETS = ["tau4(1)<=0.5", "hellinger>=0.9"]


def _cli_json(capsys, argv):
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _close(a, b, path="") -> None:
    """Every number of ``b`` (a command's JSON) equals the report's ``a``; run fields are not compared."""
    assert_same_numbers(a, b, path, skip=("engine", "files"))


@pytest.fixture(scope="module")
def cli_report(workspace):
    out = workspace / "out" / "report.html"
    argv = ["report", str(workspace / "people.csv"), "--variables", VARIABLES, "--name", "Pupils",
            "--release", str(workspace / "release"), "--budget-log", str(workspace / "budget.json"),
            "--output", str(out), "--quiet"]
    for spec in CANDIDATES:
        argv += ["--mechanism", spec]
    for t in TARGETS:
        argv += ["--target", t]
    assert main(argv) == 0
    return out, json.loads(out.with_suffix(".json").read_text()), out.read_text()


def test_a_priori_numbers_equal_assess_json(cli_report, workspace, capsys):
    _, data, _ = cli_report
    by_spec = {m["spec"]: m for m in data["sections"]["mechanisms"]}
    assert set(by_spec) == {*CANDIDATES, "nbi:sigma=0.5"}  # the release's mechanism from its manifest
    for spec, entry in by_spec.items():
        ref = _cli_json(capsys, ["assess", str(workspace / "people.csv"), "--variables", VARIABLES,
                                 "--mechanism", spec, "--k", "1,2", "--p", "1,5,10,50", "--json"])
        _close(entry["a_priori"], ref)


def test_empirical_numbers_equal_evaluate_json(cli_report, workspace, capsys):
    _, data, _ = cli_report
    [entry] = data["sections"]["empirical"]
    files = sorted(str(p) for p in (workspace / "release").glob("synthetic_*.csv"))
    ref = _cli_json(capsys, ["evaluate", str(workspace / "people.csv"), *files, "--variables", VARIABLES,
                             "--k", "1,2", "--p", "1,5,10,50", "--json"])
    _close(entry["empirical"], ref)
    assert entry["m"] == 3 and entry["spec"] == "nbi:sigma=0.5"
    spread = entry["across_implicates"]["tau4(1)"]
    assert spread["se"] == pytest.approx(spread["sd"] / math.sqrt(3))
    assert spread["mean"] == pytest.approx(ref["tau"]["1"]["tau4"])


def test_budget_and_provenance(cli_report, workspace, capsys):
    _, data, _ = cli_report
    ref = _cli_json(capsys, ["budget", str(workspace / "budget.json"), "--json"])
    budget = data["sections"]["budget"]
    assert budget["summary"]["epsilon_budget"] == ref["budget"]["epsilon"]
    assert budget["summary"]["epsilon_remaining"] == ref["budget"]["epsilon"] - ref["spent"]["epsilon"]
    prov = data["sections"]["provenance"]
    paths = {i["path"] for i in prov["inputs"]}
    assert str(workspace / "people.csv") in paths and str(workspace / "release" / "manifest.json") in paths
    [man] = prov["manifests"]
    assert man["manifest"]["mechanism"]["spec"] == "nbi:sigma=0.5"
    assert (workspace / "out" / "report.html.manifest.json").exists()


def test_verdicts_follow_the_numbers(cli_report):
    _, data, html = cli_report
    verdicts = {v["spec"]: v for v in data["sections"]["summary"]["verdicts"]}
    by_spec = {m["spec"]: m["a_priori"] for m in data["sections"]["mechanisms"]}
    for spec, v in verdicts.items():
        a = by_spec[spec]
        expected = a["tau"]["1"]["tau4"] <= 0.5 and a["expected_hellinger_utility"] >= 0.9
        if spec == "nbi:sigma=0.5":  # released: the empirical means are judged too
            emp = data["sections"]["empirical"][0]["empirical"]
            expected = expected and emp["tau"]["1"]["tau4"] <= 0.5 and emp["hellinger_utility"] >= 0.9
            assert [c["basis"] for c in v["checks"]].count("empirical (release)") == 2
        assert v["passed"] is expected
    assert html.count("class='verdict pass'") + html.count("class='verdict fail'") == len(verdicts)


def test_html_is_self_contained_and_complete(cli_report):
    _, _, html = cli_report
    for key, heading in SECTIONS:
        assert f"<h2 id='h-{key}'>{heading}</h2>" in html
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:|//)""", html)  # nothing fetched
    assert "<img" not in html and "<script" not in html
    svgs = re.findall(r"<svg[^>]*>", html)
    assert len(svgs) == 3  # frontier, transitions, the release's empirical figure
    assert all('role="img"' in s and "aria-label=" in s for s in svgs)
    assert html.count("<title>") == 1 + len(svgs)
    assert "@page { size: A4" in html and "break-before: page" in html
    assert "Pupils" in html and "nbi:sigma=0.5" in html


def test_report_api_and_notebook_view():
    t = CountTable([Variable("a", tuple(range(20)))], list(range(12)), [1, 1, 2, 3, 5, 8, 13, 1, 2, 1, 40, 7])
    r = Report(t, ["nbi:sigma=1"], name="toy", targets=["tau4(3)<=0.9", "within(5)>=0.1"], frontier=False,
               hellinger=False)
    d = r.to_dict()
    assert set(d["sections"]) == {key for key, _ in SECTIONS} - {"glossary"}
    assert "3" in d["sections"]["mechanisms"][0]["a_priori"]["tau"]  # the targets' k are computed
    assert d["sections"]["frontier"] is None and d["sections"]["budget"] is None
    assert "<h2 id='h-summary'>" in r._repr_html_()
    assert repr(r) == "Report('toy', mechanisms=1, releases=0, targets=2)"


def test_to_html_writes_the_file_whole_or_not_at_all(tmp_path, monkeypatch):
    t = CountTable([Variable("a", tuple(range(4)))], [0, 1, 2, 3], [1, 2, 3, 40])
    r = Report(t, ["nbi:sigma=1"], name="toy", frontier=False, hellinger=False)
    path = tmp_path / "r.html"
    text = r.to_html(path)
    assert path.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]  # no hidden work file left

    real_write = Path.write_text

    def half_then_full_disk(self: Path, data: str, *args: object, **kwargs: object) -> int:
        real_write(self, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_full_disk)
    with pytest.raises(OSError):
        r.to_html(path)
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == text  # the earlier file stands
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


@pytest.mark.parametrize(
    "text, match",
    [
        ("tau4(1)=0.4", "a bound, such as 'tau4\\(1\\)<=0.4'"),
        ("tau9(1)<=0.4", "unknown metric"),
        ("mse>=0.2", "use 'loss'"),
        ("hellinger>=x", "must be a number"),
        ("hellinger", "must look like"),
    ],
)
def test_bad_targets(text, match):
    with pytest.raises(InvalidArgumentError, match=match):
        parse_requirement(text)


def test_requirements_read_the_json_keys():
    assessed = {"tau": {"1": {"tau4": 0.3}}, "expected_hellinger_utility": 0.95, "expected_squared_error": 10.0,
                "within_p": {"all": {"5": 0.7}}}
    measured = {"tau": {"1": {"tau4": 0.45}}, "hellinger_utility": 0.85, "squared_error": 12.0,
                "within_p": {"all": {"5": 0.9}}}
    cases = [("tau4(1)<=0.4", True, False), ("hellinger>=0.9", True, False), ("loss<11", True, False),
             ("within(5)>0.8", False, True)]
    for text, a, b in cases:
        req = parse_requirement(text)
        assert req.check(req.value_in(assessed)) is a and req.check(req.value_in(measured)) is b


@pytest.mark.parametrize(
    "extra, match",
    [
        ([], "at least one --mechanism"),
        (["--mechanism", "nbi:sigma=1", "--target", "tau4(1)==1"], "must look like"),
        (["--mechanism", "nbi:sigma=-1"], "sigma"),
    ],
)
def test_bad_report_commands(workspace, capsys, extra, match):
    out = workspace / "bad" / "r.html"
    assert main(["report", str(workspace / "people.csv"), "--variables", VARIABLES, "--output", str(out), *extra]) == 2
    assert re.search(match, capsys.readouterr().err)
    assert not out.exists()


def test_published_tables_equal_compare_json(tmp_path, capsys):
    from pathlib import Path

    lang = Path(__file__).resolve().parents[1] / "reference" / "langsrud"
    common = [str(lang / "inner.csv"), "--variables", "party,age,sex", "--count", "count"]
    pubs = ["--published", f"ckm={lang / 'published_cell_key.csv'}",
            "--published", f"scr={lang / 'published_small_count_rounding.csv'}"]
    who = ["--sensitive", "party", "--keys", "age,sex"]
    ref = _cli_json(capsys, ["compare", *common, "--formula", "party*age + party*sex", *pubs, *who, "--json"])
    out = tmp_path / "pub.html"
    assert main(["report", *common, *pubs, "--formula", "party*age + party*sex", *who,
                 "--output", str(out), "--quiet"]) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    entries = {e["name"]: e for e in data["sections"]["published"]}
    assert set(entries) == {"ckm", "scr"}
    for name, entry in entries.items():
        for key in ("additive", "hellinger_utility", "risk"):
            _close(entry[key], ref[name][key], f"{name}.{key}")
    assert round(entries["ckm"]["risk"]["plain"]["f_beta"], 4) == 0.5556  # 001's published value
    assert "<h2 id='h-published'>Published tables</h2>" in out.read_text()
