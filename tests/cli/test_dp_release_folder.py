"""A DP release folder read the way an intruder reads it: everything in it may be published (issue 23 item 1),
and the ledger it was charged to cannot be pulled from under it (issue 26 item 1)."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from cellsafe.cli.main import main

SEED = "918273645"  # distinctive: any occurrence in a public file is the seed


def _release(tmp_path, *extra, name="release"):
    records = pd.DataFrame({"sex": ["F", "M", "F", "M", "F"], "age": ["y", "o", "o", "y", "y"]})
    records.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "domain.json").write_text(json.dumps({"sex": ["F", "M"], "age": ["y", "o"]}))
    log = tmp_path / "ledger" / "budget.jsonl"
    log.parent.mkdir(exist_ok=True)
    if not log.exists():
        assert main(["budget", str(log), "--create", "--epsilon", "5"]) == 0
    out = tmp_path / name
    rc = main(["dp-synthesize", str(tmp_path / "people.csv"), "--variables", "sex,age", "--domain",
               str(tmp_path / "domain.json"), "--mechanism", "multinomial-dirichlet", "--epsilon", "1", "-m", "2",
               "--seed", SEED, "--budget-log", str(log), "--quiet", "--output", str(out), *extra])
    return rc, out, log


def _keys(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v)


def test_the_release_folder_holds_no_input_hash_seed_or_command_line(tmp_path):
    rc, out, log = _release(tmp_path)
    assert rc == 0
    secret_hashes = {hashlib.sha256((tmp_path / "people.csv").read_bytes()).hexdigest()}
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert {p.name for p in files} == {"synthetic_1.csv", "synthetic_2.csv", "dp_synthesis.json", "manifest.json"}
    for f in files:
        text = f.read_text()
        for h in secret_hashes:
            assert h not in text, f"{f.name} holds the input's sha256"
        assert SEED not in text, f"{f.name} holds the seed"
        assert "people.csv" not in text and str(tmp_path) not in text, f"{f.name} names the confidential input"
        if f.suffix == ".json":
            keys = set(_keys(json.loads(text)))
            assert not keys & {"seed", "inputs", "command_line", "records_left_out", "custodian"}, f.name
    # the custodian's record is beside the folder, never inside it, and says it is not for publication
    custodian = tmp_path / "release.custodian.json"
    data = json.loads(custodian.read_text())
    assert data["seed"] == int(SEED)
    assert secret_hashes <= {i["sha256"] for i in data["inputs"]}
    assert "not_for_publication" in data["details"]["custodian"]
    # what the public description says, and nothing more
    meta = json.loads((out / "dp_synthesis.json").read_text())
    assert meta["relation"] == "replace-one" and meta["epsilon_total"] == pytest.approx(1.0)
    assert meta["ledger"]["release"] == 1 and len(meta["ledger"]["head"]) == 64


def test_describe_of_a_released_table_says_nothing_of_the_input(tmp_path, capsys):
    rc, out, _ = _release(tmp_path)
    assert rc == 0
    capsys.readouterr()
    assert main(["describe", str(out / "synthetic_1.csv"), "--variables", "sex,age", "--count", "count", "--json"]) == 0
    printed = capsys.readouterr().out
    assert SEED not in printed and hashlib.sha256((tmp_path / "people.csv").read_bytes()).hexdigest() not in printed


def test_overwriting_the_folder_that_holds_the_ledger_is_refused(tmp_path, capsys):
    # issue 26: --overwrite on an output folder holding the --budget-log deleted the log and charged a lost one
    rc, out, log = _release(tmp_path)
    assert rc == 0
    before = log.read_bytes()
    records = tmp_path / "people.csv"
    rc = main(["dp-synthesize", str(records), "--variables", "sex,age", "--domain", str(tmp_path / "domain.json"),
               "--mechanism", "multinomial-dirichlet", "--epsilon", "1", "--budget-log", str(log), "--quiet",
               "--overwrite", "--output", str(log.parent)])
    assert rc == 2
    err = capsys.readouterr().err
    assert "budget.jsonl" in err
    assert log.read_bytes() == before  # nothing charged, nothing removed
    assert main(["budget", str(log), "--verify", str(out)]) == 0


def test_a_release_charged_to_a_truncated_ledger_is_refused_before_anything_is_written(tmp_path, capsys):
    rc, out, log = _release(tmp_path)
    assert rc == 0
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n")  # the last release cut out
    rc, _, _ = _release(tmp_path, "--overwrite")
    assert rc == 2
    assert "was truncated" in capsys.readouterr().err
    assert len(log.read_text().splitlines()) == 1


def test_a_ledger_rolled_back_with_its_anchor_fails_against_a_later_release(tmp_path, capsys):
    # the operator who can write the log and its lock file (docs/dp.md section 5): cut the last release and
    # restore the lock file from the earlier release's anchor; the log alone then looks whole, the later
    # release's own anchor does not
    rc, first, log = _release(tmp_path)
    assert rc == 0
    rc, later, _ = _release(tmp_path, name="later")
    assert rc == 0
    assert json.loads((later / "dp_synthesis.json").read_text())["ledger"]["release"] == 2
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n")
    log.with_name(log.name + ".lock").unlink()
    assert main(["budget", str(log), "--anchor", str(first)]) == 0
    assert main(["budget", str(log), "--verify", str(first)]) == 0  # consistent: the log alone cannot tell
    capsys.readouterr()
    assert main(["budget", str(log), "--verify", str(later)]) == 2
    out = capsys.readouterr()
    assert "truncated or replaced" in out.out and "1 problem(s)" in out.err


def test_the_report_is_never_written_into_a_public_release_folder(tmp_path, capsys):
    # the report names and hashes the confidential inputs: inside a folder published whole it would be published
    rc, first, _ = _release(tmp_path)
    assert rc == 0
    rc, later, _ = _release(tmp_path, name="later")
    assert rc == 0
    before = sorted(p.name for p in first.iterdir())
    capsys.readouterr()
    rc = main(["report", str(tmp_path / "people.csv"), "--variables", "sex,age", "--release", str(later),
               "--no-hellinger", "--no-frontier", "--quiet", "--output", str(first / "report.html")])
    assert rc == 2
    assert "may be published whole" in capsys.readouterr().err
    assert sorted(p.name for p in first.iterdir()) == before


# every path of dp-synthesize that reads something beyond the records: a public population file and a noisy regional
# prior, a part of public size, records left out with a noisy total, the marginal synthesis
_PATHS = {
    "poisson-gamma, regional prior with its epsilon": [
        "--variables", "state,county", "--count", "deaths", "--population", "pop", "--population-file", "{d}/population.csv",
        "--mechanism", "poisson-gamma",
        "--prior", "regional:state", "--prior-epsilon", "0.5"],
    "multinomial-dirichlet, a part of public size": [
        "--variables", "county", "--count", "deaths", "--part", "state=N", "--part-sizes", "{d}/sizes.json",
        "--mechanism", "multinomial-dirichlet"],
    "multinomial-dirichlet, records left out, noisy total": [
        "--variables", "state,county", "--count", "deaths", "--outside", "drop", "--total-epsilon", "0.3",
        "--mechanism", "multinomial-dirichlet"],
    "mst": ["--variables", "state,county", "--count", "deaths", "--mechanism", "mst"],
}


@pytest.mark.parametrize("path", list(_PATHS))
def test_every_dp_path_writes_a_folder_without_input_hash_seed_or_left_out_count(tmp_path, path):
    d = tmp_path
    records = pd.DataFrame({"state": ["N", "N", "N", "S", "S", "S"], "county": ["a", "b", "c", "d", "e", "x"],
                            "deaths": [4, 0, 7, 1, 3, 2], "pop": [1000, 300, 2500, 800, 1200, 50]})
    records.to_csv(d / "deaths.csv", index=False)
    (d / "geo.json").write_text(json.dumps({"state": ["N", "S"], "county": ["a", "b", "c", "d", "e"]}))
    records.iloc[:5][["state", "county", "pop"]].to_csv(d / "population.csv", index=False)  # public populations
    (d / "sizes.json").write_text(json.dumps({"N": 11, "S": 6}))
    if "left out" not in path:  # only that path keeps the record outside the domain
        records.iloc[:5].to_csv(d / "deaths.csv", index=False)
    log = d / "budget.jsonl"
    assert main(["budget", str(log), "--create", "--epsilon", "10", "--delta", "1e-6"]) == 0
    extra = [a.replace("{d}", str(d)) for a in _PATHS[path]]
    out = d / "release"
    assert main(["dp-synthesize", str(d / "deaths.csv"), "--domain", str(d / "geo.json"), "--epsilon", "2",
                 "--seed", SEED, "--budget-log", str(log), "--quiet", "--output", str(out), *extra]) == 0
    secret = hashlib.sha256((d / "deaths.csv").read_bytes()).hexdigest()
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files
    for f in files:
        text = f.read_text()
        assert secret not in text and SEED not in text, f.name
        assert "deaths.csv" not in text and str(d) not in text, f.name
        if f.suffix == ".json":
            assert not set(_keys(json.loads(text))) & {"seed", "inputs", "command_line", "records_left_out",
                                                      "custodian"}, f.name
    meta = json.loads((out / "dp_synthesis.json").read_text())
    assert meta["relation"] == "replace-one" and len(meta["domain_sha256"]) == 64 and meta["ledger"]["release"] == 1
    custodian = json.loads((d / "release.custodian.json").read_text())
    assert custodian["seed"] == int(SEED) and secret in {i["sha256"] for i in custodian["inputs"]}
