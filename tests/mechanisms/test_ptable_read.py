"""PTable.read: an ONS ptable read by Arrow's CSV reader gives the table pandas' reader gives; other files go to pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from cellsafe.exceptions import DataError
from cellsafe.mechanisms import PTable

ONS = Path(__file__).resolve().parents[1] / "reference" / "ons_ptable" / "ptable_10_5_rule.csv"


def _same(a: PTable, b: PTable) -> None:
    assert a.layout == b.layout and a.n_keys == b.n_keys and a.params == b.params
    assert_array_equal(a.transition_pmf(np.arange(30), np.arange(30)), b.transition_pmf(np.arange(30), np.arange(30)))
    keys = np.arange(a.n_keys or 1)
    for j in (1, 7, 12, 600, 800):
        assert_array_equal(a.released(np.full(keys.size, j), keys), b.released(np.full(keys.size, j), keys))


def test_ons_file_same_as_from_pandas_frame():
    _same(PTable.read(ONS), PTable.from_frame(pd.read_csv(ONS)))


def test_ons_columns_in_another_order_and_case(tmp_path):
    df = pd.read_csv(ONS)
    path = tmp_path / "p.csv"
    df[["pvalue", "ckey", "pcv"]].rename(columns={"pcv": "PCV"}).to_csv(path, index=False)
    _same(PTable.read(path), PTable.from_frame(df))


def test_unusual_files_go_to_pandas(tmp_path):
    df = pd.read_csv(ONS)
    floats = tmp_path / "f.csv"
    df.assign(pvalue=df["pvalue"].astype(float)).to_csv(floats, index=False)  # 1.0: pandas converts
    _same(PTable.read(floats), PTable.from_frame(df))
    sdc = tmp_path / "s.csv"
    PTable.generate(D=2, V=1.5, js=0).to_frame().to_csv(sdc, index=False, sep=";")
    assert PTable.read(sdc).layout == "sdc"
    broken = tmp_path / "b.csv"
    broken.write_text("pcv,ckey,pvalue\n1,0,x\n")
    with pytest.raises((DataError, ValueError)):
        PTable.read(broken)
