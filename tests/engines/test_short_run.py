"""A Spark command on a small input starts its JVM for a short run; the input's size is told without reading it."""

from __future__ import annotations

import gzip

import pandas as pd

from cellsafe.engines import _short_run
from cellsafe.engines._short_run import input_records, is_short_run


def test_records_of_csv_parquet_folders_and_patterns(tmp_path):
    df = pd.DataFrame({"a": ["x", "yy"] * 500, "b": range(1000)})
    df.to_csv(tmp_path / "r.csv", index=False)
    assert abs(input_records(tmp_path / "r.csv") - 1001) <= 30  # header included: an estimate from the line length
    (tmp_path / "p").mkdir()
    df.to_parquet(tmp_path / "p" / "one.parquet")
    df.head(10).to_parquet(tmp_path / "p" / "two.parquet")
    assert input_records(tmp_path / "p") == 1010  # the footers' row counts
    assert input_records(str(tmp_path / "p" / "*.parquet")) == 1010
    assert input_records(str(tmp_path / "p" / "one.parquet")) == 1000


def test_what_cannot_be_told_cheaply_is_not_a_short_run(tmp_path):
    with gzip.open(tmp_path / "r.csv.gz", "wt") as f:
        f.write("a\nx\n")
    for source in (tmp_path / "r.csv.gz", "s3://bucket/records.parquet", tmp_path / "missing.csv", pd.DataFrame({"a": [1]})):
        assert input_records(source) is None
        assert not is_short_run("local[2]", source)


def test_only_small_inputs_on_a_local_master(tmp_path, monkeypatch):
    path = tmp_path / "r.csv"
    path.write_text("a\n" + "x\n" * 100)
    assert is_short_run("local[2]", path) and is_short_run("local[*]", path)
    assert not is_short_run("yarn", path) and not is_short_run("spark://host:7077", path)
    monkeypatch.setattr(_short_run, "SHORT_RUN_RECORDS", 100)
    assert not is_short_run("local[2]", path)
