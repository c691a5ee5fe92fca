"""Records in memory take the coded path whatever their column types, and release what the same records read
from Parquet release: pandas text (Arrow-backed and object), categoricals, nullable integers and booleans, Arrow
dtypes, polars and Arrow tables.  A missing value is refused as from the file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from numpy.testing import assert_array_equal

from cellsafe.exceptions import DataError
from cellsafe.io import aggregate_frame_codes, aggregate_parquet_codes
from cellsafe.mechanisms import CellKeyMethod, PTable
from cellsafe.table import keyed_table

NAMES = ["area", "age", "flag"]


@pytest.fixture(scope="module")
def records():
    rng = np.random.default_rng(25)
    n = 5_000
    return pd.DataFrame(
        {
            "area": rng.choice(["E01", "E02", "W07", "S11"], n),
            "age": rng.integers(0, 19, n),
            "flag": rng.random(n) < 0.4,
            "key": rng.integers(0, 256, n),
        }
    )


@pytest.fixture(scope="module")
def ckm():
    return CellKeyMethod(PTable.generate(D=5, V=3, js=2).to_frame("ons").pipe(PTable.from_frame), "area*age + flag")


def _kinds(df: pd.DataFrame) -> dict:
    pl = pytest.importorskip("polars")
    return {
        "pandas str": df,
        "pandas object": df.assign(area=df["area"].astype(object)),
        "pandas categorical": df.assign(area=df["area"].astype("category")),
        "pandas Int64": df.assign(age=df["age"].astype("Int64"), key=df["key"].astype("Int64")),
        "pandas boolean": df.assign(flag=df["flag"].astype("boolean")),
        "pandas Arrow dtypes": df.assign(area=df["area"].astype(pd.ArrowDtype(pa.string())),
                                         age=df["age"].astype(pd.ArrowDtype(pa.int16())),
                                         key=df["key"].astype(pd.ArrowDtype(pa.int64()))),
        "arrow": pa.Table.from_pandas(df, preserve_index=False),
        "arrow dictionary": pa.Table.from_pandas(df.assign(area=df["area"].astype("category")), preserve_index=False),
        "polars": pl.from_pandas(df),
        "polars categorical": pl.from_pandas(df).with_columns(pl.col("area").cast(pl.Categorical)),
    }


def _parquet(records, tmp_path):
    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pandas(records, preserve_index=False), path, row_group_size=1_500)
    return path


def test_every_frame_kind_takes_the_coded_path_and_releases_as_the_file(records, ckm, tmp_path):
    path = _parquet(records, tmp_path)
    assert aggregate_parquet_codes(path, NAMES, "key", n_keys=256) is not None
    from_file = ckm.perturb(path, variables=NAMES, record_key="key").release_frame()
    file_cells = keyed_table(path, NAMES, "key", n_keys=256)
    for kind, frame in _kinds(records).items():
        assert aggregate_frame_codes(frame, NAMES, "key", n_keys=256) is not None, kind
        cells = keyed_table(frame, NAMES, "key", n_keys=256)
        assert_array_equal(cells.table.counts, file_cells.table.counts, err_msg=kind)
        assert_array_equal(cells.key_sums, file_cells.key_sums, err_msg=kind)
        released = ckm.perturb(frame, variables=NAMES, record_key="key").release_frame()
        pd.testing.assert_frame_equal(released.astype(str), from_file.astype(str), obj=kind)


@pytest.mark.parametrize("column", ["age", "flag", "key"])
def test_a_missing_value_in_a_nullable_column_is_refused_as_from_the_file(records, tmp_path, column):
    dtype = {"age": "Int64", "flag": "boolean", "key": "Int64"}[column]
    df = records.head(200).astype({column: dtype})
    df.loc[7, column] = None
    path = tmp_path / "m.parquet"
    df.to_parquet(path, index=False)
    assert aggregate_frame_codes(df, NAMES, "key", n_keys=256) is None  # DuckDB says where the value is missing
    with pytest.raises(DataError) as from_file:
        keyed_table(path, NAMES, "key", n_keys=256)
    with pytest.raises(DataError) as from_frame:
        keyed_table(df, NAMES, "key", n_keys=256)
    assert str(from_frame.value) == str(from_file.value).replace(repr(str(path)), "the data")  # the same row
