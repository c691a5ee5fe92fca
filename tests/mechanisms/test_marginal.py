"""Marginal synthesis (MST, AIM): the privacy budget, public structure, sources and draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import cellsafe
from cellsafe import CountTable, Domain
from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.mechanisms import AIMSynthesizer, MarginalSynthesizer, MSTSynthesizer, make_mechanism, mechanism_spec
from cellsafe.dp import BudgetExceededError, PrivacyAccountant, PrivacyLoss, cdp_rho

DOMAIN = {"sex": ["F", "M"], "region": ["N", "S", "E", "W"], "age": ["0-17", "18-64", "65+"], "job": list("abcde")}


def _records(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    region = rng.choice(["N", "S", "E", "W"], n, p=[0.4, 0.3, 0.2, 0.1])
    age = np.where(rng.random(n) < 0.2, "0-17", np.where(rng.random(n) < 0.8, "18-64", "65+"))
    job = np.where(age == "0-17", "a", rng.choice(list("bcde"), n))
    job = np.where((sex == "F") & (rng.random(n) < 0.5), "b", job)
    return pd.DataFrame({"sex": sex, "region": region, "age": age, "job": job})


def _table(df: pd.DataFrame) -> CountTable:
    table, _ = Domain(DOMAIN).table(df)
    return table


SYNTHS = [
    MarginalSynthesizer(1.0),
    MarginalSynthesizer(1.0, relation="add-remove", compress=False),
    MarginalSynthesizer(1.0, selection="aim", rounds=8),
    MarginalSynthesizer(0.5, delta=1e-6, selection="aim", relation="add-remove", max_cells=200),
]


@pytest.mark.parametrize("synth", SYNTHS, ids=repr)
def test_the_steps_spend_the_stated_budget(synth):
    """Selections and measurements add up to rho (never above it), the CKS conversion of (epsilon, delta)."""
    rel = synth.release(_table(_records()), rng=1)
    assert synth.rho == cdp_rho(synth.epsilon, synth.delta)
    assert rel.rho == synth.rho
    spent = sum(s.rho for s in rel.steps)
    assert spent <= synth.rho
    assert spent >= synth.rho * (1 - 1e-6)
    kinds = {s.kind for s in rel.steps}
    assert kinds == {"measure", "select"}
    sens2 = 2.0 if synth.relation == "replace-one" else 1.0
    for s in rel.steps:  # each step's cost from its own parameters
        if s.kind == "measure":
            assert s.rho == pytest.approx(sens2 / (2 * s.sigma**2), rel=1e-12)
        else:
            assert s.rho == pytest.approx(s.epsilon**2 / 8, rel=1e-12)


@pytest.mark.parametrize("synth", SYNTHS, ids=repr)
def test_the_accountant_charged_step_by_step_reaches_the_budget_and_no_further(synth):
    """Every selection and measurement charged one by one to a zCDP ledger of the stated (epsilon, delta):
    all fit, they add up to the stated rho (the ledger's own conversion of the budget), the ledger then
    states at most the stated epsilon, and nothing more fits; the release's loss charged whole is the same."""
    rel = synth.release(_table(_records()), rng=1)
    acc = PrivacyAccountant(synth.epsilon, synth.delta, relation=synth.relation, accounting="zcdp")
    for s in rel.steps:
        acc.spend(PrivacyLoss.zcdp(s.rho, synth.relation), label=f"{s.kind} {s.attrs}")
    assert len(acc.releases) == len(rel.steps)
    assert acc.rho == synth.rho
    assert acc.spent_rho() <= acc.rho
    assert acc.spent_rho() == pytest.approx(synth.rho, rel=1e-6)
    eps, delta = acc.spent()
    assert delta == synth.delta and eps <= synth.epsilon * (1 + 1e-9)
    assert eps == pytest.approx(synth.epsilon, rel=1e-5)
    with pytest.raises(BudgetExceededError):
        acc.spend(PrivacyLoss.zcdp(synth.rho * 1e-4, synth.relation), label="one more marginal")
    whole = PrivacyAccountant(synth.epsilon, synth.delta, relation=synth.relation, accounting="zcdp")
    whole.spend(synth.privacy_loss(synth.relation, delta=synth.delta), label="the release", mechanism=synth.selection)
    assert acc.spent_rho() <= whole.spent_rho() == pytest.approx(synth.rho, rel=1e-12)


def test_mst_split():
    """20% of rho on the one-way marginals, 10% on choosing the tree's pairs, 70% on the pairs."""
    synth = MarginalSynthesizer(1.0, relation="add-remove")
    rel = synth.release(_table(_records()), rng=2)
    d = 4
    one = sum(s.rho for s in rel.steps if s.kind == "measure" and len(s.attrs) == 1)
    sel = [s for s in rel.steps if s.kind == "select"]
    two = sum(s.rho for s in rel.steps if s.kind == "measure" and len(s.attrs) == 2)
    assert len(sel) == d - 1 and len(rel.measured) == d + d - 1
    assert one == pytest.approx(synth.rho * 0.2, rel=1e-9)
    assert sum(s.rho for s in sel) == pytest.approx(synth.rho * 0.1, rel=1e-9)
    assert two == pytest.approx(synth.rho * 0.7, rel=1e-6)
    assert one + sum(s.rho for s in sel) + two <= synth.rho
    edges = {frozenset(s.attrs) for s in sel}  # a spanning tree
    assert len(edges) == d - 1


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_mst_on_one_variable_spends_the_whole_budget_on_it(relation):
    """Nothing to choose: the one-way marginal takes all of rho (to 1e-9), charged exactly to the ledger."""
    d = Domain({"a": ["x", "y", "z"]})
    synth = MarginalSynthesizer(1.0, relation=relation)
    rel = synth.release(CountTable(list(d.variables), [0, 1, 2], [400, 300, 200]), rng=1)
    [step] = rel.steps
    assert step.kind == "measure" and step.rho <= synth.rho and step.rho == pytest.approx(synth.rho, rel=1e-8)
    assert step.sigma**2 >= (2.0 if relation == "replace-one" else 1.0) / (2 * synth.rho)
    acc = PrivacyAccountant(synth.epsilon, synth.delta, relation=relation, accounting="zcdp")
    acc.spend(PrivacyLoss.zcdp(step.rho, relation), label="the one-way marginal")
    with pytest.raises(BudgetExceededError):
        acc.spend(PrivacyLoss.zcdp(synth.rho * 1e-6, relation), label="one more")


def test_replace_one_doubles_the_noise_variance():
    t = _table(_records())
    a = MarginalSynthesizer(1.0, relation="add-remove").release(t, rng=3)
    b = MarginalSynthesizer(1.0, relation="replace-one").release(t, rng=3)
    sa = [s.sigma for s in a.steps if s.kind == "measure" and len(s.attrs) == 1]
    sb = [s.sigma for s in b.steps if s.kind == "measure" and len(s.attrs) == 1]
    assert np.allclose(np.square(sb), 2 * np.square(sa), rtol=1e-6)


def test_a_record_outside_the_domain_never_changes_the_release(tmp_path):
    """The two-file experiment: with outside='drop', a file with an extra record outside the domain
    (an unknown category, an age beyond the bins) gives the same release as the file without it."""
    df = _records()
    extra = pd.concat([df, pd.DataFrame({"sex": ["X"], "region": ["N"], "age": ["18-64"], "job": ["a"]})])
    a_path, b_path = tmp_path / "a.csv", tmp_path / "b.csv"
    df.to_csv(a_path, index=False)
    extra.to_csv(b_path, index=False)
    dom = Domain(DOMAIN)
    for synth in (MarginalSynthesizer(1.0), MarginalSynthesizer(1.0, selection="aim", rounds=6)):
        ra = synth.release(a_path, dom, outside="drop", rng=11)
        rb = synth.release(b_path, dom, outside="drop", rng=11)
        assert_array_equal(ra.records[0], rb.records[0])
        assert ra.to_dict() == rb.to_dict()
        assert (ra.n_outside, rb.n_outside) == (0, 1)
        assert list(ra.to_frame().columns) == dom.names
        assert set(ra.to_frame()["sex"].cat.categories) == {"F", "M"}
    with pytest.raises(DataError, match="'sex' has value 'X' outside"):
        MarginalSynthesizer(1.0).release(b_path, dom, rng=1)


@pytest.mark.parametrize("outlier", [130, -1, 1e9, "NaN"], ids=["above", "below", "far", "not-a-number"])
def test_a_number_outside_the_public_bins_never_changes_the_release(tmp_path, outlier):
    """The two-file experiment on a binned numeric variable: the bins come from the domain, never from the
    records, so one record beyond the edges (the oldest person, a typo) leaves every bin, step, sigma and
    synthetic record as they were (the same seed), for MST and AIM, from a file and from a frame."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], 2000), "age": rng.integers(0, 100, 2000),
                       "job": rng.choice(list("abc"), 2000)})
    extra = pd.concat([df, pd.DataFrame({"sex": ["F"], "age": [outlier], "job": ["a"]})], ignore_index=True)
    a_path, b_path = tmp_path / "a.csv", tmp_path / "b.csv"
    df.to_csv(a_path, index=False)
    extra.to_csv(b_path, index=False)
    dom = Domain({"sex": ["F", "M"], "age": cellsafe.Bins([0, 18, 40, 65, 120]), "job": list("abc")})
    for synth in (MarginalSynthesizer(1.0), MarginalSynthesizer(1.0, selection="aim", rounds=6)):
        ra = synth.release(a_path, dom, outside="drop", rng=12)
        for b in (b_path, extra):
            rb = synth.release(b, dom, outside="drop", rng=12)
            assert_array_equal(ra.records[0], rb.records[0])
            assert ra.to_dict() == rb.to_dict()
            assert ra.categories == rb.categories == tuple(tuple(v.categories) for v in dom.variables)
            assert rb.n_outside == 1
    with pytest.raises(DataError, match="'age'"):
        MarginalSynthesizer(1.0).release(b_path, dom, rng=1)


def test_file_frame_and_table_give_the_same_release(tmp_path):
    df = _records()
    path = tmp_path / "r.parquet"
    df.to_parquet(path)
    dom = Domain(DOMAIN)
    synth = MarginalSynthesizer(2.0, selection="aim", rounds=6)
    ra = synth.release(path, dom, rng=5)
    rb = synth.release(df, dom, rng=5)
    rc = synth.release(_table(df), rng=5)
    assert_array_equal(ra.records[0], rb.records[0])
    assert_array_equal(ra.records[0], rc.records[0])


def test_records_need_a_public_domain_and_categories_come_from_it():
    with pytest.raises(InvalidArgumentError, match="public domain"):
        MarginalSynthesizer(1.0).release(_records())
    table = CountTable.from_frame(_records(), ["sex", "region"])
    wrong = Domain({"sex": ["M", "F"], "region": ["N", "S", "E", "W"]})
    with pytest.raises(DataError, match="categories"):
        MarginalSynthesizer(1.0).release(table, wrong)


def test_synthetic_records_keep_the_strong_associations():
    """Utility: with epsilon 4 the synthetic two-way margins are close to the originals."""
    df = _records(20_000)
    t = _table(df)
    for synth in (MarginalSynthesizer(4.0), MarginalSynthesizer(4.0, selection="aim")):
        [s] = synth.sample(t, rng=7)
        for pair in (("age", "job"), ("sex", "job"), ("sex", "region")):
            a, b = t.margin(list(pair)), s.margin(list(pair))
            tv = 0.5 * np.abs(a.dense() / a.total - b.dense() / b.total).sum()
            assert tv < 0.05, (synth, pair, tv)
        assert abs(int(s.total) - 20_000) < 400  # the total estimated from noisy marginals


def test_implicates_are_draws_from_one_model():
    rel = MarginalSynthesizer(1.0).release(_table(_records()), m=3, rng=9)
    assert len(rel.records) == 3
    assert not np.array_equal(rel.records[0], rel.records[1])
    assert len({r.shape[0] for r in rel.records}) == 1


def test_structural_zeros_are_never_released():
    df = _records()
    t = _table(df)
    impossible = np.flatnonzero(t.dense().ravel() == 0)[:3]
    t0 = CountTable(list(t.variables), t.index, t.counts, structural_zeros=impossible)
    for s in MarginalSynthesizer(0.3).sample(t0, m=2, rng=4):
        assert np.intersect1d(s.index, impossible).size == 0
        assert_array_equal(s.structural_zeros, impossible)


def test_specs_and_selection_dispatch():
    m = make_mechanism("aim:epsilon=1.5,rounds=10")
    assert isinstance(m, AIMSynthesizer) and m == MarginalSynthesizer(1.5, selection="aim", rounds=10)
    assert mechanism_spec(m) == "aim:epsilon=1.5,rounds=10"
    assert isinstance(MarginalSynthesizer(1.0), MSTSynthesizer)
    assert isinstance(cellsafe.MarginalSynthesizer(1.0, selection="mst"), MSTSynthesizer)
    with pytest.raises(InvalidArgumentError, match="'selection'"):
        MarginalSynthesizer(1.0, selection="pgm")
    with pytest.raises(InvalidArgumentError, match="'relation'"):
        MarginalSynthesizer(1.0, relation="bounded")
    with pytest.raises(InvalidArgumentError, match="'epsilon'"):
        MarginalSynthesizer(-1.0)
