"""The DP promise read the way an intruder reads it (issue 23): one test per thing the intruder tries.

The attacker's computations here are written from the formulas, independently of the code that
protects: the Dirichlet-multinomial and geometric probabilities come from their closed forms
(scipy's gammaln and exact powers), and the log-ratios between neighbouring files are enumerated
over every output.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln

from cellsafe import CountTable, Domain, Variable
from cellsafe.dp import PrivacyAccountant, plan_synthesis
from cellsafe.exceptions import DataError, InvalidArgumentError
from cellsafe.mechanisms import (
    DiscreteGaussianNoise,
    GeometricNoise,
    MarginalSynthesizer,
    MultinomialDirichletSynthesizer,
    PoissonGammaSynthesizer,
)


# ---------------------------------------------------------------------- the attacker's own formulas
def _dm_logpmf(z, y, alpha):
    """log DM(z; z., y + alpha): the Dirichlet-multinomial law of an implicate (004 eq. 2), any total z."""
    z, w = np.asarray(z, float), np.asarray(y, float) + alpha
    n = z.sum()
    return (gammaln(n + 1) - gammaln(z + 1).sum() + gammaln(w.sum()) - gammaln(w).sum()
            + gammaln(z + w).sum() - gammaln(n + w.sum()))


def _geom_logpmf(k, j, eps):
    """log P(max(0, j + N) = k), N two-sided geometric with q = e^-eps."""
    q = math.exp(-eps)
    if k == 0:
        return j * math.log(q) - math.log1p(q)
    return math.log((1 - q) / (1 + q)) + abs(k - j) * math.log(q)


def _compositions(total, cells):
    """Every vector of ``cells`` non-negative integers summing to ``total``."""
    for cut in itertools.combinations(range(total + cells - 1), cells - 1):
        edges = (-1, *cut, total + cells - 1)
        yield [edges[i + 1] - edges[i] - 1 for i in range(cells)]


# ---------------------------------------------------------------------- parts (item 2)
def _part_release_logpmf(t_out, z, y, eps_total, eps_each):
    """log P(noisy total t_out, implicate z | part counts y): the release of a part without public size."""
    lt = _geom_logpmf(t_out, int(sum(y)), eps_total)
    if t_out == 0:
        return lt if sum(z) == 0 else -math.inf
    alpha = t_out / math.expm1(eps_each)
    return lt + _dm_logpmf(z, y, alpha)


def test_parts_without_public_sizes_stay_within_the_ledger_by_enumeration():
    # file A: region N holds (F, F, M), S holds (M); file B: one F moved from N to S (replace-one neighbours)
    domain = Domain({"sex": ["F", "M"], "region": ["N", "S"]})
    a = pd.DataFrame({"sex": ["F", "F", "M", "M"], "region": ["N", "N", "N", "S"]})
    b = pd.DataFrame({"sex": ["F", "F", "M", "M"], "region": ["N", "S", "N", "S"]})
    eps, eps_total = 0.7, 0.3
    acc = PrivacyAccountant(10.0)
    plans = {}
    for region in ("N", "S"):
        plan = plan_synthesis(a, domain, variables=["sex"], epsilon=eps, part=("region", region),
                              total_epsilon=eps_total, rng=1)
        acc.spend(plan.loss, partition="region", part=region, public_parts=plan.public_parts)
        plans[region] = plan
    assert [r.composition for r in acc.releases] == ["sequential", "sequential"]
    for plan in plans.values():  # the law enumerated below is the one the code draws from
        assert plan.total_policy == "noisy" and plan.description["total_epsilon"] == pytest.approx(eps_total)
        if plan.released_total == 0:  # nothing to place: every implicate empty, as _part_release_logpmf says
            assert plan.synthesizer is None and all(t.nnz == 0 for t in plan.implicates(m=2))
        else:
            assert plan.synthesizer.alpha == pytest.approx(plan.released_total / math.expm1(eps), rel=1e-12)
    charged = acc.spent()[0]
    # the guarantee: the total's epsilon plus the synthesis', for each part, added
    assert charged == pytest.approx(2 * (eps_total + eps), rel=1e-9)

    counts = {name: {r: [int(((f.region == r) & (f.sex == s)).sum()) for s in ("F", "M")] for r in ("N", "S")}
              for name, f in (("A", a), ("B", b))}
    worst = 0.0
    for tn in range(0, 9):
        for ts in range(0, 9):
            for zn in _compositions(tn, 2):
                for zs in _compositions(ts, 2):
                    la = (_part_release_logpmf(tn, zn, counts["A"]["N"], eps_total, eps)
                          + _part_release_logpmf(ts, zs, counts["A"]["S"], eps_total, eps))
                    lb = (_part_release_logpmf(tn, zn, counts["B"]["N"], eps_total, eps)
                          + _part_release_logpmf(ts, zs, counts["B"]["S"], eps_total, eps))
                    worst = max(worst, abs(la - lb))
    assert worst <= charged + 1e-9
    assert worst > 0.5 * charged  # the bound is not loose by orders of magnitude

    # the old way: exact part totals charged in parallel: an output of A is impossible under B
    assert sum(counts["A"]["N"]) != sum(counts["B"]["N"])  # 3 against 2: the part total alone tells them apart


def test_declared_part_sizes_must_be_true_and_compose_in_parallel():
    domain = Domain({"sex": ["F", "M"], "region": ["N", "S"]})
    a = pd.DataFrame({"sex": ["F", "F", "M", "M"], "region": ["N", "N", "N", "S"]})
    plan = plan_synthesis(a, domain, variables=["sex"], epsilon=1.0, part=("region", "N"), part_sizes={"N": 3, "S": 1})
    assert plan.public_parts and plan.released_total == 3 and plan.description["part"]["composition"] == "parallel"
    with pytest.raises(DataError, match="not the 2 declared public"):
        plan_synthesis(a, domain, variables=["sex"], epsilon=1.0, part=("region", "N"), part_sizes={"N": 2, "S": 2})
    with pytest.raises(InvalidArgumentError, match="is not public"):
        plan_synthesis(a, domain, variables=["sex"], epsilon=1.0, part=("region", "N"))
    with pytest.raises(DataError, match="not in the domain"):
        plan_synthesis(a, Domain({"sex": ["F", "M"]}), variables=["sex"], epsilon=1.0, part=("region", "N"),
                       part_sizes={"N": 3})


# ---------------------------------------------------------------------- the dropped count (item 5)
def test_the_dropped_count_is_not_inferable():
    domain = Domain({"sex": ["F", "M"]})
    # neighbours under replace-one: the last record is inside the domain in A, outside it in B
    a = pd.DataFrame({"sex": ["F", "M", "F", "M"]})
    b = pd.DataFrame({"sex": ["F", "M", "F", "X"]})
    with pytest.raises(InvalidArgumentError, match="how many records were left out"):
        plan_synthesis(b, domain, epsilon=1.0, outside="drop")
    eps, eps_total = 0.8, 0.4
    plan = plan_synthesis(b, domain, epsilon=eps, outside="drop", total_epsilon=eps_total, rng=3)
    assert "records_left_out" not in plan.description and plan.custodian["records_left_out"] == 1
    assert plan.loss.epsilon == pytest.approx(eps + eps_total)
    ya, yb = ([int((f.sex == s).sum()) for s in ("F", "M")] for f in (a, b))  # (2, 2) and (2, 1): X left out
    worst = max(
        abs(_part_release_logpmf(t, z, ya, eps_total, eps) - _part_release_logpmf(t, z, yb, eps_total, eps))
        for t in range(12) for z in _compositions(t, 2)
    )
    assert worst <= plan.loss.epsilon + 1e-9
    # declared public: refused unless true
    assert plan_synthesis(b, domain, epsilon=1.0, outside="drop", public_total=3).released_total == 3
    with pytest.raises(DataError, match="not the 4 declared public"):
        plan_synthesis(b, domain, epsilon=1.0, outside="drop", public_total=4)


# ---------------------------------------------------------------------- support and prior (item 3)
def _deaths(full: bool) -> pd.DataFrame:
    counties = [f"c{i}" for i in range(10)]
    deaths = [3, 1, 4, 1, 5, 9, 0, 0, 0, 0]
    pop = [1000, 800, 1200, 900, 1500, 3000, 700, 600, 1100, 400]
    frame = pd.DataFrame({"county": counties, "deaths": deaths, "pop": pop})
    return frame if full else frame[frame.deaths > 0]  # a common export: only counties with deaths


def test_a_population_export_without_its_zero_rows_never_changes_the_support():
    domain = Domain({"county": [f"c{i}" for i in range(10)]})
    public_pop = _deaths(True)[["county", "pop"]]
    kw = dict(mechanism="poisson-gamma", epsilon=2.0, count="deaths", population="pop")
    # the population read from the confidential export: the export must list every cell
    with pytest.raises(DataError, match="4 of the 10 cells of the domain have no row"):
        plan_synthesis(_deaths(False), domain, **kw)
    full = plan_synthesis(_deaths(True), domain, **kw)
    # from a public population file, the support is the file's: the export's missing rows are zeros
    part = plan_synthesis(_deaths(False), domain, population_source=public_pop, **kw)
    assert any("4 of the 10 cells with a population have no row in the input" in n for n in part.notices)
    for p in (full, part):
        assert p.description["support"]["cells"] == 10
    s1, s2 = full.synthesizer, part.synthesizer
    assert np.array_equal(s1.a, s2.a) and np.array_equal(s1.b, s2.b)
    assert full.table.equals(part.table)
    # the law is the same: events reach the counties without deaths in both
    seen = np.zeros(10)
    for t in part.implicates(m=40, rng=5):
        seen[t.index] += t.counts
    assert seen[6:].sum() > 0


def test_a_prior_from_the_confidential_counts_needs_its_epsilon():
    domain = Domain({"state": ["N", "S"], "county": [f"c{i}" for i in range(10)]})
    frame = _deaths(True).assign(state=["N"] * 5 + ["S"] * 5)
    pop = frame[["state", "county", "pop"]]
    kw = dict(mechanism="poisson-gamma", epsilon=2.0, count="deaths", population="pop", population_source=pop)
    with pytest.raises(InvalidArgumentError, match="outside any budget"):
        plan_synthesis(frame, domain, prior="regional:state", **kw)
    noisy = plan_synthesis(frame, domain, prior="regional:state", prior_epsilon=0.5, rng=2, **kw)
    assert noisy.loss.epsilon == pytest.approx(2.5) and noisy.description["prior_epsilon"] == 0.5
    public = plan_synthesis(frame, domain, prior="regional:state", prior_rates={"N": 0.004, "S": 0.002}, **kw)
    assert public.loss.epsilon == pytest.approx(2.0) and public.description["prior"]["from"] == "public rates"
    t = CountTable([Variable("v", ("a", "b"), public=True)], [0], [3])
    with pytest.raises(InvalidArgumentError, match="outside any budget"):
        PoissonGammaSynthesizer.for_epsilon(1.0, t, prior="regional:v")


# ---------------------------------------------------------------------- one neighbour relation (item 4)
def test_geometric_noise_under_replace_one_loses_two_epsilon_exactly():
    eps = 0.9
    mech = GeometricNoise(eps)
    assert mech.privacy_loss("add-remove").epsilon == pytest.approx(eps)
    assert mech.privacy_loss("replace-one").epsilon == pytest.approx(2 * eps)
    # one record moves from cell 1 to cell 2: counts (1, 0) -> (0, 1); enumerate both cells' outputs
    worst = max(
        abs(_geom_logpmf(k1, 1, eps) + _geom_logpmf(k2, 0, eps) - _geom_logpmf(k1, 0, eps) - _geom_logpmf(k2, 1, eps))
        for k1 in range(40) for k2 in range(40)
    )
    assert worst == pytest.approx(2 * eps, abs=1e-9)
    acc = PrivacyAccountant(2.0)  # replace-one
    acc.spend(mech.privacy_loss(acc.relation), label="geometric counts", mechanism="geometric")
    assert acc.spent()[0] == pytest.approx(1.8)
    with pytest.raises(InvalidArgumentError, match="one ledger holds one relation"):
        acc.spend(mech.privacy_loss("add-remove"))


def test_the_fixed_total_synthesizers_have_no_guarantee_under_add_remove():
    t = CountTable([Variable("v", ("a", "b"), public=True)], [0, 1], [2, 1])
    md = MultinomialDirichletSynthesizer.for_epsilon(1.0, 3)
    assert math.isinf(md.privacy_loss("add-remove", table=t).epsilon)
    assert md.privacy_loss("replace-one", table=t).epsilon == pytest.approx(1.0)
    with pytest.raises(InvalidArgumentError, match="no finite epsilon"):
        PrivacyAccountant(5.0, relation="add-remove").spend(md.privacy_loss("add-remove", table=t))
    # under add-remove, a release whose total is noisy: the total's epsilon plus the synthesis'
    records = pd.DataFrame({"v": ["a", "a", "b"]})
    plan = plan_synthesis(records, Domain({"v": ["a", "b"]}), epsilon=1.0, relation="add-remove", total_epsilon=0.5,
                          rng=4)
    assert plan.loss.relation == "add-remove" and plan.loss.epsilon == pytest.approx(1.5)


# ---------------------------------------------------------------------- the API takes a public domain (item 5)
def test_the_tuvalu_case_is_refused():
    records = pd.DataFrame({"country": ["Fiji", "Fiji", "Tonga", "Tuvalu"]})
    table = CountTable.from_frame(records, ["country"])  # categories from the records, Tuvalu among them
    every_dp_mechanism = (
        GeometricNoise(1.0), DiscreteGaussianNoise(2.0), MultinomialDirichletSynthesizer.for_epsilon(1.0, 4),
        PoissonGammaSynthesizer(2.0, 1.0), MarginalSynthesizer(1.0), MarginalSynthesizer(1.0, selection="aim"),
    )
    for mech in every_dp_mechanism:
        with pytest.raises(DataError, match="were not given as public"):
            mech.sample(table, rng=1)
        with pytest.raises(DataError, match="'Tuvalu' of variable 'country' is not in the public domain"):
            mech.sample(table, rng=1, domain=Domain({"country": ["Fiji", "Samoa", "Tonga"]}))
    with pytest.raises(DataError, match="were not given as public"):  # the marginal synthesizers' records path
        MarginalSynthesizer(1.0).release(table)
    domain = Domain({"country": ["Fiji", "Samoa", "Tonga"]})
    kept, dropped = domain.table(records, outside="drop")
    [out] = GeometricNoise(1.0).sample(kept, rng=1)
    assert "Tuvalu" not in out.variables[0].categories and dropped == 1


# ---------------------------------------------------------------------- secure noise on sparse tables (item 5)
@pytest.mark.parametrize("mech", [GeometricNoise(1.0), GeometricNoise(0.05), DiscreteGaussianNoise(1.5)])
def test_secure_noise_on_a_table_with_empty_cells(mech):
    from cellsafe._secure import SecureSeed

    n_cells = 50_000
    table = CountTable([Variable("cell", tuple(range(n_cells)), public=True)], [0, 7, 9_000], [3, 1, 12])
    p0 = mech.zero_release_probability()
    zeros = n_cells - 3
    released = []
    for i in range(4):
        [out] = mech.sample(table, rng=SecureSeed(bytes([i]) * 32))
        positive_zeros = np.setdiff1d(out.index, table.index).size
        released.append(positive_zeros)
    mean, se = zeros * p0, math.sqrt(zeros * p0 * (1 - p0) / 4)
    assert abs(np.mean(released) - mean) < 5 * se
    [out] = mech.sample(table, rng="secure")  # a fresh key: runs, with noise on the empty cells
    assert out.nnz > 3


def test_secure_geometric_gaps_follow_the_geometric_law():
    from scipy import stats

    from cellsafe._secure import SecureSeed

    gen = SecureSeed(bytes(range(32))).generator(11)
    n = 100_000
    for p in (0.6, 0.3, 1e-3):
        x = gen.geometric(p, n)
        edges = np.unique(stats.geom.ppf(np.linspace(0, 1, 11)[1:-1], p)).astype(int)
        expected = np.diff(np.r_[0.0, stats.geom.cdf(edges, p), 1.0]) * n
        observed = np.histogram(x, bins=np.r_[0, edges + 0.5, np.inf])[0]
        chi2 = float(((observed - expected) ** 2 / expected).sum())
        assert stats.chi2.sf(chi2, expected.size - 1) > 1e-4
    tiny = gen.geometric(1e-9, 20_000)
    assert abs(tiny.mean() * 1e-9 - 1) < 5 / math.sqrt(20_000)
    ranks = gen.bernoulli_ranks(10**7, 1e-4)
    assert np.all(np.diff(ranks) > 0) and ranks[-1] < 10**7 and abs(ranks.size - 1000) < 5 * math.sqrt(1000)
