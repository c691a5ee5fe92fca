"""The Poisson-gamma synthesizer of 004 (Quick 2021, section 2.2) with a proven epsilon.

Model (004 eqs. 6-8): y_i | lambda_i ~ Pois(n_i lambda_i), lambda_i ~ Gamma(a_i, rate b_i), so the
posterior predictive count of cell i is negative binomial with size y_i + a_i and success
probability (n_i + b_i) / (b_i + 2 n_i).  The released table is drawn from these negative binomials
**conditioned on their sum** being the original total (004 eq. 9, for any number of cells): that is
the distribution the privacy condition is about, and :class:`PoissonGammaSynthesizer` samples it
exactly.  :class:`PoissonGammaMultinomialSynthesizer` is the different, simpler mechanism "draw
lambda from the posterior, then a multinomial", offered as a baseline with no privacy claim.

The cells are those with a positive population n_i (all non-structural cells when no population is
given, with n_i = 1).  Events in a cell of zero population are a data error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .._params import Param
from .._privacy import PrivacyLoss
from .._random import RNGLike, block_starts, stream
from .._registry import register
from .._validation import check_integer, check_real
from ._domain import (
    DEFAULT_MAX_SYNTH_CELLS,
    check_domain_size,
    check_integer_table,
    check_positive_values,
    dense_outputs,
    non_structural_index,
)
from ..distributions import ConditionedNegativeBinomial, DiscreteLaplace, conditioned_nb_log_pmf
from ..exceptions import DataError, InvalidArgumentError, TableTooLargeError
from ..table import INDEX_DTYPE, CountTable, check_same_variables, unravel
from ._dp import DPMechanism
from ._fixed_total import DRIVER, FixedTotalMechanism, GammaBlock, fixed_total_loss

__all__ = ["PoissonGammaSynthesizer", "PoissonGammaMultinomialSynthesizer"]

_ACCEPT_STEP = 0  # the driver's acceptance uniforms (its split of the total is step 1)


@dataclass(frozen=True)
class _Cells:
    """The synthesis domain of a table: flat indices, counts, populations and prior parameters."""

    index: np.ndarray
    y: np.ndarray
    n: np.ndarray
    a: np.ndarray
    b: np.ndarray

    @property
    def theta(self) -> np.ndarray:
        """Scale of the posterior of mu_i = n_i lambda_i: n_i / (n_i + b_i)."""
        return self.n / (self.n + self.b)


def _per_cell(value: Any, name: str, domain: np.ndarray, table: CountTable) -> np.ndarray:
    """A scalar, per-domain-cell array, per-cell (length K) array or CountTable as values on the domain."""
    if isinstance(value, CountTable):
        check_same_variables(value, table, f"the {name} table", "the data")
        out = value.lookup(domain).astype(float)
        if np.any(out <= 0):
            j = domain[np.flatnonzero(out <= 0)[0]]
            raise DataError(
                f"{name} must be positive in every synthesized cell; it is 0 at ({table.describe_cells([j])[0]})."
            )
        return out
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        return np.full(domain.shape[0], float(arr))
    if arr.shape[0] == domain.shape[0]:
        return arr.copy()
    if arr.shape[0] == table.n_cells:
        return arr[domain]
    raise DataError(
        f"{name} has {arr.shape[0]} values, but the table has {domain.shape[0]} cells to synthesize "
        f"(and {table.n_cells} cells in all); give one value per synthesized cell in flat-index order."
    )


class _PoissonGammaBase(FixedTotalMechanism):
    _owner = "PoissonGammaSynthesizer"

    _params = (
        Param("a", kind="object", doc="gamma prior shape: one positive value, per-cell values or a CountTable"),
        Param("b", kind="object", doc="gamma prior rate: one positive value, per-cell values or a CountTable"),
        Param("population", kind="object", default=None, none_ok=True, doc="population sizes per cell"),
        Param("max_cells", kind="integer", low=1, default=DEFAULT_MAX_SYNTH_CELLS, doc="largest domain accepted"),
    )

    def __init__(self, a: Any, b: Any, population: Any = None, *, max_cells: int = DEFAULT_MAX_SYNTH_CELLS) -> None:
        owner = type(self).__name__
        check_positive_values(a, "a", owner, table_allowed=True)
        check_positive_values(b, "b", owner, table_allowed=True)
        if population is not None and not isinstance(population, CountTable):
            try:
                arr = None if isinstance(population, str) else np.asarray(population, dtype=float)
            except (TypeError, ValueError):
                arr = None
            if arr is None or arr.ndim != 1 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise InvalidArgumentError(
                    f"The 'population' parameter of {owner} must be None, a CountTable of population sizes "
                    f"or a one-dimensional array of non-negative sizes (one per cell). Got {population!r} instead."
                )
        check_integer(max_cells, "max_cells", owner, low=1)
        self.a = a
        self.b = b
        self.population = population
        self.max_cells = max_cells

    # ------------------------------------------------------------------ domain
    def _cells(self, table: CountTable, what: str) -> _Cells:
        owner = f"{type(self).__name__}.{what}"
        check_integer_table(table, owner)
        domain, n = _domain(self.population, table, self.max_cells, type(self).__name__)
        y = table.lookup(domain)
        if int(y.sum()) != int(table.total):
            outside = np.setdiff1d(table.index, domain, assume_unique=True)
            cell = table.describe_cells(outside[:1])[0]
            raise DataError(
                f"cell ({cell}) has {int(table.lookup(outside[:1])[0])} events but no population; "
                "every cell with events needs a positive population size."
            )
        a = _per_cell(self.a, "a", domain, table)
        b = _per_cell(self.b, "b", domain, table)
        return _Cells(domain, y.astype(np.int64), n, a, b)

    def _support_cells(self, table: CountTable) -> np.ndarray:
        """Flat indices of the synthesized cells (positive population, not structural)."""
        return _domain(self.population, table, self.max_cells, type(self).__name__)[0]

    # ------------------------------------------------------------------ sampling (the kernels are inherited)
    def _check_sample_table(self, table: CountTable) -> int:
        check_integer_table(table, f"{type(self).__name__}.sample")
        return int(table.total)

    def gamma_blocks(self, table: CountTable) -> list[GammaBlock]:
        """The synthesized cells, block by block, with the shapes and scales of their gamma weights."""
        c = self._cells(table, "sample")
        shape, scale = self._gamma_parameters(c, int(table.total))
        starts = block_starts(c.index, table.n_cells)
        return [
            GammaBlock(b, c.index[s0:s1], shape[s0:s1], scale[s0:s1])
            for b, (s0, s1) in enumerate(zip(starts[:-1].tolist(), starts[1:].tolist()))
            if s1 > s0
        ]

    def _gamma_parameters(self, c: _Cells, total: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def __repr__(self) -> str:
        def show(v: Any) -> str:
            if isinstance(v, CountTable):
                return "CountTable"
            return f"{float(v):.6g}" if np.ndim(v) == 0 else f"array of {np.size(v)}"

        pop = "None" if self.population is None else show(self.population)
        return f"{type(self).__name__}(a={show(self.a)}, b={show(self.b)}, population={pop})"


def _domain(population: Any, table: CountTable, max_cells: int, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices of the synthesized cells (positive population, not structural) and their n_i."""
    if population is None:
        check_domain_size(table, max_cells, owner)
        idx = non_structural_index(table)
        return idx, np.ones(idx.shape[0])
    if isinstance(population, CountTable):
        check_same_variables(population, table, "the population table", "the data")
        idx, n = population.index, population.counts.astype(float)
    else:
        arr = np.asarray(population, dtype=float)
        if arr.shape[0] != table.n_cells:
            raise DataError(
                f"population has {arr.shape[0]} values but the table has {table.n_cells} cells; "
                "give one size per cell in flat-index order, or a CountTable of sizes."
            )
        idx = np.flatnonzero(arr > 0).astype(INDEX_DTYPE)
        n = arr[idx]
    if table.n_structural_zeros:
        sz = table.structural_zeros  # sorted: membership by binary search, not np.isin's hashing
        pos = np.minimum(np.searchsorted(sz, idx), sz.size - 1)
        keep = sz[pos] != idx
        idx, n = idx[keep], n[keep]
    if idx.shape[0] > max_cells:
        raise TableTooLargeError(f"{owner}: {idx.shape[0]:,} cells with a population exceed max_cells={max_cells:,}.")
    return idx, n


