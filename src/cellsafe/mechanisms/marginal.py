"""Differentially private synthesis from measured marginals: MST and AIM on a public domain.

Full-table synthesis perturbs every cell of the cross-classification, and on ten variables the
noise drowns the data.  A marginal synthesizer measures a few low-dimensional marginals with
noise, fits the graphical model that best explains them (:mod:`cellsafe.fitting.graphical`), and
draws records from that model: the data are read only through the marginals (counted by DuckDB
from a file, by Spark, or summed from a sparse table), and nothing ever builds the full table.

- ``selection="mst"`` (:class:`MSTSynthesizer`): MST, the winner of the 2018 NIST challenge
  (McKenna, Miklau and Sheldon 2021): one-way marginals, a spanning tree of pairs chosen
  privately, the pairs measured.
- ``selection="aim"`` (:class:`AIMSynthesizer`): AIM (McKenna, Mullins, Sheldon and Miklau, VLDB
  2022): rounds that choose the worst-fitted marginal of a workload (all ``degree``-way
  marginals), within a model size that grows with the budget spent.

Budget.  The guarantee is rho-zCDP, with rho the largest value whose zCDP implies the given
(epsilon, delta)-DP by Canonne, Kamath and Steinke's conversion (the one MST and AIM use), under
the neighbour relation given (``relation``).  Measurements add exact discrete Gaussian noise
(Canonne, Kamath and Steinke 2020), selections use an exact exponential mechanism charged
epsilon^2 / 8 (Cesar and Rogers 2021).  The split: MST spends 20% of rho on the one-way marginals,
10% on the d - 1 selections and the rest on the d - 1 pairs (its authors split in thirds; the
pairs carry their one-way marginals too, and on Adult the larger share lowers the error of the
1-3-way marginals by 1-4%); AIM spends, per round, 90% of
its share on the measurement and 10% on the selection, its one-way marginals come first at the
rounds' measurement noise, and its last round spends what is left.  :attr:`MarginalRelease.steps`
lists every step with its rho; they add up to the budget (never above it).

Public.  The domain (every category, every bin edge) and the parameters are public; the number
of synthetic records is the total estimated from the noisy marginals, never the exact count.
Implicates (``m``) are further draws from the one fitted model: post-processing, at no extra cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Sequence

import numpy as np

from .._frames import pd
from .._params import Param
from .._privacy import cdp_rho
from .._random import RNGLike, as_seed_sequence, stream
from .._registry import register
from .._results import Result
from ..exceptions import InvalidArgumentError
from ..fitting.graphical import GraphicalModel
from ..table import INDEX_DTYPE, CountTable, Domain, Variable, public_table
from ._base import Mechanism
from ._marginal_source import MarginalSource, marginal_source
from ._marginal_steps import Compression, PrivacyStep, run_aim, run_mst

__all__ = ["MarginalSynthesizer", "MSTSynthesizer", "AIMSynthesizer", "MarginalRelease", "RELATIONS"]

ADD_REMOVE = "add-remove"
REPLACE_ONE = "replace-one"
RELATIONS = (REPLACE_ONE, ADD_REMOVE)

_SELECTIONS: dict[str, type] = {}
_PURPOSE = {"select": 0x53454C, "measure": 0x4D4541, "draw": 0x445257}  # "SEL", "MEA", "DRW"


@dataclass(frozen=True)
class MarginalRelease(Result):
    """What a marginal synthesizer released, and what it spent.

    Attributes
    ----------
    names : tuple of str
        The variables, in the domain's order.
    categories : tuple of tuple
        The public categories (bin labels for binned variables) of each variable.
    records : tuple of ndarray
        Each implicate's synthetic records as category codes, shape (n, d).
    steps : tuple of PrivacyStep
        Every measurement and selection, with its rho (attribute indices in ``names`` order).
    model : GraphicalModel
        The fitted model (on merged categories where MST merged rare ones).
    rho : float
        The zCDP budget (the steps' rho add up to at most this).
    relation : str
        The neighbour relation the budget holds under.
    n_outside : int
        Records left out of the domain (``outside="drop"``).  Confidential: for the data holder,
        never part of a release.
    """

    names: tuple[str, ...]
    categories: tuple[tuple[Any, ...], ...]
    records: tuple[np.ndarray, ...] = field(repr=False)
    steps: tuple[PrivacyStep, ...] = field(repr=False)
    model: GraphicalModel = field(repr=False)
    compression: Compression = field(repr=False)
    rho: float = 0.0
    relation: str = REPLACE_ONE
    selection: str = "mst"
    n_outside: int = 0

    @property
    def rho_spent(self) -> float:
        """The sum of the steps' rho (at most :attr:`rho`)."""
        return float(sum(s.rho for s in self.steps))

    @property
    def measured(self) -> list[tuple[str, ...]]:
        """The marginals measured, as variable names."""
        return [tuple(self.names[a] for a in s.attrs) for s in self.steps if s.kind == "measure"]

    def to_frame(self, implicate: int = 0) -> pd.DataFrame:
        """The synthetic records of one implicate, with the public categories."""
        codes = self.records[implicate]
        return pd.DataFrame(
            {n: pd.Categorical.from_codes(codes[:, j], categories=list(cats)) for j, (n, cats) in
             enumerate(zip(self.names, self.categories))}
        )

    def to_table(self, implicate: int = 0) -> CountTable:
        """The synthetic records of one implicate counted on the full domain (a sparse table)."""
        return _records_table(self.records[implicate], self.names, self.categories)

    def to_dict(self) -> dict[str, Any]:
        """The public description: mechanism, budget, every step (no confidential count)."""
        return {
            "selection": self.selection,
            "relation": self.relation,
            "rho": self.rho,
            "rho_spent": self.rho_spent,
            "records": [int(r.shape[0]) for r in self.records],
            "steps": [
                {"kind": s.kind, "marginal": [self.names[a] for a in s.attrs], "rho": s.rho,
                 **({"sigma": s.sigma} if s.kind == "measure" else {"epsilon": s.epsilon})}
                for s in self.steps
            ],
            "model_cells": int(self.model.tree.n_cells),
            "model_cliques": [[self.names[a] for a in c] for c in self.model.cliques],
        }


def _records_table(codes: np.ndarray, names: Sequence[str], categories: Sequence[Sequence[Any]]) -> CountTable:
    variables = [Variable(n, tuple(c)) for n, c in zip(names, categories)]
    shape = [len(c) for c in categories]
    if codes.shape[0] == 0:
        return CountTable(variables, np.zeros(0, INDEX_DTYPE), np.zeros(0, np.int64))
    flat = np.ravel_multi_index(tuple(codes[:, j] for j in range(codes.shape[1])), shape)
    idx, cnt = np.unique(flat, return_counts=True)
    return CountTable(variables, idx.astype(INDEX_DTYPE), cnt.astype(np.int64))


class MarginalSynthesizer(Mechanism[CountTable]):
    """Synthetic records from noisy marginals (MST or AIM), with rho-zCDP on a public domain.

    Parameters
    ----------
    epsilon : float
        The (epsilon, delta)-DP target of the whole release (all implicates), > 0.
    delta : float, default 1e-9
        In (0, 1).
    selection : {"mst", "aim"}, default "mst"
        Which marginals are measured (see the module notes); ``MarginalSynthesizer(selection="aim")``
        is an :class:`AIMSynthesizer`.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation the budget holds under: one record replaced (the total fixed), or
        one record added or removed (as MST and AIM state it).  Replace-one doubles each
        measurement's squared sensitivity and each selection's sensitivity.

    Notes
    -----
    See :mod:`cellsafe.mechanisms.marginal`.  ``sample(table, m, rng)`` measures the table's
    marginals once and returns ``m`` synthetic tables drawn from the one fitted model;
    :meth:`release` does the same from records (a file, a frame or a table) and returns the
    records with every step's privacy cost.

    Examples
    --------
    >>> import cellsafe
    >>> d = cellsafe.Domain({"a": ["x", "y"], "b": ["u", "v", "w"], "c": ["p", "q"]})
    >>> t = cellsafe.CountTable(list(d.variables), [0, 4, 7, 11], [400, 300, 200, 100])
    >>> synth = cellsafe.MarginalSynthesizer(epsilon=2.0, selection="mst")
    >>> [s] = synth.sample(t, rng=1)
    >>> abs(int(s.total) - 1000) < 100
    True
    >>> round(synth.rho, 5)
    0.05613
    """

    selection = "mst"
    _params: ClassVar[tuple[Param, ...]] = ()
    _integer_counts = True

    def __new__(cls, *args: Any, selection: str | None = None, **kwargs: Any) -> "MarginalSynthesizer":
        if cls is MarginalSynthesizer:
            key = "mst" if selection is None else selection
            if key not in _SELECTIONS:
                raise InvalidArgumentError(
                    f"The 'selection' parameter of MarginalSynthesizer must be one of {', '.join(map(repr, _SELECTIONS))}. "
                    f"Got {selection!r} instead."
                )
            cls = _SELECTIONS[key]
        return object.__new__(cls)

    def _init_budget(self, epsilon: float, delta: float, relation: str, selection: str | None) -> None:
        if selection is not None and selection != self.selection:
            raise InvalidArgumentError(f"{type(self).__name__} has selection {self.selection!r}, not {selection!r}.")
        self.epsilon = epsilon
        self.delta = delta
        self.relation = relation

    @property
    def rho(self) -> float:
        """The zCDP budget: the largest rho whose zCDP implies (epsilon, delta)-DP (Canonne-Kamath-Steinke)."""
        return cdp_rho(self.epsilon, self.delta)

    def privacy_loss(self, relation: str = REPLACE_ONE, *, table: Any = None, delta: float | None = None) -> Any:
        """The release's loss under ``relation`` (the protocol of :class:`cellsafe.mechanisms.DPMechanism`).

        ``rho`` under the relation the noise was calibrated for, and under add-remove (whose
        neighbours change every marginal and score less than a replacement does); four times
        ``rho`` under replace-one for a release calibrated to add-remove (zCDP's group privacy: a
        replacement is a removal and an addition).  (epsilon, delta) at ``delta`` by the
        conversion of Canonne, Kamath and Steinke.
        """
        from .._privacy import PrivacyLoss, check_relation

        relation = check_relation(relation, f"{type(self).__name__}.privacy_loss")
        rho = self.rho if relation == self.relation or relation == ADD_REMOVE else 4.0 * self.rho
        return PrivacyLoss.zcdp(rho, relation, delta)

    @property
    def _sensitivities(self) -> tuple[float, float]:
        """(squared L2 sensitivity of a marginal, sensitivity of an L1 quality score)."""
        return (2.0, 2.0) if self.relation == REPLACE_ONE else (1.0, 1.0)

    def _run(self, source: MarginalSource, root: Any, progress: bool) -> Any:
        raise NotImplementedError

    def expected_plan(self, data: Any, domain: Domain | None = None, **kwargs: Any) -> Any:
        """The run without noise: what would be measured at which sigma, and the model fitted to exact marginals.

        Every selection takes the best candidate and every measurement is exact, with the sigma
        the noise would have; the model is the maximum-entropy model of the chosen structure.  For
        the a priori assessment (:func:`cellsafe.apriori.marginal_error`), which reads the
        confidential data: never a release.
        """
        source = marginal_source(data, domain, **kwargs)
        return self._run(source, None, False)

    # ------------------------------------------------------------------ releases
    def release(
        self,
        data: Any,
        domain: Domain | None = None,
        *,
        names: Sequence[str] | None = None,
        count: str | None = None,
        outside: str = "error",
        m: int = 1,
        rows: int | None = None,
        rng: RNGLike = None,
        method: str = "round",
        progress: bool = False,
    ) -> MarginalRelease:
        """Measure, fit and draw ``m`` sets of synthetic records.

        Parameters
        ----------
        data : CountTable, path to a CSV or Parquet file, DataFrame, or MarginalSource
            The confidential records (a file is counted by DuckDB; only marginals are read).
        domain : Domain
            The public categories and bins (required for records; a table must be on it).
        names : sequence of str, optional
            The variables (default all of the domain's, or the table's).
        count : str, optional
            Frequency column of ``data``.
        outside : {"error", "drop"}
            Records outside the domain.
        m : int, default 1
            Implicates: independent draws from the one fitted model (no extra privacy cost).
        rows : int, optional
            Records per implicate (default: the total estimated from the noisy marginals).
        rng : None, int, SeedSequence, Generator or "secure"
        method : {"round", "sample"}
            How records are drawn from the model (:meth:`GraphicalModel.sample_records`).
        progress : bool
            A progress bar over AIM's rounds.
        """
        if isinstance(data, CountTable) and domain is None:
            public_table(data, None, type(self).__name__)  # categories read from the records are refused
        source = marginal_source(data, domain, names, count=count, outside=outside)
        m = int(m)
        if m < 1:
            raise InvalidArgumentError(f"m must be at least 1. Got {m}.")
        root = as_seed_sequence(rng)
        plan = self._run(source, root, progress)
        if domain is not None:
            cats = tuple(tuple(domain[n].categories) for n in source.names)
        elif isinstance(data, CountTable):
            cats = tuple(tuple(v.categories) for v in data.variables)
        else:
            cats = tuple(tuple(range(s)) for s in source.sizes)
        records = []
        for i in range(m):
            gen = stream(root, _PURPOSE["draw"], i)
            codes = plan.model.sample_records(rows, rng=gen, method=method)
            records.append(plan.compression.expand(codes, gen))
        return MarginalRelease(
            tuple(source.names), cats, tuple(records), tuple(plan.steps), plan.model, plan.compression,
            self.rho, self.relation, self.selection, int(source.n_outside),
        )

    def plan(self, data: Any, domain: Domain, *, names: Sequence[str] | None = None, count: str | None = None,
             outside: str = "error", rows: int | None = None, delta: float | None = None) -> "MarginalPlan":
        """A release to be charged, then drawn: its privacy loss is known before the data are read.

        The command line reserves :attr:`MarginalPlan.loss` in the ledger, then calls
        :meth:`MarginalPlan.implicates`, which measures, fits and draws.
        """
        return MarginalPlan(self, data, domain, names, count, outside, rows, delta)

    def sample(self, table: CountTable, m: int = 1, rng: RNGLike = None, *, domain: Domain | None = None,
               progress: bool = False) -> list[CountTable]:
        """``m`` synthetic tables of ``table`` on its public domain (``domain=``, or the table's own public variables).

        A table counted from records has its categories from the records and is refused, as by
        every DP mechanism (:class:`cellsafe.mechanisms.DPMechanism`).
        """
        if isinstance(table, CountTable):
            table = public_table(table, domain, type(self).__name__)
        return super().sample(table, m, rng, progress=progress)

    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[CountTable]:
        """``m`` synthetic tables (records counted on the table's cells) from one measurement of ``table``.

        Records that fall in a structural zero of ``table`` (an impossible combination, public) are
        drawn again from the model until none does (post-processing: no privacy cost).
        """
        root = as_seed_sequence(rng)
        rel = self.release(table, m=m, rng=stream(root, 0), progress=progress)
        out = []
        for i in range(m):
            codes = rel.records[i]
            if table.n_structural_zeros:
                codes = _avoid_structural_zeros(codes, table, rel, stream(root, 1, i))
            out.append(_on_table(codes, table))
        return out


class MarginalPlan:
    """One marginal release, planned: its loss now, its records when :meth:`implicates` runs.

    Attributes
    ----------
    synthesizer : MarginalSynthesizer
    loss : PrivacyLoss
        rho-zCDP under the synthesizer's relation, with the (epsilon, delta) it implies at ``delta``
        (the synthesizer's delta by default); the same for any number of implicates.
    notices : list of str
        Lines for the data holder (records left out of the domain), filled by :meth:`implicates`.
    description : dict
        The public description (mechanism, parameters, budget, every step's rho once run).
    """

    def __init__(self, synth: "MarginalSynthesizer", data: Any, domain: Domain, names: Sequence[str] | None,
                 count: str | None, outside: str, rows: int | None, delta: float | None) -> None:
        self.synthesizer = synth
        self._args = (data, domain, names, count, outside, rows)
        self.delta = synth.delta if delta is None else float(delta)
        self.notices: list[str] = []
        self.release: MarginalRelease | None = None
        dom = domain.select(list(names)) if names is not None else domain
        self._domain_sha = dom.sha256

    @property
    def loss(self) -> Any:
        return self.synthesizer.privacy_loss(self.synthesizer.relation, delta=self.delta)  # type: ignore[attr-defined]  # DPMechanism's (dp), next

    @property
    def description(self) -> dict[str, Any]:
        s = self.synthesizer
        out: dict[str, Any] = {"mechanism": s.selection, "parameters": {k: v for k, v in s.get_params().items()},
                               "relation": s.relation, "rho": s.rho, "delta": self.delta,
                               "epsilon": float(self.loss.epsilon), "domain_sha256": self._domain_sha}
        if self.release is not None:
            d = self.release.to_dict()
            out.update({"rho_spent": d["rho_spent"], "records": d["records"], "steps": d["steps"],
                        "model_cliques": d["model_cliques"]})
        return out

    def implicates(self, m: int, rng: RNGLike, progress: bool = False) -> Iterator[Any]:
        """Measure, fit, then yield ``m`` frames of synthetic records (the implicates cost nothing more)."""
        data, domain, names, count, outside, rows = self._args
        rel = self.synthesizer.release(data, domain, names=names, count=count, outside=outside, m=m, rows=rows,
                                       rng=rng, progress=progress)
        self.release = rel
        if rel.n_outside:
            self.notices.append(f"{rel.n_outside:,} record(s) outside the domain were left out (--outside drop); "
                                "this number is not released.")
        for i in range(m):
            yield rel.to_frame(i)

    def summary(self) -> str:
        s = self.synthesizer
        return (f"{s.selection}: rho {s.rho:.6g} ({s.relation}), epsilon {float(self.loss.epsilon):.4g} at delta "
                f"{self.delta:g}")


def _flat(codes: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    if codes.shape[0] == 0:
        return np.zeros(0, dtype=INDEX_DTYPE)
    return np.ravel_multi_index(tuple(codes[:, j] for j in range(codes.shape[1])), tuple(shape)).astype(INDEX_DTYPE)


def _avoid_structural_zeros(codes: np.ndarray, table: CountTable, rel: "MarginalRelease", gen: Any) -> np.ndarray:
    codes = codes.copy()
    for _ in range(1000):
        bad = np.flatnonzero(np.isin(_flat(codes, table.shape), table.structural_zeros))
        if not bad.size:
            return codes
        fresh = rel.model.sample_records(bad.size, rng=gen, method="sample")
        codes[bad] = rel.compression.expand(fresh, gen)
    raise InvalidArgumentError(
        "the fitted model keeps putting records in structural zeros; check that the structural zeros leave "
        "possible cells for the measured marginals."
    )


def _on_table(codes: np.ndarray, table: CountTable) -> CountTable:
    idx, cnt = np.unique(_flat(codes, table.shape), return_counts=True)
    sz = table.structural_zeros
    return CountTable(list(table.variables), idx.astype(INDEX_DTYPE), cnt.astype(np.int64), sz if sz.size else None)


def _common_params(doc_eps: str) -> tuple[Param, ...]:
    return (
        Param("epsilon", low=0.0, low_open=True, scan=(0.01, 10.0), log=True, doc=doc_eps),
        Param("delta", low=0.0, high=1.0, low_open=True, high_open=True, default=1e-9,
              doc="delta of the (epsilon, delta)-DP target"),
        Param("relation", kind="choice", choices=RELATIONS, default=REPLACE_ONE,
              doc="neighbour relation of the budget: one record replaced, or added/removed"),
    )


@register("mechanism", "mst")
class MSTSynthesizer(MarginalSynthesizer):
    """MST: one-way marginals, a privately chosen spanning tree of pairs, its pairs measured.

    Parameters
    ----------
    epsilon, delta, relation
        As for :class:`MarginalSynthesizer`.
    compress : bool, default True
        Merge the categories whose noisy one-way count is below 3 sigma before the pairs are chosen
        and measured (MST's domain compression); merged records get back a category drawn in
        proportion to the noisy one-way counts.
    """

    selection = "mst"
    _params = _common_params("(epsilon, delta)-DP target of the release") + (
        Param("compress", kind="choice", choices=(True, False), default=True,
              doc="merge categories with small noisy counts before measuring pairs"),
    )

    def __init__(self, epsilon: float, delta: float = 1e-9, relation: str = REPLACE_ONE, compress: bool = True,
                 *, selection: str | None = None) -> None:
        self._init_budget(epsilon, delta, relation, selection)
        self.compress = compress
        self._check_params()

    def _run(self, source: MarginalSource, root: Any, progress: bool) -> Any:
        sens2, sens_sel = self._sensitivities
        gens = {k: None if root is None else stream(root, v) for k, v in _PURPOSE.items() if k != "draw"}
        return run_mst(source, self.rho, sens2, sens_sel, gens, compress=bool(self.compress))


@register("mechanism", "aim")
class AIMSynthesizer(MarginalSynthesizer):
    """AIM: adaptive rounds choosing the worst-fitted workload marginal within a model-size budget.

    Parameters
    ----------
    epsilon, delta, relation
        As for :class:`MarginalSynthesizer`.
    degree : int, default 3
        The workload: all marginals of ``degree`` variables (and their sub-marginals as candidates).
    rounds : int, optional
        The planned number of rounds T (default 16 times the number of variables); each round's
        share of the budget is rho / T until the noise is halved.
    max_cells : float, default 1e5
        The model's largest size, in cells of its junction tree's clique tables; round t may use
        the share of it the budget spent so far is of the whole.  AIM's ``max_model_size`` of 80 MB
        is about 1e7 cells: its fits take hours.  On Adult, 3e5 lowers the error by about a tenth
        at four times the time.
    compress : bool, default True
        Merge the categories whose noisy one-way count is below 3 sigma, as MST does (AIM's authors
        recommend it for large domains; their AIM does not do it).
    """

    selection = "aim"
    _params = _common_params("(epsilon, delta)-DP target of the release") + (
        Param("degree", kind="integer", low=1, default=3, doc="workload: all marginals of this many variables"),
        Param("rounds", kind="integer", low=1, default=None, none_ok=True, doc="planned rounds (default 16 d)"),
        Param("max_cells", low=1.0, default=1e5, doc="largest model, in cells of its clique tables"),
        Param("compress", kind="choice", choices=(True, False), default=True,
              doc="merge categories with small noisy counts after the one-way marginals"),
    )

    def __init__(self, epsilon: float, delta: float = 1e-9, relation: str = REPLACE_ONE, degree: int = 3,
                 rounds: int | None = None, max_cells: float = 1e5, compress: bool = True, *,
                 selection: str | None = None) -> None:
        self._init_budget(epsilon, delta, relation, selection)
        self.degree = degree
        self.rounds = rounds
        self.max_cells = max_cells
        self.compress = compress
        self._check_params()

    def _run(self, source: MarginalSource, root: Any, progress: bool) -> Any:
        sens2, sens_sel = self._sensitivities
        gens = {k: None if root is None else stream(root, v) for k, v in _PURPOSE.items() if k != "draw"}
        from .._progress import progress_bar

        with progress_bar(100, progress, "AIM rounds", unit="%") as bar:
            done = [0]

            def tick(share: float) -> None:
                step = int(100 * share) - done[0]
                if step > 0:
                    bar.update(step)
                    done[0] += step

            return run_aim(source, self.rho, sens2, sens_sel, gens, degree=int(self.degree), rounds=self.rounds,
                           max_cells=float(self.max_cells), compress=bool(self.compress), progress=tick)


_SELECTIONS.update({"mst": MSTSynthesizer, "aim": AIMSynthesizer})
