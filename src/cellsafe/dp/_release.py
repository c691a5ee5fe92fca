"""A differentially private synthesis release, planned from public choices: what it costs, what it shows.

:func:`plan_synthesis` is the statistics of ``cellsafe dp-synthesize`` as a library function: it
reads the records onto the public domain, decides how the total is released, checks the
populations and the prior, calibrates the synthesizer, and states the release's privacy loss
under the ledger's neighbour relation, before anything is drawn.  The command line parses, calls
it, charges :attr:`DPSynthesis.loss` to the ledger and writes what :meth:`DPSynthesis.implicates`
draws with :attr:`DPSynthesis.description`.

What a release may treat as public, and nothing else
----------------------------------------------------
* **The domain** (every category of every variable): given by the caller, never read from the
  records (:class:`cellsafe.Domain`).
* **The total.**  Under replace-one neighbours the number of records of the file is public (a
  neighbour replaces a record, it never adds one).  The total of a *part* of the records, or of
  the records left inside the domain by ``outside="drop"``, is not: a record may move from one
  part to another, or out of the domain, and an exact part total would tell neighbours apart with
  certainty.  Such a total is either **declared public** by the caller (``part_sizes``,
  ``public_total``: the neighbour relation is then restricted to records that stay in their part,
  or in the domain, and the release says so) or **released with noise** (``total_epsilon``: the
  two-sided geometric mechanism, and the synthesis run on the noisy total).  The choice is made
  from the arguments alone, never from the data.
* **The support** (the cells that can receive events): the domain, or the cells with a positive
  population in a public population file; never the rows a confidential export happens to list.
* **The prior**: the national rate (the public total over the public populations), public rates,
  or regional rates released with ``prior_epsilon``.

Privacy loss
------------
One implicate of the multinomial-Dirichlet synthesizer with released total z. and prior alpha
loses at most log(1 + z./alpha) under replace-one (004 eq. 5), and also when the records are one
more or one fewer at a fixed z.: the likelihood ratio of removing a record from cell i is
(W - 1) / (z. + W - 1) * (z_i + w_i - 1) / (w_i - 1), with w = y + alpha and W its sum, which lies
between 1 / (1 + z./alpha) and 1 + z./alpha.  So a release with a noisy total costs the total's
epsilon plus m times the synthesis' under either relation.  The Poisson-gamma synthesizer's bound
is proven for one event moving at a fixed total only, so it takes public totals only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import numpy as np

from .._privacy import ADD_REMOVE, REPLACE_ONE, PrivacyLoss, check_relation
from .._random import RNGLike, as_seed_sequence
from .._results import Result
from .._validation import check_in, check_integer, check_real
from ..exceptions import DataError, InvalidArgumentError
from ..table import CountTable, Domain, OUTSIDE_CHOICES

__all__ = ["DPSynthesis", "plan_synthesis", "SYNTHESIS_MECHANISMS"]

SYNTHESIS_MECHANISMS = ("multinomial-dirichlet", "poisson-gamma")
"""The fixed-total synthesizers :func:`plan_synthesis` releases."""

_TOTAL_POLICIES = ("public", "declared", "noisy")


@dataclass(frozen=True)
class DPSynthesis(Result):
    """A planned DP synthesis: the calibrated synthesizer, its privacy loss, and its public description.

    Attributes
    ----------
    mechanism : str
        "multinomial-dirichlet" or "poisson-gamma".
    synthesizer : Mechanism or None
        The calibrated synthesizer (None when the noisy total is 0: every implicate is empty).
    table : CountTable
        The confidential table on the public domain (never published).
    loss : PrivacyLoss
        What the whole release costs (total, prior and every implicate) under ``relation``.
    loss_per_implicate : PrivacyLoss
        One implicate's loss.
    m : int
        Number of implicates.
    released_total : int
        The total of every implicate: the exact total when public or declared, the noisy one otherwise.
    total_policy : {"public", "declared", "noisy"}
    part : tuple (variable, value) or None
    public_parts : bool
        The part's size was declared public (no record changes part): the ledger composes parts in parallel.
    description : dict
        The public description written with the release (no input name, hash, seed or dropped count).
    notices : tuple of str
        For the custodian (printed, never published): records left out, rows taken as zero, a heavy prior.
    custodian : dict
        Facts about the confidential data that go to the custodian's record only.
    """

    mechanism: str
    synthesizer: Any
    table: CountTable
    loss: PrivacyLoss
    loss_per_implicate: PrivacyLoss
    m: int
    relation: str
    released_total: int
    total_policy: str
    part: tuple[str, str] | None
    public_parts: bool
    description: dict[str, Any]
    notices: tuple[str, ...] = ()
    custodian: dict[str, Any] = field(default_factory=dict)

    def implicates(self, m: int | None = None, rng: RNGLike = None, progress: bool = False) -> Iterator[CountTable]:
        """Draw the implicates one at a time (each on the public domain, with the released total)."""
        m = self.m if m is None else check_integer(m, "m", "DPSynthesis.implicates", low=1)
        if self.synthesizer is None:  # a noisy total of 0: nothing to place
            empty = CountTable.from_sorted_cells(self.table, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
            return iter([empty] * m)
        total = None if self.total_policy != "noisy" else self.released_total
        return self.synthesizer.implicates(self.table, m, rng, progress=progress, total=total)

    def to_dict(self) -> dict[str, Any]:
        """The public description, the loss, and the notices for the custodian."""
        return {
            "description": self.description,
            "loss": self.loss.to_dict(),
            "public_parts": self.public_parts,
            "notices": list(self.notices),
        }

    def summary(self) -> str:
        """One line: mechanism, total, cells, and the loss."""
        return (
            f"{self.mechanism}: total {self.released_total:,} ({self.total_policy}) over {self.table.n_cells:,} cells; "
            f"epsilon {self.loss_per_implicate.epsilon:.4g} per implicate, {self.loss.epsilon:.4g} in total "
            f"({self.relation})"
        )


# ---------------------------------------------------------------------- the plan
def plan_synthesis(
    source: Any,
    domain: Domain,
    *,
    variables: "list[str] | None" = None,
    mechanism: str = "multinomial-dirichlet",
    epsilon: float,
    m: int = 1,
    count: str | None = None,
    outside: str = "error",
    relation: str = REPLACE_ONE,
    public_total: int | None = None,
    total_epsilon: float | None = None,
    part: "tuple[str, Any] | None" = None,
    part_sizes: "Mapping[Any, int] | None" = None,
    population: str | None = None,
    population_source: Any = None,
    prior: str = "national",
    prior_epsilon: float | None = None,
    prior_rates: "Mapping[Any, float] | None" = None,
    rng: RNGLike = None,
) -> DPSynthesis:
    """Plan a fixed-total DP synthesis from public choices; nothing is drawn but the noise of its totals.

    Parameters
    ----------
    source : DataFrame or path
        Records, or a frequency table with ``count`` (one row per cell with ``population``).
    domain : Domain
        The public categories of every variable (and of the partition variable with ``part``).
    variables : list of str, optional
        The variables synthesized (default: all the domain's, without the partition variable).
    mechanism : {"multinomial-dirichlet", "poisson-gamma"}
    epsilon : float
        The synthesis' budget for all ``m`` implicates (epsilon / m each, sequential composition).
    m : int, default 1
    count : str, optional
        The frequency column of ``source``.
    outside : {"error", "drop"}
        Records with a category outside the domain: refused, or left out (then the total is not
        public: give ``public_total`` or ``total_epsilon``).
    relation : {"replace-one", "add-remove"}
        The neighbour relation of the ledger the release is charged to.
    public_total : int, optional
        Declare the number of records inside the domain public (with ``outside="drop"``): the
        release is then refused unless it is the true number.
    total_epsilon : float, optional
        Release the total with two-sided geometric noise at this epsilon and synthesize the noisy
        total (multinomial-Dirichlet only); charged in addition to ``epsilon``.
    part : (variable, value), optional
        Synthesize only the records with this value of the partition variable (which must be in
        the domain with its public categories).
    part_sizes : mapping value -> int, optional
        The public size of every part: the part's total is released exactly (refused unless true)
        and, since no record may then change part, releases on different parts compose in parallel.
        Without it, a part needs ``total_epsilon`` and is charged in full.
    population : str, optional
        The population column (Poisson-gamma): of ``population_source`` when given (a public file:
        the support is its cells with a positive population, and rows missing from ``source`` are
        zero events), otherwise of ``source`` (which must then list every cell of the domain).
    population_source : DataFrame or path, optional
        Public populations, one row per cell.
    prior : "national" or "regional:VAR"
        Poisson-gamma prior rates.
    prior_epsilon : float, optional
        With a regional prior: release the regional totals with this epsilon (charged in addition).
    prior_rates : mapping category of VAR -> rate, optional
        With a regional prior: public rates instead (nothing charged).
    rng : None, int, SeedSequence, Generator or "secure"
        Randomness of the noisy totals (the implicates take their own).

    Returns
    -------
    DPSynthesis

    Examples
    --------
    >>> import pandas as pd
    >>> from cellsafe import Domain
    >>> records = pd.DataFrame({"sex": ["F", "M", "F", "F"], "age": ["y", "o", "o", "y"]})
    >>> d = Domain({"sex": ["F", "M"], "age": ["y", "o"]})
    >>> plan = plan_synthesis(records, d, epsilon=1.0, m=2)
    >>> plan.released_total, round(plan.loss.epsilon, 6), plan.total_policy
    (4, 1.0, 'public')
    >>> [int(t.total) for t in plan.implicates(rng=1)]
    [4, 4]
    """
    owner = "plan_synthesis"
    mech = check_in(mechanism, "mechanism", owner, SYNTHESIS_MECHANISMS)
    relation = check_relation(relation, owner)
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True, high_open=True)
    m = check_integer(m, "m", owner, low=1)
    outside = check_in(outside, "outside", owner, OUTSIDE_CHOICES)
    if not isinstance(domain, Domain):
        raise InvalidArgumentError(f"The 'domain' of {owner} must be a cellsafe.Domain (the public categories).")
    part_t = _check_part(part, domain, variables)
    names = list(variables) if variables is not None else [n for n in domain.names if part_t is None or n != part_t[0]]
    dom = domain.select(names)
    policy = _total_policy(mech, relation, outside, part_t, part_sizes, public_total, total_epsilon)
    _check_poisson_gamma_options(mech, population, population_source, prior, prior_epsilon, prior_rates)

    frame, count = _frame(source, names, count, part_t, population if population_source is None else None)
    notices: list[str] = []
    custodian: dict[str, Any] = {}
    if part_t is not None:
        var, value = part_t
        frame = frame[frame[var].astype(str) == value]
    kept, dropped = dom.restrict(frame, count=count, outside=outside) if len(frame) else (frame, 0)
    if dropped:
        notices.append(f"{dropped:,} record(s) outside the domain were left out; this number is not released.")
        custodian["records_left_out"] = int(dropped)
    table = _table_on(dom, kept, count)
    exact = int(table.total)
    custodian["total"] = exact

    root = as_seed_sequence(rng)
    total_rng, prior_rng = root.spawn(2)
    released, total_loss = exact, None
    if policy == "declared":
        if part_t is not None:
            assert part_sizes is not None  # the policy says so
            declared = int(part_sizes[part_t[1]])
        else:
            assert public_total is not None
            declared = int(public_total)
        if exact != declared:
            what = f"part {part_t[0]}={part_t[1]}" if part_t is not None else "the domain"
            raise DataError(
                f"{what} holds {exact:,} records, not the {declared:,} declared public: a declared total must be the "
                "true one (correct the declared sizes, or release a noisy total instead)."
            )
    elif policy == "noisy":
        released, total_loss = _noisy_total(exact, total_epsilon, relation, total_rng)  # type: ignore[arg-type]

    pop_table, support_note = None, None
    if mech == "poisson-gamma" and population is not None:
        pop_table, support_note = _populations(dom, kept, count, population, population_source, table)
        if support_note:
            notices.append(support_note)

    eps_each = eps / m
    synth, info, prior_desc, prior_loss = None, {}, None, None
    if released > 0:
        if mech == "multinomial-dirichlet":
            from ..mechanisms import MultinomialDirichletSynthesizer

            synth = MultinomialDirichletSynthesizer.for_epsilon(eps_each, released)
            info = {"alpha": synth.alpha}
            per = PrivacyLoss.pure(synth.epsilon(released), relation)
        else:
            synth, info, prior_desc, prior_loss = _poisson_gamma(
                eps_each, table, pop_table, prior, prior_epsilon, prior_rates, relation, prior_rng, dom
            )
            per = synth.privacy_loss(relation, table=table)
        weight = _prior_note(synth, table)
        if weight:
            notices.append(weight)
    else:  # charged as planned: the cost never depends on what the noise gave
        per = PrivacyLoss.pure(eps_each, relation)
        notices.append("the noisy total is 0: every implicate is empty.")
    parts = [x for x in (total_loss, prior_loss) if x is not None] + [per] * m
    loss = PrivacyLoss.sequential(parts)
    public_parts = part_t is not None and policy == "declared"
    description = _description(
        mech, dom, names, m, per, loss, relation, released, policy, total_epsilon, total_loss, part_t, public_parts,
        outside, info, prior_desc, synth, table, pop_table, population_source is not None,
    )
    return DPSynthesis(
        mech, synth, table, loss, per, m, relation, released, policy, part_t, public_parts, description,
        tuple(notices), custodian,
    )


# ---------------------------------------------------------------------- the choices, from the arguments alone
def _check_part(part: Any, domain: Domain, variables: Any) -> tuple[str, str] | None:
    if part is None:
        return None
    if not (isinstance(part, (tuple, list)) and len(part) == 2):
        raise InvalidArgumentError(f"'part' must be (variable, value), for example ('region', 'N'). Got {part!r}.")
    var, value = str(part[0]), str(part[1])
    if var not in domain.names:
        raise DataError(
            f"the partition variable {var!r} is not in the domain: list it with its public categories (a part's name "
            "must be public, and so must the set of parts)."
        )
    if value not in {str(c) for c in domain[var].categories}:
        raise DataError(f"part {var}={value!r} is not a category of {var!r} in the domain.")
    if variables is not None and var in variables:
        raise InvalidArgumentError(f"the partition variable {var!r} cannot also be synthesized.")
    return var, value


def _total_policy(mech: str, relation: str, outside: str, part: Any, part_sizes: Any, public_total: Any,
                  total_epsilon: Any) -> str:
    if total_epsilon is not None:
        check_real(total_epsilon, "total_epsilon", "plan_synthesis", low=0.0, low_open=True, high_open=True)
        if public_total is not None or part_sizes is not None:
            raise InvalidArgumentError("give a noisy total (total_epsilon) or a declared one (public_total, part_sizes), not both.")
        if mech == "poisson-gamma":
            raise InvalidArgumentError(
                "the Poisson-gamma synthesizer's guarantee is proven for a public total only; release a noisy total "
                "with multinomial-dirichlet, or declare the total public (--part-sizes / --public-total)."
            )
        return "noisy"
    if relation == ADD_REMOVE:
        raise InvalidArgumentError(
            "under add-remove neighbours the number of records is not public, and the fixed-total synthesizers release "
            "it: release the total with noise (total_epsilon / --total-epsilon, multinomial-dirichlet), or charge a "
            "replace-one ledger."
        )
    if part is not None:
        if public_total is not None:
            raise InvalidArgumentError("a part's public size is declared with part_sizes (--part-sizes), not public_total.")
        if part_sizes is None:
            raise InvalidArgumentError(
                f"the size of part {part[0]}={part[1]} is not public (a record may move between parts, and an exact "
                "part total tells the neighbours apart): declare every part's size public (part_sizes / --part-sizes "
                "FILE; no record may then change part) or release a noisy total (total_epsilon / --total-epsilon)."
            )
        if part[1] not in {str(k) for k in part_sizes}:
            raise DataError(f"the declared part sizes do not list part {part[0]}={part[1]}.")
        for k, v in part_sizes.items():
            check_integer(v, f"part size of {k!r}", "plan_synthesis", low=0)
        return "declared"
    if part_sizes is not None:
        raise InvalidArgumentError("part_sizes (--part-sizes) declare the sizes of parts: give part (--part VAR=VALUE) too.")
    if public_total is not None:
        check_integer(public_total, "public_total", "plan_synthesis", low=0)
        return "declared"
    if outside == "drop":
        raise InvalidArgumentError(
            "with outside='drop' the released total tells anyone who knows the file's size how many records were "
            "left out: declare the number of records inside the domain public (public_total / --public-total) or "
            "release it with noise (total_epsilon / --total-epsilon)."
        )
    return "public"


def _check_poisson_gamma_options(mech: str, population: Any, population_source: Any, prior: Any,
                                 prior_epsilon: Any, prior_rates: Any) -> None:
    prior_s = (prior or "national").lower() if isinstance(prior, str) else prior
    if mech != "poisson-gamma":
        if population is not None or population_source is not None or prior_s != "national" or prior_rates is not None:
            raise InvalidArgumentError("populations and priors apply to the poisson-gamma mechanism only.")
        return
    if population_source is not None and population is None:
        raise InvalidArgumentError("a population file needs the name of its population column.")
    regional = isinstance(prior_s, str) and prior_s.startswith("regional:")
    if not isinstance(prior_s, str) or (prior_s != "national" and not regional):
        raise InvalidArgumentError(f"the prior must be 'national' or 'regional:VAR'. Got {prior!r}.")
    if regional and prior_epsilon is None and prior_rates is None:
        raise InvalidArgumentError(
            "a regional prior computed from the confidential counts would shape the release outside any budget: "
            "release the regional totals with prior_epsilon (--prior-epsilon) or give public rates (prior_rates, "
            "--prior-file)."
        )
    if regional and prior_epsilon is not None and prior_rates is not None:
        raise InvalidArgumentError("give the regional prior's epsilon or its public rates, not both.")
    if not regional and (prior_epsilon is not None or prior_rates is not None):
        raise InvalidArgumentError("prior_epsilon and prior_rates apply to a regional prior ('regional:VAR') only.")


# ---------------------------------------------------------------------- reading onto the domain
def _frame(source: Any, names: list[str], count: str | None, part: Any, population: str | None) -> tuple[Any, str | None]:
    """The records (or cells) with the columns the plan needs, and the count column."""
    from .._frames import as_pandas

    extra = ([part[0]] if part is not None else []) + ([population] if population else [])
    if isinstance(source, (str,)) or hasattr(source, "__fspath__"):
        from ..io import aggregate_file, read_records

        if population:
            frame = read_records(source)
        else:
            return aggregate_file(source, names + extra, count)
    else:
        frame = as_pandas(source, "source")
    missing = [c for c in names + extra + ([count] if count else []) if c not in frame.columns]
    if missing:
        raise DataError(f"column {missing[0]!r} is not in the input: columns {list(map(str, frame.columns))}.")
    return frame, count


def _table_on(dom: Domain, frame: Any, count: str | None) -> CountTable:
    """The confidential table on the domain's public variables (an empty part gives an empty table)."""
    if not len(frame):
        return CountTable(list(dom.variables), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    return dom.adopt(CountTable.from_frame(frame, list(dom.variables), count=count))


def _noisy_total(exact: int, epsilon: float, relation: str, rng: Any) -> tuple[int, PrivacyLoss]:
    """max(0, total + N), N two-sided geometric at ``epsilon`` (sensitivity 1: one record in or out)."""
    from ..distributions import DiscreteLaplace
    from ..mechanisms import GeometricNoise

    noise = int(DiscreteLaplace.for_epsilon(epsilon, 1).sample(1, rng=rng)[0])
    loss = PrivacyLoss.pure(GeometricNoise(epsilon).guaranteed_epsilon, relation)
    return max(0, exact + noise), loss


def _populations(dom: Domain, kept: Any, count: Any, population: str, source: Any,
                 table: CountTable) -> tuple[CountTable, str | None]:
    """The population table on the domain, and a notice; the support never depends on the rows the input lists."""
    note = None
    if source is None:
        listed = _table_on(dom, kept[[*dom.names]], None)
        k = dom.n_cells - table.n_structural_zeros
        if listed.nnz < k:
            idx = listed.index
            gap = int(np.flatnonzero(idx != np.arange(idx.size))[0]) if np.any(idx != np.arange(idx.size)) else idx.size
            raise DataError(
                f"{k - listed.nnz:,} of the {k:,} cells of the domain have no row in the input (for example "
                f"{listed.describe_cells([gap])[0]}): which rows a confidential export lists can disclose which cells "
                "have no events. List every cell of the domain with its population (0 events where there are none), "
                "or give the populations as a public file (--population-file)."
            )
        pop = dom.adopt(CountTable.from_frame(kept, list(dom.variables), count=population, allow_fractional=True))
    else:
        from .._frames import as_pandas

        if isinstance(source, (str,)) or hasattr(source, "__fspath__"):
            from ..io import read_records

            frame = read_records(source)
        else:
            frame = as_pandas(source, "population_source")
        missing = [c for c in [*dom.names, population] if c not in frame.columns]
        if missing:
            raise DataError(f"column {missing[0]!r} is not in the population file: columns {list(map(str, frame.columns))}.")
        frame, _ = dom.restrict(frame, outside="error")
        pop = dom.adopt(CountTable.from_frame(frame, list(dom.variables), count=population, allow_fractional=True))
        rows = _table_on(dom, kept[[*dom.names]], None) if len(kept) else None
        absent = int(pop.nnz - (0 if rows is None else np.isin(pop.index, rows.index, assume_unique=True).sum()))
        if absent:
            note = (
                f"{absent:,} of the {pop.nnz:,} cells with a population have no row in the input: taken as 0 events "
                "(the support comes from the public population file, never from the rows listed)."
            )
    over = np.flatnonzero(table.counts > pop.lookup(table.index))
    if over.size:
        cell = table.index[over[:1]]
        raise DataError(
            f"cell ({table.describe_cells(cell)[0]}) has {int(table.counts[over[0]]):,} events but a population of "
            f"{float(pop.lookup(cell)[0]):,g}; a cell cannot count more events than people. Check the count and "
            "population columns."
        )
    return pop, note


def _poisson_gamma(eps_each: float, table: CountTable, pop: Any, prior: Any, prior_epsilon: Any, prior_rates: Any,
                   relation: str, rng: Any, dom: Domain) -> tuple[Any, dict[str, Any], dict[str, Any], Any]:
    from ..mechanisms import GeometricNoise, PoissonGammaSynthesizer

    prior_s = (prior or "national").lower()
    prior_loss = None
    if prior_s == "national":
        arg: Any = "national"
        desc: dict[str, Any] = {"kind": "national", "from": "the public total over the public populations"}
    else:
        var = prior.split(":", 1)[1]
        if var not in dom.names:
            raise DataError(f"the regional prior's variable {var!r} is not among the synthesized variables {dom.names}.")
        if prior_rates is not None:
            arg = _rates_per_cell(dom, var, prior_rates)
            desc = {"kind": "regional", "variable": var, "from": "public rates"}
        else:
            arg = f"regional:{var}"
            pe = check_real(prior_epsilon, "prior_epsilon", "plan_synthesis", low=0.0, low_open=True, high_open=True)
            # the regional totals move by 1 in two regions when one record moves: L1 sensitivity 2 (004 eq. 19)
            prior_loss = PrivacyLoss.pure(GeometricNoise(pe, sensitivity=2).guaranteed_epsilon, relation)
            desc = {"kind": "regional", "variable": var, "from": "regional totals released with noise", "epsilon": pe}
    synth = PoissonGammaSynthesizer.for_epsilon(
        eps_each, table, population=pop, prior=arg, prior_epsilon=prior_epsilon if prior_rates is None else None, rng=rng
    )
    info = {"a": float(np.min(synth.a)), "b_min": float(np.min(synth.b)), "b_max": float(np.max(synth.b))}
    return synth, info, desc, prior_loss


def _rates_per_cell(dom: Domain, var: str, rates: Mapping[Any, float]) -> np.ndarray:
    """Public regional rates, one per category of ``var``, spread over every cell of the domain."""
    v = dom[var]
    by = {str(k): r for k, r in rates.items()}
    values = []
    for c in v.categories:
        r = by.get(str(c))
        if r is None or isinstance(r, bool) or not isinstance(r, (int, float)) or not (0 < float(r) < math.inf):
            raise DataError(f"the public prior rates need a positive rate for {var}={c!r}. Got {r!r}.")
        values.append(float(r))
    pos = dom.names.index(var)
    sizes = [w.size for w in dom.variables]
    stride = int(np.prod(sizes[pos + 1:], dtype=np.int64))
    codes = (np.arange(dom.n_cells, dtype=np.int64) // stride) % v.size
    return np.asarray(values)[codes]


def _prior_note(synth: Any, table: CountTable) -> str | None:
    from ._prior import prior_weight

    if table.total <= 0:
        return None
    weight = prior_weight(synth, table)
    if not weight.prior_dominates:
        return None
    return (
        f"the prior weighs {weight.prior:,.0f} pseudo-records against {weight.data:,} records: the release is mostly "
        f"prior (Hellinger utility of the expected release {weight.utility:.2f}; 1 is the data itself). Spend more "
        "epsilon per implicate (fewer implicates), or use fewer cells."
    )


def _description(mech: str, dom: Domain, names: list[str], m: int, per: PrivacyLoss, loss: PrivacyLoss,
                 relation: str, released: int, policy: str, total_epsilon: Any, total_loss: Any, part: Any,
                 public_parts: bool, outside: str, info: dict[str, Any], prior_desc: Any, synth: Any,
                 table: CountTable, pop: Any, public_population: bool) -> dict[str, Any]:
    """What may be published with the release: public choices and values computed from public inputs."""
    if pop is not None:
        support = {"cells": int(pop.nnz), "from": "the public population file" if public_population
                   else "the populations of every cell of the domain (declared public)"}
    else:
        support = {"cells": int(table.n_cells - table.n_structural_zeros), "from": "the domain"}
    n_categories = sum(v.size for v in dom.variables)
    domain = {"sha256": dom.sha256, "sizes": {v.name: v.size for v in dom.variables}}
    if n_categories <= 10_000:
        domain["categories"] = dom.to_dict()
    return {
        "mechanism": mech,
        "relation": relation,
        "implicates": m,
        "epsilon_per_implicate": per.epsilon,
        "epsilon_total": loss.epsilon,
        "loss": loss.to_dict(),
        "total": released,
        "total_policy": {
            "public": "the number of records (public under replace-one neighbours)",
            "declared": "declared public by the data holder (no record changes part or leaves the domain)",
            "noisy": "released with two-sided geometric noise",
        }[policy],
        "total_epsilon": None if total_loss is None else total_loss.epsilon,
        "part": None if part is None else {
            "variable": part[0], "value": part[1], "sizes": "public" if public_parts else "not public (noisy total)",
            "composition": "parallel" if public_parts else "sequential",
        },
        "outside": outside,
        "support": support,
        "prior": prior_desc,
        "prior_epsilon": None if not prior_desc or "epsilon" not in prior_desc else prior_desc["epsilon"],
        "parameters": info,
        "cells": int(table.n_cells),
        "variables": names,
        "domain": domain,
        "domain_sha256": dom.sha256,
    }