@register("mechanism", "poisson-gamma")
class PoissonGammaSynthesizer(DPMechanism, _PoissonGammaBase):
    """Fixed-total Poisson-gamma synthesis with a proven epsilon-DP guarantee.

    Parameters
    ----------
    a : float, array_like or CountTable
        Gamma prior shapes a_i > 0: one value, one per synthesized cell (flat-index order), one
        per table cell (length K), or a table of values.
    b : float, array_like or CountTable
        Gamma prior rates b_i > 0, in the same forms.  The prior mean rate is a_i / b_i.
    population : None, CountTable or array_like, optional
        Population sizes n_i (offsets).  The synthesized cells are those with n_i > 0; without a
        population every non-structural cell is synthesized with n_i = 1.
    max_cells : int, default 50,000,000
        The largest number of synthesized cells accepted.

    Attributes
    ----------
    a, b, population, max_cells
        As given.

    Notes
    -----
    One implicate is a draw of z with sum z. = y. from the posterior predictive negative
    binomials NB(y_i + a_i, n_i / (b_i + 2 n_i)) of 004 eq. 8 conditioned on their sum (004 eq. 9
    for two cells; the same construction for I cells), by exact rejection sampling
    (:class:`cellsafe.distributions.ConditionedNegativeBinomial`), run on the flat-index blocks
    in two passes (:mod:`cellsafe.mechanisms._fixed_total`): the block sums of numbered proposals
    (:meth:`block_weight_sums`), the acceptance test and the split of the total over the blocks
    (:meth:`accept_attempts`, :meth:`split_total`), then the multinomial within each block
    (:meth:`release_block`).

    **Privacy.**  Write q_k = n_k / (b_k + 2 n_k), r_k = y_k + a_k, and W(y) for the sum over
    outputs with total z. of prod_k Gamma(z_k + r_k) / (z_k! Gamma(r_k)) q_k**z_k.  Moving one event
    from cell i to cell j (x = y - e_i + e_j) changes the likelihood of an output z by

        p(z | y) / p(z | x) = A(z) * W(x) / W(y),
        A(z) = (z_i + y_i + a_i - 1) / (y_i + a_i - 1) * (y_j + a_j) / (z_j + y_j + a_j),

    and A lies between (y_j + a_j) / (z. + y_j + a_j) and (z. + y_i + a_i - 1) / (y_i + a_i - 1).
    Extracting coefficients of the generating function prod_k (1 - q_k t)**-r_k gives the identity

        W(x) / W(y) = 1 + (1 - q_i / q_j) G_j,    G_k = E_y[Z_k] / r_k = g(q_k),

    with g(q) = sum_m rho_m q**m, rho_m >= 0 not depending on k: so W(x) / W(y) is 1 when
    q_i = q_j, between 1 and 1 + (1 - q_i/q_j) G_j when q_j > q_i, and since g increases and
    sum_k r_k g(q_k) = z., G_j <= z. / (a_j + S_j) with S_j the sum of a_k over the other cells
    with q_k >= q_j.  The mirror identity (W(y) / W(x) = 1 + (1 - q_j/q_i) E_x[Z_i] / (x_i + a_i))
    covers q_j < q_i.  Taking the worst y (y_i = 1, y_j = 0), the privacy loss is at most

        max( log(1 + z./min a),  max over q_k < q_l of
             log(1 + z./a_k) + log(1 + (1 - q_k/q_l) z. / (a_l + S_l)) ),

    which :meth:`epsilon` reports (with, for each l, the smallest a_k and q_k among the cells of
    lower q, a slightly larger value).  When all b_i / n_i are equal, all q_k are equal, the output
    law is the Dirichlet-multinomial DM(z.; y + a), and the bound is the exact
    multinomial-Dirichlet loss log(1 + z./min a).  It never exceeds
    log(1 + z./a_(1)) + log(1 + z./a_(2)) for the two smallest shapes.

    **Difference from 004.**  004's condition (eqs. 13-15: a_i >= nu_i z. / (e^eps - nu_i)) comes
    from a two-group reduction and the bound of its Theorem 1.  Exact enumeration of the
    likelihood ratio on small tables (:func:`cellsafe.dp.verify_epsilon`) shows it can be exceeded
    when the b_i / n_i differ: with populations 1,000 and 20,000, smoothing to the national rate,
    a total of 3 and a_i set by eq. 15 for epsilon = 1, the true loss is about 1.2.  It is exact
    when all b_i / n_i are equal.  This class therefore reports only the guarantee above, which
    enumeration confirms and which is at most twice the multinomial-Dirichlet value (when one
    cell's q is much larger than the others', the bound approaches that factor).

    The prior must not depend on the confidential counts beyond the public total: smoothing to
    the national rate y. / n. is fine; regional rates computed from the same counts are not
    covered unless they are themselves released with differential privacy (see
    :meth:`for_epsilon`, ``prior_epsilon``).

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe import CountTable, Variable
    >>> t = CountTable([Variable("area", ("a", "b", "c"), public=True)], [0, 1, 2], [5, 1, 4])
    >>> pop = np.array([1000.0, 200.0, 800.0])
    >>> s = PoissonGammaSynthesizer.for_epsilon(2.0, t, population=pop)
    >>> round(s.epsilon(t), 6)
    2.0
    >>> [int(x.total) for x in s.sample(t, m=2, rng=1)]
    [10, 10]
    """

    # ------------------------------------------------------------------ calibration
    @classmethod
    def for_epsilon(
        cls,
        epsilon: float,
        table: CountTable,
        population: Any = None,
        prior: Any = "national",
        *,
        prior_epsilon: float | None = None,
        rng: RNGLike = None,
        max_cells: int = DEFAULT_MAX_SYNTH_CELLS,
    ) -> "PoissonGammaSynthesizer":
        """The synthesizer with the smallest common shape a that :meth:`epsilon` certifies.

        Parameters
        ----------
        epsilon : float
            Target privacy loss of the synthesis, > 0.
        table : CountTable
            The confidential table (its total z. and, for regional priors, its counts).
        population : None, CountTable or array_like
            Population sizes n_i, as in the constructor.
        prior : "national", "regional:VAR", ("regional", VAR) or array_like
            The prior mean rates lambda_0i: the national rate y. / n. (004's default, b_i = a n. / y.),
            the rate of each cell's category of variable VAR (regional totals of events over
            regional totals of population; a region without events uses 0.5 events), or given rates
            (public information), one per synthesized cell or per table cell.
        prior_epsilon : float, optional
            With a regional prior: release the regional event totals with the two-sided geometric
            mechanism at this epsilon (L1 sensitivity 2, 004 eq. 19) before computing the rates.
            The whole release then costs ``epsilon + prior_epsilon`` (sequential composition).
            A regional prior without it is refused: rates computed from the confidential counts
            would not be covered by the guarantee (give public rates as an array instead).
        rng : as elsewhere
            Randomness for ``prior_epsilon`` only.

        Returns
        -------
        PoissonGammaSynthesizer
            With ``a`` an array holding the common shape and ``b = a / lambda_0`` per synthesized cell.

        Notes
        -----
        The common shape is the smallest for which the bound of the class Notes (:meth:`epsilon`)
        is at most epsilon, found by bisection between z. / (e^eps - 1) (enough when every
        b_i / n_i is equal, as for the multinomial-Dirichlet synthesizer: 004 eq. 5 and the remark
        after eq. 15) and z. / (e^(eps/2) - 1) (always enough).  004 eq. 15 asks for less, but
        can be violated (see the class Notes).
        """
        owner = f"{cls.__name__}.for_epsilon"
        eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
        check_integer_table(table, owner)
        domain, n = _domain(population, table, max_cells, cls.__name__)
        y = table.lookup(domain).astype(float)
        total = int(table.total)
        rates = _prior_rates(prior, table, domain, y, n, prior_epsilon, rng, owner)
        a = _common_shape(eps, total, n, rates)
        a_vec = np.full(domain.shape[0], a)
        return cls(a_vec, a_vec / rates, population, max_cells=max_cells)

    def epsilon(self, table: CountTable) -> float:
        """The epsilon-DP guarantee of these parameters for this table's total.

        Returns
        -------
        float
            The bound of the class Notes: ``log(1 + z./min a)`` when all b_i / n_i are equal, and
            otherwise at most ``log(1 + z./a_(1)) + log(1 + z./a_(2))``.
        """
        c = self._cells(table, "epsilon")
        r, q = self._nb_parameters(c)
        return _epsilon_bound(float(table.total), c.a, q)

    def _privacy_loss(self, relation: str, table: Any, delta: Any) -> PrivacyLoss:
        """:meth:`epsilon` of the table under replace-one; none under add-remove (the exact total)."""
        return fixed_total_loss(self, relation, table)

    # ------------------------------------------------------------------ sampling
    _purpose = 0x5047  # "PG"

    def _gamma_parameters(self, c: _Cells, total: int) -> tuple[np.ndarray, np.ndarray]:
        # the proposal of the exact rejection sampler: NB(r_i, q_i) as Poisson(s_i Gamma(r_i)), tilted
        r, q = self._nb_parameters(c)
        return r, ConditionedNegativeBinomial(r, q, total).proposal_scale

    def accept_attempts(
        self, proposal_sums: Any, attempts: Any, total: int, root: np.random.SeedSequence, implicate: int
    ) -> int | None:
        """Driver: the first accepted attempt among ``attempts``, or None.

        Attempt j, whose weights sum to S_j over all blocks (the sums of :meth:`block_weight_sums`),
        is accepted with probability (S_j / z.)**z. e**(z. - S_j) <= 1, with one uniform of its own
        stream: the exact rejection sampler of :class:`~cellsafe.distributions.ConditionedNegativeBinomial`
        (whose :attr:`~cellsafe.distributions.ConditionedNegativeBinomial.proposal_scale` the blocks
        carry), and the answer does not depend on how attempts are batched.
        """
        big_s = np.asarray(proposal_sums, dtype=np.float64)
        with np.errstate(divide="ignore"):
            log_w = total * np.log(big_s / total) - big_s + total
        for j, lw in zip(attempts, log_w.tolist()):
            u = stream(root, self._purpose, implicate, DRIVER, _ACCEPT_STEP, int(j)).random()
            if math.log(u) < lw:
                return int(j)
        return None

    def _accepted_attempt(
        self, blocks: Iterable[GammaBlock], total: int, root: np.random.SeedSequence, implicate: int
    ) -> tuple[int, np.ndarray]:
        blocks = list(blocks)
        if sum(b.index.size for b in blocks) == 1:  # one cell receives every event whatever the weights
            return 0, np.ones(1)
        r = np.concatenate([b.shape for b in blocks])
        s = np.concatenate([b.scale for b in blocks])
        rate = math.sqrt(total / (total + float(np.sum(r * s**2))))  # about the acceptance rate
        batch = int(min(max(1, math.ceil(2.0 / rate)), 64))
        first = 0
        while True:
            attempts = range(first, first + batch)
            sums = np.array([self.block_weight_sums(b, root, implicate, attempts) for b in blocks])  # (blocks, batch)
            j = self.accept_attempts(sums.sum(axis=0), attempts, total, root, implicate)
            if j is not None:
                return j, sums[:, j - first]
            first += batch

    def log_pmf(self, z: Any, table: CountTable) -> np.ndarray:
        """Exact log P(synthetic counts z | table), z dense over all K cells (..., K); small tables only."""
        z = dense_outputs(z, table, np.int64)
        c = self._cells(table, "log_pmf")
        r, q = self._nb_parameters(c)
        mask = np.ones(table.n_cells, dtype=bool)
        mask[c.index] = False
        bad = (z.sum(-1) != int(table.total)) | (z[..., mask] != 0).any(-1) | (z < 0).any(-1)
        out = np.full(z.shape[:-1], -np.inf)
        if (~bad).any():
            out[~bad] = conditioned_nb_log_pmf(z[~bad][:, c.index], r, q)
        return out

    @staticmethod
    def _nb_parameters(c: _Cells) -> tuple[np.ndarray, np.ndarray]:
        return c.y + c.a, c.n / (c.b + 2.0 * c.n)


