"""evaluate --engine spark prints the local engine's JSON: the same metrics from the same (original, released) pairs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cellsafe.cli.main import main
from cellsafe.datasets import esc_like
from cellsafe.distributions import NBI
from cellsafe.engines import cell_pairs
from cellsafe.mechanisms import SaturatedSynthesizer

pytestmark = pytest.mark.slow


def test_evaluate_json_is_the_same_on_both_engines(spark, tmp_path, capsys):
    small = esc_like().margin(["geography", "sex", "age"])
    original = tmp_path / "original.csv"
    small.to_frame().to_csv(original, index=False)
    paths = []
    for i, syn in enumerate(SaturatedSynthesizer(NBI(sigma=1.0), alpha=0.05).implicates(small, 3, rng=9), start=1):
        paths.append(tmp_path / f"synthetic_{i}.csv")
        syn.to_frame().to_csv(paths[-1], index=False)
    argv = ["evaluate", str(original), *map(str, paths), "--variables", "geography,sex,age", "--count", "count",
            "--synthetic-count", "count", "--json", "--quiet", "--trim", "0.2"]
    outputs = {}
    for engine, extra in (("local", []), ("spark", ["--engine", "spark", "--spark-master", "local[2]"])):
        assert main([*argv, *extra]) == 0
        outputs[engine] = json.loads(capsys.readouterr().out)
    local, on_spark = outputs["local"], outputs["spark"]
    assert local.pop("engine") == "local" and on_spark.pop("engine") == "spark"
    assert on_spark == local  # key for key, value for value (floats included, bit for bit)


def test_spark_pairs_equal_local_pairs(spark):
    from cellsafe.engines import spark as se

    small = esc_like().margin(["geography", "ethnicity"])
    released = SaturatedSynthesizer(NBI(sigma=0.5), alpha=0.1).sample(small, m=2, rng=3)
    local = cell_pairs(small, released)
    remote = se.cell_pairs(se.from_table(small, spark), [se.from_table(r, spark) for r in released])
    for a, b in ((local.f, remote.f), (local.g, remote.g), (local.cells, remote.cells)):
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert (local.n_open, local.total, local.squared_error_of_mean) == (remote.n_open, remote.total,
                                                                         remote.squared_error_of_mean)
