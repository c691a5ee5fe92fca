"""The Spark engine releases what the local engine releases, cell for cell, for any number of partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cellsafe.datasets import esc_like
from cellsafe.distributions import NBI
from cellsafe.mechanisms import CellKeyMethod, PTable, SaturatedSynthesizer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def esc():
    return esc_like()


@pytest.fixture(scope="module")
def esc_spark(spark, esc):
    from cellsafe.engines import spark as se

    return se.from_table(esc, spark)


def _cells(df):
    a = df.toArrow()
    idx, cnt = a.column("flat").to_numpy(), a.column("count").to_numpy()
    order = np.argsort(idx)
    return idx[order], cnt[order]


@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_esc_like_synthesis_equals_local(esc_spark, esc, partitions):
    from cellsafe.engines import spark as se

    mech = SaturatedSynthesizer(NBI(sigma=1.0), alpha=0.01)
    local = mech.sample(esc, m=2, rng=2024)
    table = esc_spark
    for i in range(2):
        idx, cnt = _cells(se.sample_cells(table, mech, i, 2024, partitions=partitions))
        assert np.array_equal(idx, local[i].index)
        assert np.array_equal(cnt, local[i].counts)
    # random zeros released as positive are part of the release (alpha > 0)
    assert np.setdiff1d(local[0].index, esc.index).size > 0


def _sorted_frame(df: pd.DataFrame, names) -> pd.DataFrame:
    out = df.astype({n: str for n in names}).sort_values(list(names)).reset_index(drop=True)
    out["count"] = out["count"].astype(np.float64)
    return out


def test_written_implicates_equal_local_files(spark, esc, tmp_path):
    from cellsafe.engines import local as le
    from cellsafe.engines import spark as se

    mech = SaturatedSynthesizer(NBI(sigma=1.0), alpha=0.01)
    small = esc.margin(["geography", "sex", "age"])
    le.synthesize(small, mech, 2, 5, tmp_path / "local")
    paths = se.synthesize(se.from_table(small, spark), mech, 2, 5, tmp_path / "spark", partitions=3)
    for i, path in enumerate(paths, start=1):
        got = pd.read_parquet(path)
        want = pd.read_parquet(tmp_path / "local" / f"synthetic_{i}.parquet")
        assert list(got.columns) == list(want.columns) == small.names + ["count"]
        pd.testing.assert_frame_equal(_sorted_frame(got, small.names), _sorted_frame(want, small.names))


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """1e6 records of four variables with uniform record keys, as a Parquet file."""
    rng = np.random.default_rng(16)
    n = 1_000_000
    df = pd.DataFrame(
        {
            "region": pd.Series(rng.choice([f"R{i:02d}" for i in range(12)], n)),
            "age": pd.Series(rng.choice([str(a) for a in range(2, 20)], n, p=np.linspace(2, 1, 18) / np.linspace(2, 1, 18).sum())),
            "sex": pd.Series(rng.choice(["F", "M"], n)),
            "tenure": pd.Series(rng.choice(["own", "rent", "social", "other"], n, p=[0.6, 0.25, 0.1498, 0.0002])),
            "key": rng.random(n),
        }
    )
    path = tmp_path_factory.mktemp("records") / "people.parquet"
    df.to_parquet(path, index=False)
    return str(path)


_VARS = ["region", "age", "sex", "tenure"]
_FORMULA = "region*age*tenure + region*sex"


def test_cell_key_publication_with_record_keys_equals_local(spark, records):
    from cellsafe.engines import spark as se

    ckm = CellKeyMethod(PTable.generate(D=5, V=3, js=2), _FORMULA)
    want = ckm.perturb(records, variables=_VARS, record_key="key").to_frame()
    got = se.cell_key_publication(records, _VARS, ckm, record_key="key", spark=spark).toPandas()
    assert len(got) == len(want)
    pd.testing.assert_frame_equal(_sorted_frame(got, _VARS), _sorted_frame(want, _VARS))


@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_cell_key_publication_with_drawn_keys_equals_local(spark, records, partitions):
    from cellsafe.engines import spark as se

    ckm = CellKeyMethod(PTable.generate(D=5, V=3, js=2), _FORMULA, threshold=3)
    want = ckm.perturb(records, variables=_VARS, rng=99).to_frame()
    got = se.cell_key_publication(records, _VARS, ckm, rng=99, spark=spark, partitions=partitions).toPandas()
    pd.testing.assert_frame_equal(_sorted_frame(got, _VARS), _sorted_frame(want, _VARS))
    assert np.isnan(want["count"]).any()  # suppression below the threshold is part of what must agree


def test_dp_noise_on_spark_needs_a_public_domain(spark, tmp_path):
    from cellsafe import CountTable, Domain, Variable
    from cellsafe.engines import spark as se
    from cellsafe.exceptions import DataError
    from cellsafe.mechanisms import GeometricNoise

    mech = GeometricNoise(1.0)
    records = pd.DataFrame({"country": ["Fiji", "Fiji", "Tonga", "Tuvalu"]})
    records.to_parquet(tmp_path / "r.parquet")
    from_records = se.aggregate(str(tmp_path / "r.parquet"), ["country"], spark=spark)
    with pytest.raises(DataError, match="aggregate on a public"):
        se.sample_cells(from_records, mech, 0, 7)
    domain = Domain({"country": ["Fiji", "Samoa", "Tonga", "Tuvalu"]})
    on_domain = se.aggregate(str(tmp_path / "r.parquet"), list(domain.variables), spark=spark)
    local = domain.adopt(CountTable([Variable("country", ("Fiji", "Tonga", "Tuvalu"))], [0, 1, 2], [2, 1, 1]))
    [expected] = mech.sample(local, rng=7)
    idx, cnt = _cells(se.sample_cells(on_domain, mech, 0, 7))
    assert np.array_equal(idx, expected.index) and np.array_equal(cnt, expected.counts)