@register("mechanism", "poisson-gamma-multinomial")
class PoissonGammaMultinomialSynthesizer(_PoissonGammaBase):
    """Posterior rates, then a multinomial: a simpler mechanism with **no** privacy claim.

    One implicate draws lambda_i ~ Gamma(y_i + a_i, rate n_i + b_i) (004 eq. 7) and then
    z ~ Mult(y., n_i lambda_i / sum_j n_j lambda_j).  This is not the law of
    :class:`PoissonGammaSynthesizer` (negative binomials conditioned on their sum) unless all
    b_i / n_i are equal, and no epsilon is attached to it.  It serves as a speed baseline and for
    comparisons of utility.  Sampling is the two-pass block scheme of
    :mod:`cellsafe.mechanisms._fixed_total` with weights n_i lambda_i.

    Parameters
    ----------
    a, b, population, max_cells
        As for :class:`PoissonGammaSynthesizer`.
    """

    _purpose = 0x504D  # "PM"

    def _gamma_parameters(self, c: _Cells, total: int) -> tuple[np.ndarray, np.ndarray]:
        # n_i lambda_i with lambda_i ~ Gamma(y_i + a_i, rate n_i + b_i)
        return (c.y + c.a).astype(float), c.theta


# ---------------------------------------------------------------------- privacy bound
def _epsilon_bound(total: float, a: np.ndarray, q: np.ndarray) -> float:
    """The proven privacy loss bound of :class:`PoissonGammaSynthesizer` (see its Notes)."""
    a = np.asarray(a, dtype=float)
    q = np.asarray(q, dtype=float)
    k = a.shape[0]
    if k < 2:
        return 0.0
    base = math.log1p(total / float(a.min()))
    order = np.argsort(-q, kind="stable")
    qs, as_ = q[order], a[order]
    last = np.searchsorted(-qs, -qs, side="right") - 1  # last position with q >= q_l (ties included)
    cum = np.cumsum(as_)
    c = total / (as_ + (cum[last] - as_))
    below = last + 1  # first position with q strictly lower
    has_below = below < k
    if not has_below.any():
        return base
    suffix_min_a = np.minimum.accumulate(as_[::-1])[::-1]
    amin = suffix_min_a[np.minimum(below, k - 1)]
    term = np.log1p(total / amin) + np.log1p((1.0 - qs[-1] / qs) * c)
    return max(base, float(term[has_below].max()))


