"""Checks every registered mechanism must pass (style.md, 'Tests').

- the parameter protocol: ``get_params`` gives what the constructor took, ``with_params()`` rebuilds
  an equal mechanism, an unknown parameter is refused;
- the same ``rng`` gives the same output; ``sample`` leaves the mechanism and the table unchanged;
  tables keep their variables and structural zeros and hold non-negative integer counts;
- every cell-wise mechanism samples what its transition probabilities say: sampled frequencies of
  the released count, for cells of a few original counts j, against ``transition_pmf(k, j)`` by a
  chi-square test at a fixed seed.

A mechanism registered without an example here fails :func:`test_every_registered_mechanism_has_an_example`.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy import stats

import cellsafe
from cellsafe import CountTable, Variable
from cellsafe._registry import registered
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import CellwiseMechanism, make_mechanism
from cellsafe.published import PublishedTable

# A magnitude ptable read rather than generated: its parameters are fixed, so no search regenerates it.
_MAGNITUDE_PTABLE = cellsafe.mechanisms.MagnitudePTable([1, 1, 1, 4, 4, 4], [-1, 0, 1, -2, 0, 2], [0.25, 0.5, 0.25] * 2)

# One or more examples per registered name (factories: some registrations arrive with optional modules).
EXAMPLES = {
    "saturated": [
        lambda: cellsafe.SaturatedSynthesizer(cellsafe.Poisson()),
        lambda: cellsafe.SaturatedSynthesizer(cellsafe.NBI(sigma=1.0), alpha=0.1),
        lambda: cellsafe.SaturatedSynthesizer(cellsafe.PIG(sigma=2.0), zeros_to_ones=0.1),
        lambda: cellsafe.SaturatedSynthesizer(cellsafe.GAF(sigma=0.5, nu=0.5)),
    ],
    "loglinear": [lambda: cellsafe.LogLinearSynthesizer("region*sex + sex*age", cellsafe.NBI(sigma=0.5))],
    "ckm": [
        lambda: cellsafe.CellKeyMethod(cellsafe.PTable.generate(D=3, V=1.5, js=1)),
        lambda: cellsafe.CellKeyMethod(cellsafe.PTable.generate(D=3, V=1.5), "region*sex + age"),
    ],
    "ckm-magnitude": [
        lambda: cellsafe.mechanisms.CellKeyMagnitude(_MAGNITUDE_PTABLE, fp=10.0),
        lambda: cellsafe.mechanisms.CellKeyMagnitude(
            _MAGNITUDE_PTABLE, "region*sex + age", fp=10.0, top_k=2, flex_weights=(1, 0.5), use_zero_rkeys=True
        ),
    ],
    "scr": [lambda: cellsafe.SmallCountRounding("region*sex + sex*age", base=3)],
    "suppress": [lambda: cellsafe.mechanisms.CellSuppression("region*sex + sex*age", rules=["freq<=5"])],
    "dirichlet": [lambda: cellsafe.MultinomialDirichletSynthesizer(alpha=2.0)],
    "poisson-gamma": [lambda: cellsafe.PoissonGammaSynthesizer(a=2.0, b=0.05)],
    "poisson-gamma-multinomial": [lambda: cellsafe.PoissonGammaMultinomialSynthesizer(a=2.0, b=0.05)],
    "geometric": [lambda: make_mechanism("geometric:epsilon=0.7")],
    "discrete-gaussian": [lambda: make_mechanism("discrete-gaussian:sigma=1.5")],
    "mst": [lambda: make_mechanism("mst:epsilon=2"), lambda: cellsafe.MarginalSynthesizer(1.0, relation="add-remove")],
    "aim": [lambda: cellsafe.MarginalSynthesizer(2.0, selection="aim", rounds=4, max_cells=100)],
}


def _cases() -> list[tuple[str, int]]:
    names = registered("mechanism")
    return [(name, i) for name in names for i in range(len(EXAMPLES.get(name, [])))]


def _build(case: tuple[str, int]):
    name, i = case
    return EXAMPLES[name][i]()


def _ids(case: tuple[str, int]) -> str:
    return f"{case[0]}{case[1]}"


def _table() -> CountTable:
    rng = np.random.default_rng(5)
    variables = [Variable("region", ["N", "S", "E", "W"], public=True), Variable("sex", ["F", "M"], public=True), Variable("age", range(6), public=True)]
    k = 4 * 2 * 6
    cells = np.flatnonzero(rng.random(k - 1) < 0.7)  # the last cell is impossible
    return CountTable(variables, cells, rng.integers(1, 30, size=cells.size), structural_zeros=[k - 1])


def test_every_registered_mechanism_has_an_example():
    missing = sorted(set(registered("mechanism")) - set(EXAMPLES))
    assert not missing, f"add examples for {missing} to tests/mechanisms/test_common.py"


@pytest.mark.parametrize("case", _cases(), ids=_ids)
def test_parameter_protocol(case):
    mech = _build(case)
    params = mech.get_params()
    assert list(params) == [p.name for p in type(mech)._params]
    again = mech.with_params()
    assert type(again) is type(mech) and again is not mech
    assert repr(again) == repr(mech)
    assert repr(type(mech)(**params)) == repr(mech)
    with pytest.raises(InvalidArgumentError, match="has no parameter 'no_such_parameter'"):
        mech.with_params(no_such_parameter=1.0)
    for name, decl in mech.tunable_params().items():
        lo, hi = decl.scan
        value = hi if decl.log else (lo + hi) / 2
        try:
            changed = mech.with_params(**{name: value})
        except cellsafe.CellsafeError:
            continue  # e.g. a ptable with no solution at that V: refused with a message, never built wrong
        assert changed.flat_params()[name] == value
        assert mech.flat_params()[name] != value or lo == hi  # the original is unchanged


@pytest.mark.parametrize("case", _cases(), ids=_ids)
def test_sampling_contract(case):
    mechanism = _build(case)
    table = _table()
    before = copy.deepcopy(mechanism.get_params())
    counts_before = table.counts.copy()
    a = mechanism.sample(table, m=2, rng=123)
    b = mechanism.sample(table, m=2, rng=123)
    assert len(a) == 2
    for x, y in zip(a, b):
        if isinstance(x, PublishedTable):
            assert_array_equal(x.released, y.released)
            assert_array_equal(x.original, x.publication.aggregate(table))
            ok = ~np.isnan(x.released)
            assert np.all(x.released[ok] >= 0)
            if x.measure == "count":  # a magnitude table's sums are not counts
                assert np.all(x.released[ok] == np.floor(x.released[ok]))
            continue
        assert x.equals(y)
        assert x.variables == table.variables
        assert_array_equal(x.structural_zeros, table.structural_zeros)
        assert x.is_integer and np.all(x.counts >= 0)
        assert np.intersect1d(x.index, table.structural_zeros).size == 0
    assert_array_equal(table.counts, counts_before)
    after = mechanism.get_params()
    assert before.keys() == after.keys()
    for key in before:
        if isinstance(before[key], np.ndarray):
            assert_array_equal(before[key], after[key])
        else:
            assert repr(before[key]) == repr(after[key])


# ---------------------------------------------------------------------- samples against P(k | j)
J_VALUES = (0, 1, 2, 5, 17)
CELLS_PER_J = 4000


def _grid_table() -> tuple[CountTable, np.ndarray]:
    """CELLS_PER_J cells of each count in J_VALUES (0: random zeros), on a 2-variable table."""
    n = CELLS_PER_J * len(J_VALUES)
    variables = [Variable("i", range(n // 10), public=True), Variable("r", range(10), public=True)]
    j = np.repeat(np.array(J_VALUES), CELLS_PER_J)
    nz = np.flatnonzero(j > 0)
    return CountTable(variables, nz, j[nz]), j


def _released(mechanism, table: CountTable, rng: int) -> np.ndarray:
    [out] = mechanism.sample(table, rng=rng)
    if isinstance(out, PublishedTable):  # the cell key method without a publication: the cells themselves
        full = np.zeros(table.n_cells)
        full[out.publication.inner_index] = out.released
        return full
    return out.dense().reshape(-1)


def _cellwise_cases() -> list[tuple[str, int]]:
    return [c for c in _cases() if isinstance(_build(c), CellwiseMechanism) and _build(c).get_params().get("publication") is None]


@pytest.mark.parametrize("case", _cellwise_cases(), ids=_ids)
def test_samples_follow_transition_probabilities(case):
    mechanism = _build(case)
    table, j = _grid_table()
    released = _released(mechanism, table, rng=20261122)
    for jv in J_VALUES:
        k = released[j == jv].astype(np.int64)
        kmax = int(k.max()) + 1
        expected = np.asarray(mechanism.transition_pmf(np.arange(kmax + 1), jv), dtype=float) * k.size
        expected[-1] += float(np.asarray(mechanism.transition_sf(kmax, jv))) * k.size  # the upper tail
        observed = np.bincount(np.minimum(k, kmax), minlength=kmax + 1).astype(float)
        assert np.all(observed[expected == 0] == 0), f"j={jv}: released values of probability 0"
        # pool the sparse cells of the tail so every expected count is at least 5
        keep = expected >= 5
        obs = np.r_[observed[keep], observed[~keep].sum()]
        exp = np.r_[expected[keep], expected[~keep].sum()]
        obs, exp = obs[exp > 0], exp[exp > 0]
        if obs.size < 2:
            assert obs.sum() == exp.sum()
            continue
        chi2 = float(((obs - exp) ** 2 / exp).sum())
        p = stats.chi2.sf(chi2, obs.size - 1)
        assert p > 1e-4, f"{mechanism!r}, j={jv}: chi-square {chi2:.1f} on {obs.size - 1} df (p={p:.2g})"


# ---------------------------------------------------------------------- the checked protocol
@pytest.mark.parametrize("case", [c for c in _cases() if isinstance(_build(c), CellwiseMechanism)], ids=_ids)
def test_transition_arguments_are_checked_once_in_the_base_class(case):
    """Counts are whole numbers, original counts >= 0: 1.5 is never truncated, -3 never evaluated."""
    mechanism = _build(case)
    for method in (mechanism.transition_pmf, mechanism.transition_sf):
        with pytest.raises(InvalidArgumentError, match="the released counts k must be integer counts. Got 1.5"):
            method(1.5, 2)
        with pytest.raises(InvalidArgumentError, match="the original counts j must be integer counts. Got 1.5"):
            method(1, 1.5)
        with pytest.raises(InvalidArgumentError, match="the original counts j must be counts >= 0. Got -3"):
            method(1, -3)
        with pytest.raises(InvalidArgumentError, match="do not broadcast"):
            method(np.arange(3), np.arange(2))
        assert_array_equal(method(np.array([2.0]), 3.0), method(np.array([2]), 3))
        assert method(np.arange(4)[None, :], np.arange(3)[:, None]).shape == (3, 4)
    assert float(mechanism.transition_pmf(-1, 2)) == 0.0 and float(mechanism.transition_sf(-1, 2)) == 1.0
    for method in (mechanism.transition_mean, mechanism.transition_var, mechanism.transition_support):
        with pytest.raises(InvalidArgumentError, match="counts >= 0"):
            method([1, -1])


@pytest.mark.parametrize("case", _cases(), ids=_ids)
def test_sample_and_implicates_return_one_type(case):
    mechanism = _build(case)
    table = _table()
    released = mechanism.sample(table, m=2, rng=7)
    kinds = {type(r) for r in released}
    assert len(kinds) == 1
    if hasattr(mechanism, "implicates"):
        second = next(mechanism.implicates(table, 1, rng=7, first=1))
        assert type(second) in kinds
        if isinstance(second, PublishedTable):
            assert_array_equal(second.released, released[1].released)
        else:
            assert second.equals(released[1])
    with pytest.raises(InvalidArgumentError, match="'m' parameter"):
        mechanism.sample(table, m=0)


@pytest.mark.parametrize("case", [c for c in _cases() if isinstance(_build(c), CellwiseMechanism)], ids=_ids)
def test_cellwise_mechanisms_draw_from_the_secure_generator(case):
    """rng='secure' (the DP commands' default) works for every cell-wise mechanism: geometric noise stopped on
    the cryptographic generator's missing geometric draws, where random zeros become positive."""
    mechanism = _build(case)
    table = _table()
    try:
        [out] = mechanism.sample(table, rng="secure")
    except InvalidArgumentError as exc:  # a draw the cryptographic generator lacks (PIG's Wald): said, with what to do
        assert case[0] not in ("geometric", "discrete-gaussian") and "give a seed" in str(exc)
        return
    counts = out.released[~np.isnan(out.released)] if isinstance(out, PublishedTable) else out.counts
    assert np.all(counts >= 0) and np.all(counts == np.floor(counts))
