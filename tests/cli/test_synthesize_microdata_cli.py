"""``cellsafe synthesize-microdata``: outputs, manifest, reproducibility, errors, evaluate-microdata on the outputs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from cellsafe.cli.main import main

REF = Path(__file__).resolve().parents[1] / "reference"
PENGUINS = REF / "penguins" / "adelie.csv"
ADULT = REF / "adult" / "adult.csv.gz"
PENGUIN_ARGS = [
    "--visit-sequence", "sex,bill_length_mm,flipper_length_mm",
    "--method-for", "bill_length_mm=normal", "--method-for", "flipper_length_mm=normal",
    "--numeric", "bill_length_mm,flipper_length_mm",
]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_writes_implicates_and_manifest(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["synthesize-microdata", str(PENGUINS), *PENGUIN_ARGS, "-m", "3", "--seed", "1", "--output", str(out)])
    assert rc == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == ["manifest.json", "synthetic_1.csv", "synthetic_2.csv", "synthetic_3.csv"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["input"]["sha256"] == _sha(PENGUINS) and manifest["input"]["records"] == 146
    assert manifest["methods"] == {"sex": "sample", "bill_length_mm": "normal", "flipper_length_mm": "normal"}
    assert manifest["visit_sequence"] == ["sex", "bill_length_mm", "flipper_length_mm"]
    assert manifest["seed"] == 1 and manifest["command"].startswith("cellsafe synthesize-microdata ")
    for entry in manifest["outputs"]:
        assert entry["sha256"] == _sha(out / entry["file"]) and entry["records"] == 146
    s = pd.read_csv(out / "synthetic_1.csv")
    assert list(s.columns) == ["sex", "bill_length_mm", "flipper_length_mm"]
    assert s["flipper_length_mm"].dtype.kind == "i" and set(s["sex"]) <= {"female", "male"}
    assert "synthesized 3 implicate(s)" in capsys.readouterr().out


def test_same_seed_same_files_and_parquet_by_extension(tmp_path):
    for name in ("a", "b"):
        assert main(["synthesize-microdata", str(PENGUINS), "--method", "cart", "-m", "2", "--seed", "7", "--quiet",
                     "--output", str(tmp_path / name / "syn.parquet")]) == 0
    for i in (1, 2):
        a, b = tmp_path / "a" / f"syn_{i}.parquet", tmp_path / "b" / f"syn_{i}.parquet"
        pd.testing.assert_frame_equal(pd.read_parquet(a), pd.read_parquet(b))
    assert (tmp_path / "a" / "syn_manifest.json").exists()
    a1, a2 = (pd.read_parquet(tmp_path / "a" / f"syn_{i}.parquet") for i in (1, 2))
    assert not a1.equals(a2)


def test_keep_is_partial_synthesis(tmp_path):
    out = tmp_path / "p"
    assert main(["synthesize-microdata", str(PENGUINS), "--keep", "species,sex", "--numeric", "bill_length_mm,flipper_length_mm",
                 "--method-for", "bill_length_mm=normal", "--seed", "3", "--quiet", "--output", str(out)]) == 0
    s, o = pd.read_csv(out / "synthetic_1.csv"), pd.read_csv(PENGUINS)
    pd.testing.assert_series_equal(s["sex"], o["sex"])
    assert json.loads((out / "manifest.json").read_text())["methods"]["flipper_length_mm"] == "cart"


BAD = [
    (["--visit-sequence", "sex,wingspan"], "unknown column 'wingspan'"),
    (["--method-for", "sex=normal"], "models a number"),
    (["--method-for", "bill_length_mm=logistic", "--numeric", "bill_length_mm"], "models a category"),
    (["--method-for", "sex=tree"], "COLUMN=METHOD"),
    (["-m", "0"], "-m must be"),
    (["--seed", "-1"], "--seed"),
]


@pytest.mark.parametrize("extra, message", BAD)
def test_bad_input_exit_2_nothing_written(tmp_path, capsys, extra, message):
    out = tmp_path / "never"
    rc = main(["synthesize-microdata", str(PENGUINS), *extra, "--output", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_empty_input(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n")
    rc = main(["synthesize-microdata", str(empty), "--output", str(tmp_path / "o")])
    assert rc == 2 and "no records" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_evaluate_microdata_reads_the_outputs(tmp_path, capsys):
    orig = tmp_path / "adult.csv"
    pd.read_csv(ADULT, usecols=["age", "sex", "race", "relationship", "income>50K"]).sample(2000, random_state=4).to_csv(orig, index=False)
    for fmt in ("csv", "parquet"):
        out = tmp_path / fmt
        assert main(["synthesize-microdata", str(orig), "--numeric", "age", "-m", "2", "--seed", "5", "--quiet",
                     "--format", fmt, "--output", str(out)]) == 0
        capsys.readouterr()
        rc = main(["evaluate-microdata", str(orig), str(out / f"synthetic_1.{fmt}"), str(out / f"synthetic_2.{fmt}"),
                   "--keys", "age,sex,race", "--sensitive", "income>50K", "--tables", "1,2", "--json", "--quiet"])
        assert rc == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["utility"]["pmse_ratio"] < 10
        assert 0 <= summary["risk"]["DiSCO"] <= 1


def test_method_for_overrides_method(tmp_path):
    out = tmp_path / "o"
    assert main(["synthesize-microdata", str(PENGUINS), "--method", "cart", "--method-for", "bill_length_mm=normal",
                 "--numeric", "bill_length_mm", "--seed", "2", "--quiet", "--output", str(out)]) == 0
    methods = json.loads((out / "manifest.json").read_text())["methods"]
    assert methods == {"species": "cart", "sex": "cart", "bill_length_mm": "normal", "flipper_length_mm": "cart"}
