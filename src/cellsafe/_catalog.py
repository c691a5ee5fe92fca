"""The catalog: every named family and method, with its declared parameters, importable without numpy.

One entry per count distribution (``poisson``, ``nbi``...), per mechanism a spec or a command can name
(``ckm``, ``scr``, ``geometric``...) and per configured part of one (a ptable).  An entry says where
its class lives (imported only when the class is needed) and declares its parameters once: the class
reads them (``_params = declared("distribution", "nbi")``), and so do the command line's options,
choices and help text, the tuning searches' default ranges and the frontier's default grid, which
therefore start without numpy, pandas or scipy.

A new count family is its module and one :class:`Entry` here (or :func:`add` at run time): it
then appears in ``--distribution``'s choices, in specs, in tuning, in the frontier and in the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ._params import Param

__all__ = [
    "Entry",
    "Grid",
    "entries",
    "entry",
    "declared",
    "add",
    "remove",
    "SIGMA",
    "MAX_SIGMA",
    "MAX_D",
    "OUTSIDE_CHOICES",
    "SYNTHESIS_METHODS",
]


@dataclass(frozen=True)
class Grid:
    """How the frontier's default grid spreads a family's settings.

    Parameters
    ----------
    share : int
        The family's share of the grid's points, relative to the other families'.
    axes : tuple of (name, first, last, log)
        The parameters varied, from ``first`` to ``last`` (on a log scale with ``log``; a log axis
        starting at 0 is 0 followed by a log grid over the last two decades).  Two axes are crossed,
        five values of the second.
    """

    share: int
    axes: tuple[tuple[str, float, float, bool], ...]


@dataclass(frozen=True)
class Entry:
    """One named family or method.

    Parameters
    ----------
    kind : {'distribution', 'mechanism', 'part'}
    name : str
        The name specs, options and registries use ('nbi', 'ckm', 'ptable').
    target : str or type
        ``'package.module:Class'``, imported when the class is first needed (or the class itself,
        for one added at run time).
    params : tuple of Param, or None
        The declared parameters; None when the class declares its own (the differentially private
        synthesizers, which no command builds from options).
    title : str
        A few words for the command line's help ('negative binomial').
    cellwise : bool
        A mechanism with transition probabilities P(k | j) (assess, tune, frontier, report).
    grid : Grid, optional
        A family's part of the frontier's default grid.
    costly : bool
        Its transition moments need slow numerical sums (the report draws no neighbourhood).
    """

    kind: str
    name: str
    target: Any
    params: tuple[Param, ...] | None = ()
    title: str = ""
    cellwise: bool = False
    grid: Grid | None = None
    costly: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


#: Largest dispersion accepted.  At sigma = 1e12 a cell of count 1 is already released as 0 with
#: probability above 0.999998 under NBI and PIG; beyond it only the floating-point arithmetic changes
#: (gamma shapes 1/sigma near the smallest doubles), not the release.
MAX_SIGMA = 1e12

#: The dispersion parameter shared by NBI, PIG and GAF.
SIGMA = Param(
    "sigma", low=0.0, high=MAX_SIGMA, low_open=True, scan=(1e-4, 1e3), log=True, doc="dispersion",
    hint="Choose a smaller sigma: at 1e12 almost every count is already released as 0 (tuning scans 1e-4 to 1e3).",
)

#: Largest deviation a generated ptable may have.  The table holds (ncat + 1) x (ncat + D + 1)
#: probabilities and each row is a maximum-entropy problem over 2D + 1 deviations, so D = 1e9 would
#: ask for more memory than exists; ptables in use have D of a few units.
MAX_D = 100
D_HINT = "Choose D of at most 100 (ptables in use have D of a few units; the noise variance is V, not D)."

#: What a differentially private release does with records outside its public domain.
OUTSIDE_CHOICES = ("error", "drop")

#: The methods of sequential microdata synthesis (:class:`cellsafe.SequentialSynthesizer`).
SYNTHESIS_METHODS: tuple[str, ...] = ("sample", "normal", "logistic", "multinomial", "polr", "pmm", "normrank", "cart", "keep")

_PUBLICATION = Param("publication", kind="object", default=None, none_ok=True, doc="the published cells (formula)")

_BUILT_IN = (
    # ------------------------------------------------------------------ count families
    Entry("distribution", "poisson", "cellsafe.distributions.poisson:Poisson", (), "Poisson",
          grid=Grid(1, (("alpha", 0.0, 0.1, True),))),
    Entry("distribution", "nbi", "cellsafe.distributions.nbi:NBI", (SIGMA,), "negative binomial",
          grid=Grid(3, (("sigma", 0.01, 10.0, True),))),
    Entry("distribution", "pig", "cellsafe.distributions.pig:PIG", (SIGMA,), "Poisson-inverse Gaussian",
          grid=Grid(3, (("sigma", 0.01, 10.0, True),))),
    Entry("distribution", "gaf", "cellsafe.distributions.gaf:GAF",
          (SIGMA, Param("nu", default=0.0, scan=(-2.0, 1.0), doc="variance-mean exponent")),
          "discretized gamma", grid=Grid(3, (("sigma", 0.25, 4.0, True), ("nu", 0.0, -1.0, False))), costly=True),
    # ------------------------------------------------------------------ parts of mechanisms
    Entry("part", "ptable", "cellsafe.mechanisms.ptable:PTable", (
        Param("D", kind="integer", low=1, high=MAX_D, doc="largest deviation", hint=D_HINT),
        Param("V", low=0.0, low_open=True, scan=(0.05, 25.0), log=True, doc="noise variance"),
        Param("js", kind="integer", low=0, default=0, doc="released 1..js forbidden"),
        Param("ncat", kind="integer", low=1, default=None, none_ok=True, doc="last row"),
        Param("mono", kind="choice", choices=(True, False), default=True, doc="monotone up to no change"),
        Param("min_probability", low=0.0, high=0.01, low_open=True, default=1e-7, doc="smallest allowed probability"),
    ), "perturbation table"),
    Entry("part", "magnitude-ptable", "cellsafe.mechanisms.magnitude_ptable:MagnitudePTable", (
        Param("D", kind="integer", low=1, doc="largest noise value (in units of the noise magnitude)"),
        Param("V", low=0.0, low_open=True, scan=(0.05, 25.0), log=True, doc="noise variance"),
        Param("step", kind="integer", low=1, default=2, doc="noise values on a grid of 1/step"),
        Param("icat", kind="object", default=None, none_ok=True, doc="reference rows (default 1 and D)"),
        Param("mono", kind="choice", choices=(True, False), default=True, doc="monotone up to no change"),
        Param("min_probability", low=0.0, high=0.01, low_open=True, default=1e-7, doc="smallest allowed probability"),
    ), "perturbation table for magnitudes"),
    # ------------------------------------------------------------------ mechanisms
    Entry("mechanism", "saturated", "cellsafe.mechanisms.saturated:SaturatedSynthesizer", (
        Param("distribution", kind="object", doc="the noise family: Poisson(), NBI(sigma), PIG(sigma), GAF(sigma, nu)"),
        # a pseudocount above 1e6 per empty cell would swamp any table's real counts
        Param("alpha", low=0.0, high=1e6, default=0.0, scan=(0.0, 10.0), log=True,
              doc="pseudocount: the mean of random zeros",
              hint="alpha is the mean count given to each random zero, usually below 1 (tuning scans 0 to 10)."),
        Param("zeros_to_ones", low=0.0, high=1.0, default=0.0, scan=(0.0, 1.0),
              doc="probability that a random zero becomes 1 (000's alternative to alpha)"),
    ), "saturated synthesis", cellwise=True),
    Entry("mechanism", "loglinear", "cellsafe.mechanisms.loglinear:LogLinearSynthesizer", (
        Param("margins", kind="object", doc="the model's margins (formula)"),
        Param("distribution", kind="object", doc="the noise family around the fitted values"),
        Param("alpha", low=0.0, high_open=True, default=0.0, scan=(0.0, 10.0), log=True, doc="pseudocount"),
        Param("tol", low=0.0, low_open=True, default=1e-8, doc="IPF tolerance"),
        Param("max_iter", kind="integer", low=1, default=1000, doc="IPF iterations"),
    ), "synthesis from a log-linear model"),
    Entry("mechanism", "ckm", "cellsafe.mechanisms.cellkey:CellKeyMethod", (
        Param("ptable", kind="object", doc="the perturbation table"),
        _PUBLICATION,
        Param("threshold", kind="integer", low=0, default=None, none_ok=True,
              doc="suppress released counts below it (none: 10 for an ONS ptable, else 0)"),
    ), "cell key method", cellwise=True),
    Entry("mechanism", "ckm-magnitude", "cellsafe.mechanisms.cellkey_magnitude:CellKeyMagnitude", (
        Param("ptable", kind="object", doc="the perturbation table for magnitudes"),
        _PUBLICATION,
        Param("fp", low=0.0, low_open=True, doc="flex point"),
        Param("top_k", kind="integer", low=1, high=6, default=1, doc="largest contributions that make noise"),
        Param("p_small", low=0.0, high=1.0, low_open=True, default=0.25, scan=(0.01, 0.5),
              doc="noise share of small contributions"),
        Param("p_large", low=0.0, high=1.0, default=0.05, doc="noise share of very large contributions"),
        Param("q", low=1.0, default=3.0, doc="steepness of the flex function"),
        Param("flex_weights", kind="object", default=None, none_ok=True, doc="weights of the top_k components"),
        Param("mu_c", low=0.0, default=0.0, doc="extra noise for sensitive cells"),
        Param("same_key", kind="choice", choices=(True, False), default=True, doc="first component uses the cell key"),
        Param("use_zero_rkeys", kind="choice", choices=(True, False), default=False,
              doc="keys of zero-value records count"),
    ), "cell key method for magnitude tables"),
    Entry("mechanism", "scr", "cellsafe.mechanisms.rounding:SmallCountRounding", (
        Param("publication", kind="object", doc="the published cells (formula)"),
        Param("base", kind="integer", low=2, default=3, doc="rounding base"),
        Param("max_iter_rows", kind="integer", low=1, default=1000, doc="candidates per iteration"),
        Param("max_iter", kind="integer", low=1, default=10_000, doc="cap on iterations"),
        Param("list", kind="choice", choices=("frame", "nonzero"), default="frame", doc="which cells are listed"),
    ), "small count rounding"),
    Entry("mechanism", "suppress", "cellsafe.mechanisms.suppression:CellSuppression", (
        Param("publication", kind="object", doc="the published cells (formula)"),
        Param("rules", kind="object", default=("freq<=3",), doc="primary rules"),
        Param("list", kind="choice", choices=("frame", "nonzero"), default="frame", doc="which cells are listed"),
        Param("protect_zeros", kind="choice", choices=(False, True), default=False, doc="suppress empty cells"),
        Param("secondary_zeros", kind="choice", choices=(False, True), default=False, doc="zeros as secondaries"),
        Param("priority", kind="choice", choices=("count", "value"), default="count", doc="candidate order"),
        Param("intervals", kind="choice", choices=(None, False, True), default=None, doc="protection levels by LP"),
        Param("singletons", kind="choice", choices=(None, False, True), default=None, doc="singleton protection"),
        Param("min_width", low=0.0, default=0.0, doc="least interval width of a frequency-rule primary"),
        Param("forced", kind="object", default=None, doc="cells always published"),
        Param("hidden", kind="object", default=None, doc="cells always withheld"),
        Param("secondary", kind="choice", choices=("gauss", "optimal"), default="gauss", doc="secondary suppression method"),
        Param("cost", kind="object", default="value", doc="what a withheld cell costs (optimal)"),
        Param("time_limit", kind="real", low=0.0, low_open=True, default=60.0, doc="seconds for the optimal method"),
    ), "cell suppression"),
    Entry("mechanism", "dirichlet", "cellsafe.mechanisms.dirichlet:MultinomialDirichletSynthesizer", None,
          "multinomial-Dirichlet synthesis (DP)"),
    Entry("mechanism", "poisson-gamma", "cellsafe.mechanisms.poisson_gamma:PoissonGammaSynthesizer", None,
          "Poisson-gamma synthesis (DP)"),
    Entry("mechanism", "poisson-gamma-multinomial",
          "cellsafe.mechanisms.poisson_gamma:PoissonGammaMultinomialSynthesizer", None,
          "Poisson-gamma synthesis, multinomial shortcut"),
    Entry("mechanism", "mst", "cellsafe.mechanisms.marginal:MSTSynthesizer", None,
          "MST marginal synthesis (zCDP)"),
    Entry("mechanism", "aim", "cellsafe.mechanisms.marginal:AIMSynthesizer", None,
          "AIM marginal synthesis (zCDP)"),
    Entry("mechanism", "geometric", "cellsafe.mechanisms.noise:GeometricNoise", (
        Param("epsilon", low=0.0, low_open=True, scan=(0.01, 10.0), log=True,
              doc="privacy loss per cell: noise P(n) proportional to exp(-epsilon |n| / sensitivity)"),
        Param("sensitivity", kind="integer", low=1, default=1, doc="largest change of one count between neighbours"),
    ), "geometric noise (DP)", cellwise=True),
    Entry("mechanism", "discrete-gaussian", "cellsafe.mechanisms.noise:DiscreteGaussianNoise", (
        Param("sigma", low=0.0, low_open=True, high=2.0**50, scan=(0.1, 100.0), log=True,
              doc="noise scale: P(n) proportional to exp(-n^2 / (2 sigma^2))"),
    ), "discrete Gaussian noise (zCDP)", cellwise=True),
)

_CATALOG: dict[str, dict[str, Entry]] = {"distribution": {}, "mechanism": {}, "part": {}}
for _e in _BUILT_IN:
    _CATALOG[_e.kind][_e.name] = _e


def add(new: Entry) -> Entry:
    """Add (or replace, by the same name) an entry at run time: a family or method from outside cellsafe."""
    if new.kind not in _CATALOG:
        raise AssertionError(f"unknown catalog kind {new.kind!r}")
    _CATALOG[new.kind][new.name] = new
    return new


def remove(kind: str, name: str) -> None:
    """Take an entry added at run time out again."""
    _CATALOG[kind].pop(name, None)


def entries(kind: str) -> dict[str, Entry]:
    """The entries of ``kind`` by name, in listing order (nothing is imported)."""
    return dict(_CATALOG[kind])


def entry(kind: str, name: str) -> Entry:
    """One entry (KeyError when there is none)."""
    return _CATALOG[kind][name]


def declared(kind: str, name: str) -> tuple[Param, ...]:
    """The declared parameters of an entry, for its class's ``_params``."""
    params = _CATALOG[kind][name].params
    if params is None:
        raise AssertionError(f"{kind} {name!r} declares its parameters in its class")
    return params
