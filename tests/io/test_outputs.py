"""Writing outputs: locks per target, work folders out of every pattern's way, leftovers cleared, strict JSON."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cellsafe.exceptions import DataError, InvalidArgumentError, OutputBusyError
from cellsafe.io import Manifest, OutputLock, OutputSet, atomic_path, dumps_strict, glob_files, work_folder


def test_a_second_writer_of_a_target_is_refused_at_once(tmp_path):
    with OutputLock(tmp_path / "t.csv"):
        with pytest.raises(OutputBusyError, match=r"being written by another cellsafe run \(pid \d+"):
            OutputLock(tmp_path / "t.csv").acquire()
        with pytest.raises(OutputBusyError):
            with atomic_path(tmp_path / "t.csv"):
                pass
        OutputLock(tmp_path / "u.csv").acquire().release()  # another target in the same folder is free
    OutputLock(tmp_path / "t.csv").acquire().release()  # free again once released
    assert list(tmp_path.iterdir()) == []


def test_leftovers_of_a_killed_run_are_cleared_by_the_next_one(tmp_path):
    work = work_folder(tmp_path / "r.csv")
    (work / "run-dead").mkdir(parents=True)
    (work / "run-dead" / "r.csv").write_text("partial")
    (work / "lock").write_text("pid 1")
    (tmp_path / ".r.partial-abc.csv").write_text("an earlier version's temporary")
    (tmp_path / ".other.csv.partial").mkdir()  # another target's work folder is left alone
    with atomic_path(tmp_path / "r.csv") as tmp:
        tmp.write_text("a\n1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.csv.partial", "r.csv"]


def test_output_set_refuses_inputs_and_clobbering_before_any_work(tmp_path):
    data = tmp_path / "in" / "d.csv"
    data.parent.mkdir()
    data.write_text("a\n1\n")
    with pytest.raises(DataError, match="is the input"):
        OutputSet([data], overwrite=True).file(data)
    with pytest.raises(DataError, match="holds the input"):
        OutputSet([data], overwrite=True).folder(data.parent)
    with pytest.raises(DataError, match="inside the input folder"):
        OutputSet([data.parent]).file(data.parent / "new.csv")
    with pytest.raises(InvalidArgumentError, match="must end in .csv, .parquet or .json"):
        OutputSet([]).file(tmp_path / "x.xlsx")
    (tmp_path / "x.csv").write_text("old")
    with pytest.raises(DataError, match="exists; choose a new name or add --overwrite"):
        OutputSet([]).file(tmp_path / "x.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "x.csv"]  # no lock or work folder left


def test_a_failed_run_leaves_nothing_and_the_old_set_survives(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "old.csv").write_text("old")
    with pytest.raises(RuntimeError):
        with OutputSet([], overwrite=True) as out:
            folder = out.folder(tmp_path / "o")
            out.write_frame(pd.DataFrame({"a": [1]}), folder / "new.csv")
            raise RuntimeError("the run fails")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["o", "old.csv"]


def test_overwrite_replaces_the_whole_set(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "synthetic_3.csv").write_text("an earlier, larger set")
    with OutputSet([], overwrite=True, manifest=Manifest("synthesize", ["x"])) as out:
        folder = out.folder(tmp_path / "o")
        out.write_frame(pd.DataFrame({"a": [1]}), folder / "synthetic_1.csv")
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["manifest.json", "synthetic_1.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_public_manifest_keeps_the_custodian_record_beside_the_release(tmp_path):
    data = tmp_path / "records.csv"
    data.write_text("a\n1\n")
    manifest = Manifest("dp-synthesize", ["dp-synthesize", str(data), "--seed", "3"], public=True)
    manifest.add_input(data)
    manifest.set_seed(3)
    manifest.public_extra["epsilon"] = 1.0
    with OutputSet([data], manifest=manifest) as out:
        folder = out.folder(tmp_path / "release")
        out.write_frame(pd.DataFrame({"a": [1]}), folder / "synthetic_1.csv")
    public = (tmp_path / "release" / "manifest.json").read_text()
    assert "records.csv" not in public and '"seed"' not in public and json.loads(public)["details"]["epsilon"] == 1.0
    custodian = json.loads((tmp_path / "release.custodian.json").read_text())
    assert custodian["seed"] == 3 and custodian["inputs"][0]["path"] == str(data)
    assert next(iter(custodian)) == "publication" and "not for publication" in custodian["publication"]
    assert sorted(p.name for p in (tmp_path / "release").iterdir()) == ["manifest.json", "synthetic_1.csv"]


def test_glob_matches_as_a_shell_does(tmp_path):
    for name in ("a.csv", "b.csv", ".a.csv.partial-x.csv"):
        (tmp_path / name).write_text("x\n1\n")
    (tmp_path / ".b.csv.partial" / "run-1").mkdir(parents=True)
    (tmp_path / ".b.csv.partial" / "run-1" / "b.csv").write_text("x\n1\n")
    assert [p.name for p in glob_files(tmp_path / "*.csv")] == ["a.csv", "b.csv"]
    assert [p.name for p in glob_files(tmp_path / "**" / "*.csv")] == ["a.csv", "b.csv"]
    with pytest.raises(DataError, match="no file matches"):
        glob_files(tmp_path / "*.parquet")


def test_json_is_standard():
    text = dumps_strict({"nan": float("nan"), "inf": float("-inf"), "x": [1, 2.5]})
    assert json.loads(text) == {"nan": None, "inf": None, "x": [1, 2.5]} and "NaN" not in text
