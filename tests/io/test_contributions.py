"""Contributions to a magnitude table are read as written: categories and contributor ids are text, so '01' and '1'
(or '1' and '1.0', '007' and '7') stay distinct, as when counting; bad values are refused with the column named."""

from __future__ import annotations

import numpy as np
import pytest

from cellsafe.exceptions import DataError
from cellsafe.io import aggregate_contributions
from cellsafe.io._keyed import FLOAT_KEY_BITS


def _csv(tmp_path, text):
    path = tmp_path / "records.csv"
    path.write_text(text)
    return path


def test_categories_and_contributor_ids_are_text_as_written(tmp_path):
    path = _csv(tmp_path, "sector,region,firm,turnover,rk\n01,1,007,5,0.25\n1,1,7,3,0.5\n01,1.0,007,2,0.125\n01,1,007,4,0.5\n")
    c = aggregate_contributions(path, ["sector", "region"], "turnover", "firm", record_key="rk")
    rows = sorted(zip(c.cells["sector"], c.cells["region"], c.contributor_ids[c.contributor], c.counts, c.values))
    assert rows == [("01", "1", "007", 2, 9.0), ("01", "1.0", "007", 1, 2.0), ("1", "1", "7", 1, 3.0)]
    # the keys are summed exactly, as numbers: 0.25 + 0.5 for the first row
    first = np.flatnonzero((c.cells["sector"] == "01").to_numpy() & (c.cells["region"] == "1").to_numpy())[0]
    assert c.key_sums[first] == int(0.75 * 2**FLOAT_KEY_BITS)


@pytest.mark.parametrize(
    "text, message",
    [
        ("sector,turnover\na,5\nb,x\n", "non-numeric or negative|.x. in column .turnover. is not a DOUBLE"),
        ("sector,turnover\na,5\nb,-1\n", "non-numeric or negative"),
        ("sector,turnover\na,5\nb,\n", "missing"),
    ],
)
def test_bad_values_are_refused(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        aggregate_contributions(_csv(tmp_path, text), ["sector"], "turnover")


def test_rows_come_in_an_order_fixed_by_the_data(tmp_path):
    """Keys drawn per row (the cell key method for magnitudes without a key column) must meet the same rows on
    every run: rows by cell and contributor with holdings, in the file's order without."""
    rng = np.random.default_rng(0)
    n = 5000
    lines = ["sector,firm,turnover"] + [f"s{rng.integers(20)},f{rng.integers(300)},{rng.integers(1, 99)}" for _ in range(n)]
    path = _csv(tmp_path, "\n".join(lines) + "\n")
    c = aggregate_contributions(path, ["sector"], "turnover", "firm")
    pairs = list(zip(c.cells["sector"], c.contributor_ids[c.contributor]))
    assert pairs == sorted(pairs)
    plain = aggregate_contributions(path, ["sector"], "turnover")
    assert plain.cells["sector"].tolist() == [ln.split(",")[0] for ln in lines[1:]]
    assert plain.contributor.tolist() == list(range(n))
