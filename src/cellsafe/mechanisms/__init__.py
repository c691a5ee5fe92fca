"""Protection mechanisms: synthesizers and perturbations, one module per algorithm.

- saturated synthesis (003, 000): :class:`SaturatedSynthesizer`
- smoothed synthesis from a log-linear fit: :class:`LogLinearSynthesizer`
- differentially private synthesizers (004): :class:`MultinomialDirichletSynthesizer`,
  :class:`PoissonGammaSynthesizer` (and the shortcut :class:`PoissonGammaMultinomialSynthesizer`,
  which carries no epsilon)
- published tables (001): :class:`PTable`, :class:`CellKeyMethod`, :class:`SmallCountRounding`,
  :class:`CellSuppression` (primary rules, secondary suppression by Gaussian elimination)
- magnitude tables: :class:`CellKeyMagnitude` with a :class:`MagnitudePTable` (cellKey's flex function)
- differentially private noise per cell: :class:`GeometricNoise`, :class:`DiscreteGaussianNoise`
"""

from ._base import Block, CellwiseMechanism, Mechanism, table_blocks
from .cellkey import CellKeyMethod
from .cellkey_magnitude import CellKeyMagnitude, flex_multiplier
from .dirichlet import MultinomialDirichletSynthesizer
from .loglinear import LogLinearSynthesizer
from .magnitude_ptable import MagnitudePTable
from .noise import DiscreteGaussianNoise, GeometricNoise
from .poisson_gamma import PoissonGammaMultinomialSynthesizer, PoissonGammaSynthesizer
from .ptable import PTable
from .rounding import SmallCountRounding, round_small_counts
from .saturated import SaturatedSynthesizer
from .suppression import CellSuppression, suppress_cells
from ._gauss import in_published_span
from ._intervals import cell_intervals, protect_intervals, protection_met
from ._primary import Rule, parse_rule, primary_cells
from ._spec import make_mechanism, mechanism_family, mechanism_names, mechanism_spec, parse_spec

__all__ = [
    "make_mechanism",
    "mechanism_family",
    "mechanism_names",
    "mechanism_spec",
    "parse_spec",
    "Block",
    "table_blocks",
    "CellKeyMethod",
    "CellKeyMagnitude",
    "MagnitudePTable",
    "flex_multiplier",
    "CellwiseMechanism",
    "DiscreteGaussianNoise",
    "GeometricNoise",
    "LogLinearSynthesizer",
    "Mechanism",
    "MultinomialDirichletSynthesizer",
    "PTable",
    "PoissonGammaMultinomialSynthesizer",
    "PoissonGammaSynthesizer",
    "SaturatedSynthesizer",
    "SmallCountRounding",
    "CellSuppression",
    "suppress_cells",
    "Rule",
    "parse_rule",
    "primary_cells",
    "in_published_span",
    "cell_intervals",
    "protect_intervals",
    "protection_met",
    "round_small_counts",
]