def _common_shape(epsilon: float, total: int, n: np.ndarray, rates: np.ndarray) -> float:
    """Smallest common a with b_i = a / rate_i whose :func:`_epsilon_bound` is at most ``epsilon``."""

    def bound(a: float) -> float:
        q = n / (a / rates + 2.0 * n)
        return _epsilon_bound(float(total), np.full(n.shape[0], a), q)

    target = epsilon * (1.0 + 1e-12)
    lo = total / math.expm1(epsilon)
    if bound(lo) <= target:
        return lo
    hi = total / math.expm1(epsilon / 2.0)
    while bound(hi) > target:  # cannot happen in exact arithmetic; guards rounding
        hi *= 1.0 + 1e-9
    for _ in range(60):
        if hi / lo - 1.0 <= 1e-10:
            break
        mid = math.sqrt(lo * hi)
        if bound(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------- priors
def _prior_rates(
    prior: Any,
    table: CountTable,
    domain: np.ndarray,
    y: np.ndarray,
    n: np.ndarray,
    prior_epsilon: float | None,
    rng: RNGLike,
    owner: str,
) -> np.ndarray:
    """Prior mean rates lambda_0 on the domain."""
    var = None
    if isinstance(prior, str) and prior.lower().startswith("regional:"):
        var = prior.split(":", 1)[1]
    elif isinstance(prior, tuple) and len(prior) == 2 and str(prior[0]).lower() == "regional":
        var = str(prior[1])
    if var is None and prior_epsilon is not None:
        raise InvalidArgumentError(
            f"{owner}: prior_epsilon releases regional totals and applies to a regional prior only. Got prior={prior!r}."
        )
    if isinstance(prior, str) and prior.lower() == "national":
        return np.full(domain.shape[0], y.sum() / n.sum())
    if var is not None:
        pos = table._position(var)
        region = unravel(domain, table.shape)[:, pos]
        size = table.variables[pos].size
        y_reg = np.bincount(region, weights=y, minlength=size)
        n_reg = np.bincount(region, weights=n, minlength=size)
        if prior_epsilon is None:
            raise InvalidArgumentError(
                f"{owner}: regional rates over {var!r} computed from the confidential counts would shape the release "
                "outside any budget; pass prior_epsilon to release the regional totals with differential privacy, "
                "or give public prior rates (an array of rates)."
            )
        else:
            # the two-sided geometric mechanism (004 eq. 19: L1 sensitivity 2), drawn exactly
            pe = check_real(prior_epsilon, "prior_epsilon", owner, low=0.0, low_open=True)
            noise = DiscreteLaplace.for_epsilon(pe, 2).sample(size, rng=rng)
            y_reg = (y_reg.astype(np.int64) + noise).astype(float)
        rate_reg = np.maximum(y_reg, 0.5) / np.where(n_reg > 0, n_reg, 1.0)
        return rate_reg[region]
    if isinstance(prior, str):
        raise InvalidArgumentError(
            f"The 'prior' parameter of {owner} must be 'national', 'regional:VAR' or an array of rates. Got {prior!r}."
        )
    check_positive_values(prior, "prior", owner, table_allowed=True)
    return _per_cell(prior, "prior", domain, table)
