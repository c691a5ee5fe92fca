"""cellsafe: statistical disclosure control for categorical data and frequency tables.

Synthesize contingency tables with saturated count models, perturb published tables,
release differentially private counts, and measure risk and utility before and after release.

The public names:

- tables: :class:`CountTable`, :class:`Variable`, :class:`Hierarchy`, :class:`Domain` (the public categories of a release)
- count distributions: :class:`Poisson`, :class:`NBI`, :class:`PIG`, :class:`GAF`
- mechanisms: :class:`SaturatedSynthesizer`, :class:`LogLinearSynthesizer`,
  :class:`MultinomialDirichletSynthesizer`, :class:`PoissonGammaSynthesizer`,
  :class:`GeometricNoise`, :class:`DiscreteGaussianNoise`
- microdata: :class:`SequentialSynthesizer` (records with categories and numbers)
- published tables: :class:`Publication`, :class:`PTable`, :class:`CellKeyMethod`,
  :class:`SmallCountRounding`
- submodules: :mod:`~cellsafe.apriori`, :mod:`~cellsafe.metrics`, :mod:`~cellsafe.fitting`,
  :mod:`~cellsafe.tuning`, :mod:`~cellsafe.dp`, :mod:`~cellsafe.datasets`, :mod:`~cellsafe.formula`,
  :mod:`~cellsafe.published`, :mod:`~cellsafe.synthesis`, :mod:`~cellsafe.report` (figures, loaded on first use)
"""

from . import (
    apriori,
    datasets,
    distributions,
    dp,
    exceptions,
    fitting,
    formula,
    mechanisms,
    metrics,
    published,
    synthesis,
    tuning,
)
from .distributions import GAF, NBI, PIG, Poisson
from .dp import BudgetExceededError, PrivacyAccountant
from .exceptions import CellsafeError, DataError, InvalidArgumentError, TableTooLargeError
from .mechanisms import (
    CellKeyMethod,
    DiscreteGaussianNoise,
    GeometricNoise,
    LogLinearSynthesizer,
    MultinomialDirichletSynthesizer,
    PoissonGammaMultinomialSynthesizer,
    PoissonGammaSynthesizer,
    PTable,
    SaturatedSynthesizer,
    SmallCountRounding,
)
from .published import Publication
from .synthesis import SequentialSynthesizer
from .table import CountTable, Domain, Hierarchy, Variable

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # tables
    "CountTable",
    "Variable",
    "Domain",
    "Hierarchy",
    # distributions
    "Poisson",
    "NBI",
    "PIG",
    "GAF",
    # mechanisms
    "SaturatedSynthesizer",
    "LogLinearSynthesizer",
    "MultinomialDirichletSynthesizer",
    "PoissonGammaSynthesizer",
    "PoissonGammaMultinomialSynthesizer",
    "GeometricNoise",
    "DiscreteGaussianNoise",
    "PTable",
    "CellKeyMethod",
    "SmallCountRounding",
    "Publication",
    "PrivacyAccountant",
    # microdata
    "SequentialSynthesizer",
    # errors
    "CellsafeError",
    "DataError",
    "InvalidArgumentError",
    "TableTooLargeError",
    "BudgetExceededError",
    # submodules
    "datasets",
    "distributions",
    "dp",
    "exceptions",
    "fitting",
    "formula",
    "mechanisms",
    "metrics",
    "published",
    "synthesis",
    "apriori",
    "tuning",
    "report",
]


def __getattr__(name: str):  # figures load lazily: they are the only layer that needs matplotlib
    if name == "report":
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'cellsafe' has no attribute {name!r}")
