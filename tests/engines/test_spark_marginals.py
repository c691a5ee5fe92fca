"""Marginals counted by Spark for the marginal synthesizers: the same as DuckDB's, the same release."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import cellsafe
from cellsafe import Domain
from cellsafe.exceptions import DataError
from cellsafe.mechanisms import marginal_source

pytestmark = pytest.mark.slow

DOMAIN = {"sex": ["F", "M"], "region": ["N", "S", "E", "W"], "job": list("abc")}


def _records(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"sex": rng.choice(["F", "M"], n), "region": rng.choice(["N", "S", "E"], n),
                         "job": rng.choice(list("abc"), n)})


def test_spark_marginals_equal_duckdb_and_give_the_same_release(spark, tmp_path):
    from cellsafe.engines.spark import SparkMarginals

    df = _records()
    path = tmp_path / "r.parquet"
    df.to_parquet(path)
    dom = Domain(DOMAIN)
    cliques = [c for k in (1, 2, 3) for c in itertools.combinations(range(3), k)]
    local = marginal_source(str(path), dom).marginals(cliques)
    remote = SparkMarginals(str(path), dom, spark=spark).marginals(cliques)
    for a, b in zip(local, remote):
        assert_array_equal(a, b)
    synth = cellsafe.MarginalSynthesizer(2.0)
    ra = synth.release(str(path), dom, rng=3)
    rb = synth.release(SparkMarginals(str(path), dom, spark=spark), rng=3)
    assert_array_equal(ra.records[0], rb.records[0])


def test_spark_marginals_outside_the_domain(spark):
    from cellsafe.engines.spark import SparkMarginals

    df = pd.concat([_records(), pd.DataFrame({"sex": ["X"], "region": ["N"], "job": ["a"]})])
    sdf = spark.createDataFrame(df)
    with pytest.raises(DataError, match="'sex' has value 'X' outside"):
        SparkMarginals(sdf, Domain(DOMAIN)).marginals([(0,)])
    src = SparkMarginals(sdf, Domain(DOMAIN), outside="drop")
    assert int(src.marginals([(0,)])[0].sum()) == len(df) - 1 and src.n_outside == 1
