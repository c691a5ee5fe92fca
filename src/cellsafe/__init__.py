"""cellsafe: statistical disclosure control for categorical data and frequency tables.

Synthesize contingency tables with saturated count models, perturb published tables,
release differentially private counts, and measure risk and utility before and after release.

The public names:

- tables: :class:`CountTable`, :class:`Variable`, :class:`Hierarchy`, :class:`Domain` (the public categories of a release), :class:`Bins` (public bins of a numeric variable)
- count distributions: :class:`Poisson`, :class:`NBI`, :class:`PIG`, :class:`GAF`
- mechanisms: :class:`SaturatedSynthesizer`, :class:`LogLinearSynthesizer`,
  :class:`MultinomialDirichletSynthesizer`, :class:`PoissonGammaSynthesizer`,
  :class:`GeometricNoise`, :class:`DiscreteGaussianNoise`, :class:`TopDownNoise` (consistent DP counts
  over a hierarchy)
- microdata: :class:`SequentialSynthesizer` (records with categories and numbers)
- published tables: :class:`Publication`, :class:`PTable`, :class:`CellKeyMethod`,
  :class:`SmallCountRounding`
- submodules: :mod:`~cellsafe.apriori`, :mod:`~cellsafe.metrics`, :mod:`~cellsafe.fitting`,
  :mod:`~cellsafe.tuning`, :mod:`~cellsafe.dp`, :mod:`~cellsafe.datasets`, :mod:`~cellsafe.formula`,
  :mod:`~cellsafe.published`, :mod:`~cellsafe.synthesis`, :mod:`~cellsafe.report` (figures)

Every submodule and name loads on first use, so ``import cellsafe`` costs little.
"""

from typing import Any

from .exceptions import BudgetExceededError, CellsafeError, DataError, InvalidArgumentError, TableTooLargeError

# Submodules and public names load on first use (PEP 562): ``import cellsafe`` stays light, and a
# command or script pays only for what it touches.
_SUBMODULES = frozenset(
    {"apriori", "datasets", "distributions", "dp", "engines", "exceptions", "fitting", "formula", "io", "mechanisms",
     "metrics", "published", "report", "synthesis", "table", "tuning"}
)
_NAMES = {
    "GAF": "distributions",
    "NBI": "distributions",
    "PIG": "distributions",
    "Poisson": "distributions",
    "PrivacyAccountant": "dp",
    "CellKeyMethod": "mechanisms",
    "DiscreteGaussianNoise": "mechanisms",
    "GeometricNoise": "mechanisms",
    "LogLinearSynthesizer": "mechanisms",
    "MarginalSynthesizer": "mechanisms",
    "MultinomialDirichletSynthesizer": "mechanisms",
    "PoissonGammaMultinomialSynthesizer": "mechanisms",
    "PoissonGammaSynthesizer": "mechanisms",
    "PTable": "mechanisms",
    "SaturatedSynthesizer": "mechanisms",
    "SmallCountRounding": "mechanisms",
    "TopDownNoise": "mechanisms",
    "Publication": "published",
    "SequentialSynthesizer": "synthesis",
    "CountTable": "table",
    "Domain": "table",
    "Bins": "table",
    "Hierarchy": "table",
    "Variable": "table",
}

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # tables
    "CountTable",
    "Variable",
    "Domain",
    "Bins",
    "Hierarchy",
    # distributions
    "Poisson",
    "NBI",
    "PIG",
    "GAF",
    # mechanisms
    "SaturatedSynthesizer",
    "LogLinearSynthesizer",
    "MarginalSynthesizer",
    "MultinomialDirichletSynthesizer",
    "PoissonGammaSynthesizer",
    "PoissonGammaMultinomialSynthesizer",
    "GeometricNoise",
    "DiscreteGaussianNoise",
    "TopDownNoise",
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


def __getattr__(name: str) -> Any:  # PEP 562: submodules and public names on first use
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    home = _NAMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module 'cellsafe' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
