"""compare_published: 001's fair comparison of protected publications, on 001's worked example."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.metrics import PublishedComparison, compare_published
from cellsafe.published import Publication, PublishedTable
from cellsafe.table import CountTable, Variable

REF = Path(__file__).resolve().parents[1] / "reference" / "langsrud"
EXPECTED = json.loads((REF / "expected.json").read_text())
VARIABLES = [
    Variable("party", ["A", "B", "C"]),
    Variable("age", ["young", "middle", "old"]),
    Variable("sex", ["male", "female"]),
]
KEYS = ["age", "sex"]


@pytest.fixture(scope="module")
def ex():
    inner = CountTable.from_frame(pd.read_csv(REF / "inner.csv"), VARIABLES, count="count")
    pub = Publication.from_formula(inner, "party*age + party*sex", zeros=True)
    ckm = pd.read_csv(REF / "published_cell_key.csv")
    scr = pd.read_csv(REF / "published_small_count_rounding.csv")
    return inner, pub, ckm, scr


@pytest.mark.parametrize("name", ["ckm", "scr"])
def test_reproduces_001(ex, name):
    inner, pub, ckm, scr = ex
    res = compare_published(inner, {"ckm": ckm, "scr": scr}[name], "party", KEYS, publication=pub)
    assert isinstance(res, PublishedComparison)
    assert res.additive is (name == "scr")  # Table 3 is not additive, Table 4 is
    h = EXPECTED["hellinger_utility"]
    if name == "ckm":
        assert round(res.hellinger_published, 4) == h["table3_ckm"]
        assert round(res.hellinger_restored, 4) == h["table6_restored"]
        a_total = res.to_frame().query("party == 'A' and age == 'Total' and sex == 'Total'")["restored"].item()
        assert a_total == pytest.approx(18.9375, abs=0.51e-4)  # Table 6
    for kind, r in (("plain", res.risk), ("know_yourself", res.risk_know_yourself)):
        exp = EXPECTED["risk_beta_0.5"][kind][name]
        assert (r.a, r.b, r.c) == (exp["a"], exp["b"], exp["c"])
        assert round(r.f_beta, 4) == exp["f_beta"]
    key = "table9_probabilities"
    assert_allclose(res.risk.protected.probability, EXPECTED[key][name], atol=0.51e-4)


def test_input_forms_agree(ex):
    inner, pub, _, scr = ex
    values = pub.align(scr)
    table = PublishedTable(publication=pub, original=pub.aggregate(inner), released=values, method="scr",
                           mechanism="as published in 001")
    a = compare_published(inner, scr, "party", KEYS, publication=pub)
    b = compare_published(inner, values, "party", KEYS, publication=pub)
    c = compare_published(inner, table, "party", KEYS)
    assert a.to_dict() == b.to_dict() == c.to_dict()


def test_result_protocol(ex):
    inner, pub, ckm, _ = ex
    res = compare_published(inner, ckm, "party", KEYS, publication=pub, beta=0.5)
    d = res.to_dict()
    assert set(d) == {"additive", "hellinger_utility", "risk", "restored", "expected_inner"}
    assert set(d["risk"]["plain"]) == {"a", "b", "c", "f_beta", "precision", "recall", "probabilities"}
    assert len(d["restored"]) == pub.n_published and len(d["expected_inner"]) == 18
    json.dumps(d)  # plain Python values
    frame = res.to_frame()
    assert list(frame.columns) == ["party", "age", "sex", "published", "restored"]
    text = res.summary()
    assert isinstance(text, str) and "F_beta=0.5556" in text and "age=middle, sex=male: 0.5381 (party=A)" in text
    assert "<table" in res._repr_html_()
    with pytest.raises(AttributeError):
        res.additive = True  # frozen


def test_bad_input(ex):
    inner, pub, ckm, _ = ex
    with pytest.raises(InvalidArgumentError, match="'publication' parameter"):
        compare_published(inner, ckm, "party", KEYS)
    with pytest.raises(InvalidArgumentError, match="'table' parameter of compare_published"):
        compare_published(inner.to_frame(), ckm, "party", KEYS, publication=pub)
    with pytest.raises(DataError, match="published cells"):
        compare_published(inner, np.ones(3), "party", KEYS, publication=pub)
    with pytest.raises(InvalidArgumentError, match="unknown variable"):
        compare_published(inner, ckm, "income", KEYS, publication=pub)
