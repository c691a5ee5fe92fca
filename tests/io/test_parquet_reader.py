"""Parquet read through pyarrow's reader alone gives what ``pyarrow.parquet`` gives: the schema, and row groups of
flat columns by name (a nested column before them too), dictionary codes where asked."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from cellsafe.io._parquet import open_parquet, parquet_schema


def test_same_schema_and_row_groups_as_pyarrow_parquet(tmp_path):
    path = tmp_path / "n.parquet"
    table = pa.table({
        "s": pa.array([{"x": i, "y": str(i)} for i in range(10)]),
        "area": pa.array([f"E{i % 3}" for i in range(10)], type=pa.large_string()),
        "k": list(range(10)),
        "flag": [i % 2 == 0 for i in range(10)],
    })
    pq.write_table(table, path, row_group_size=4)
    assert parquet_schema(path).equals(pq.read_schema(path), check_metadata=True)
    with open_parquet(path, read_dictionary=["area"]) as ours, pq.ParquetFile(path, read_dictionary=["area"]) as theirs:
        assert ours.num_row_groups == theirs.num_row_groups == 3
        assert ours.metadata.num_rows == 10
        for g in range(3):
            got = ours.read_row_group(g, ["k", "area", "flag"])
            assert got.equals(theirs.read_row_group(g, columns=["k", "area", "flag"]))
            assert pa.types.is_dictionary(got.schema.field("area").type)
