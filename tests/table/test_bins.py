"""Public bins of numeric variables: Bins, and Domain with binned variables (tables, files, hashes)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import cellsafe
from cellsafe import Bins, Domain
from cellsafe.exceptions import DataError, InvalidArgumentError


def test_bins_codes_and_labels():
    b = Bins([0, 18, 65, 120])
    assert b.size == 3 and b.labels == ("[0, 18)", "[18, 65)", "[65, 120]")
    assert_array_equal(b.codes([0, 17.9, 18, 64, 65, 120, -1, 120.5, float("nan"), "x", None]),
                       [0, 0, 1, 1, 2, 2, -1, -1, -1, -1, -1])
    assert Bins([0, 1, 2], ["low", "high"]).labels == ("low", "high")
    for bad in ([1], [0, 0], [2, 1], [0, float("inf")]):
        with pytest.raises(InvalidArgumentError):
            Bins(bad)
    with pytest.raises(InvalidArgumentError, match="one distinct label"):
        Bins([0, 1, 2], ["a"])


def test_domain_with_bins_builds_tables_on_the_intervals():
    d = Domain({"sex": ["F", "M"], "age": Bins([0, 18, 65, 120])})
    assert d["age"].categories == ("[0, 18)", "[18, 65)", "[65, 120]")
    records = pd.DataFrame({"sex": ["F", "M", "F", "M"], "age": [10, 70, 130, 18]})
    with pytest.raises(DataError, match="'age' has value 130"):
        d.table(records)
    t, dropped = d.table(records, outside="drop")
    assert dropped == 1 and int(t.total) == 3
    assert t.to_frame().set_index(["sex", "age"])["count"].to_dict() == {
        ("F", "[0, 18)"): 1, ("M", "[18, 65)"): 1, ("M", "[65, 120]"): 1}
    assert d.select(["age"]).bins == {"age": d.bins["age"]}


def test_domain_file_with_bins_and_its_hash(tmp_path):
    f = tmp_path / "d.json"
    f.write_text(json.dumps({"sex": ["F", "M"], "age": {"bins": [0, 18, 65, 120]}}))
    d = Domain.read(f)
    same = Domain({"sex": ["F", "M"], "age": Bins([0, 18, 65, 120])})
    assert d == same and d.sha256 == same.sha256
    other = Domain({"sex": ["F", "M"], "age": Bins([0, 18, 66, 120])})
    assert other.sha256 != d.sha256  # the edges are part of the public domain
    f.write_text(json.dumps({"age": {"edges": [0, 1]}}))
    with pytest.raises(DataError, match="bins"):
        Domain.read(f)


def test_marginal_release_reads_numbers_through_the_bins(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], 2000), "age": rng.integers(0, 100, 2000)})
    df.to_csv(tmp_path / "r.csv", index=False)
    d = Domain({"sex": ["F", "M"], "age": Bins([0, 18, 65, 120])})
    rel = cellsafe.MarginalSynthesizer(3.0).release(tmp_path / "r.csv", d, rng=1)
    assert set(rel.to_frame()["age"].cat.categories) == set(d["age"].categories)
    table, _ = d.table(df)
    rel2 = cellsafe.MarginalSynthesizer(3.0).release(table, rng=1)
    assert_array_equal(rel.records[0], rel2.records[0])
