"""Cell key method: exact key sums, consistency across tables, the ONS convention reproduced."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.mechanisms import CellwiseMechanism
from cellsafe.mechanisms.cellkey import CellKeyMethod
from cellsafe.mechanisms.ptable import PTable
from cellsafe.published import Publication
from cellsafe.table import CountTable, Variable

ONS = Path(__file__).resolve().parents[1] / "reference" / "ons_ptable" / "ptable_10_5_rule.csv"


@pytest.fixture(scope="module")
def micro():
    rng = np.random.default_rng(11)
    n = 3000
    return pd.DataFrame(
        {
            "region": rng.choice(["N", "S", "E", "W"], n),
            "age": rng.choice(["0-15", "16-64", "65+"], n, p=[0.2, 0.6, 0.2]),
            "sex": rng.choice(["F", "M"], n),
            "rkey": rng.integers(0, 256, n),
            "ukey": rng.random(n),
        }
    )


@pytest.fixture(scope="module")
def ckm():
    return CellKeyMethod(PTable.generate(D=5, V=3, js=2))


def test_cell_key_is_fractional_part_of_sum(micro, ckm):
    res = ckm.with_params(publication="region*age").perturb(micro, variables=["region", "age", "sex"], record_key="ukey")
    cells = res.to_frame(details=True)
    for _, row in cells.sample(8, random_state=0).iterrows():
        mask = np.ones(len(micro), bool)
        for v in ("region", "age", "sex"):
            if row[v] != "Total":
                mask &= (micro[v] == row[v]).to_numpy()
        naive = np.modf(micro.loc[mask, "ukey"].sum())[0]
        assert abs(row["cell_key"] - naive) < 1e-9 or abs(abs(row["cell_key"] - naive) - 1) < 1e-9
        assert row["original"] == mask.sum()
    assert res.record_keys is None and ckm.threshold_ == 0 and res.n_suppressed == 0


def test_same_records_same_perturbation_in_every_table(micro, ckm):
    a = ckm.with_params(publication="region*age").perturb(micro, variables=["region", "age", "sex"], record_key="ukey").to_frame(True)
    b = ckm.with_params(publication="region*sex + age").perturb(micro, variables=["region", "age", "sex"], record_key="ukey").to_frame(True)
    m = a.merge(b, on=["region", "age", "sex"], suffixes=("_a", "_b"))
    assert len(m) == 1 + 4 + 3  # total, region, age are in both
    assert_array_equal(m.count_a, m.count_b)
    assert_array_equal(m.cell_key_a, m.cell_key_b)
    # generated keys (one sum per non-zero inner cell) are returned and reproduce the result
    g = ckm.with_params(publication="region*age").perturb(micro, variables=["region", "age", "sex"], rng=3)
    t = CountTable.from_frame(micro, ["region", "age", "sex"])
    assert g.record_keys.shape == (t.nnz,)
    again = ckm.with_params(publication="region*age").perturb(t, record_key=g.record_keys)
    assert_array_equal(again.released, g.released)


def test_frequency_table_input_is_consistent(micro, ckm):
    t = CountTable.from_frame(micro, ["region", "age", "sex"])
    r1 = ckm.with_params(publication="region*age").perturb(t, rng=4)
    r2 = ckm.with_params(publication="age*sex").perturb(t, record_key=r1.record_keys)
    f1, f2 = r1.to_frame(), r2.to_frame()
    m = f1.merge(f2, on=["region", "age", "sex"])
    assert len(m) == 1 + 3
    assert_array_equal(m.count_x, m.count_y)
    assert_array_equal(r1.original, Publication.from_formula(t, "region*age").aggregate(t))


def test_released_within_ptable_support(micro, ckm):
    res = ckm.with_params(publication="region*age*sex").perturb(micro, variables=["region", "age", "sex"], rng=7)
    d = res.released - res.original
    assert np.abs(d).max() <= 5
    assert not np.any((res.released >= 1) & (res.released <= 2))
    assert np.all(res.released[res.original == 0] == 0)


def _ons_reference(data, tab_vars, record_key, ptable, threshold=10):
    """The ONS cell_key_perturbation steps, as documented in their method specification."""
    counts = data.groupby(tab_vars).size().rename("pre_sdc_count").reset_index()
    full = pd.MultiIndex.from_product([sorted(data[v].unique()) for v in tab_vars], names=tab_vars).to_frame(index=False)
    t = full.merge(counts, how="left", on=tab_vars).fillna({"pre_sdc_count": 0})
    keys = data.groupby(tab_vars)[record_key].sum().rename("ckey").reset_index()
    keys["ckey"] = keys["ckey"] % (ptable["ckey"].max() + 1)
    t = t.merge(keys, how="left", on=tab_vars).fillna({"ckey": 0})
    t["pcv"] = np.where(t.pre_sdc_count <= 750, t.pre_sdc_count, ((t.pre_sdc_count - 1) % 250) + 501).astype(int)
    t["ckey"] = t["ckey"].astype(int)
    t = t.merge(ptable, how="left", on=["pcv", "ckey"]).fillna({"pvalue": 0})
    t["count"] = t.pre_sdc_count + t.pvalue
    t.loc[t["count"] < threshold, "count"] = np.nan
    return t


def test_ons_convention_reproduced(micro):
    ptable_df = pd.read_csv(ONS)
    ons = CellKeyMethod(PTable.read(ONS))
    assert ons.threshold_ == 10
    # with a count above 750 as well (rows 501..750 reused)
    extra = pd.DataFrame({"region": "N", "age": "16-64", "sex": "F", "rkey": np.arange(900) % 256, "ukey": 0.5})
    big = pd.concat([micro, extra], ignore_index=True)
    ref = _ons_reference(big, ["region", "age", "sex"], "rkey", ptable_df)
    res = ons.with_params(publication="region:age:sex - 1").perturb(big, variables=["region", "age", "sex"], record_key="rkey").to_frame(True)
    m = ref.merge(res, on=["region", "age", "sex"], suffixes=("_ons", ""))
    assert len(m) == len(ref) == len(res) == 24
    assert (m.pre_sdc_count > 750).any()
    assert_array_equal(m.original, m.pre_sdc_count)
    assert_array_equal(m.cell_key, m.ckey)
    assert_array_equal(m["count"].isna(), m["count_ons"].isna())
    assert_array_equal(m["count"].dropna(), m["count_ons"].dropna())
    vals = res["count"].dropna()
    assert np.all(vals >= 10) and np.all(vals % 5 == 0)


def test_cellwise_mechanism_interface(ckm):
    assert isinstance(ckm, CellwiseMechanism)
    j = np.arange(0, 30)
    assert_allclose(ckm.transition_mean(j), j, atol=1e-6)
    assert_allclose(ckm.transition_var(j)[1:], 3.0, atol=1e-5)
    t = CountTable.from_dense(np.arange(24).reshape(4, 6) % 7, [Variable("a", list("abcd")), Variable("b", list("uvwxyz"))])
    s1 = ckm.sample(t, m=2, rng=1)
    s2 = ckm.sample(t, m=2, rng=1)
    assert_array_equal(s1[0].released, s2[0].released)
    assert_array_equal(s1[1].released, s2[1].released)
    assert not np.array_equal(s1[0].cell_keys, s1[1].cell_keys)


def test_bad_input(micro, ckm):
    with pytest.raises(InvalidArgumentError, match="ONS-layout"):
        ckm.with_params(publication="region").perturb(micro, variables=["region"], record_key="rkey")
    ons = CellKeyMethod(PTable.read(ONS))
    with pytest.raises(DataError, match="0..255"):
        ons.with_params(publication="region").perturb(micro, variables=["region"], record_key=np.full(len(micro), 300))
    with pytest.raises(DataError, match="not in the data"):
        ckm.with_params(publication="region").perturb(micro, variables=["region"], record_key="nokey")
    with pytest.raises(InvalidArgumentError, match="must be a PTable"):
        CellKeyMethod("ptable.csv")
    with pytest.raises(InvalidArgumentError, match="'threshold' parameter"):
        CellKeyMethod(PTable.generate(2, 1), threshold=-1)
