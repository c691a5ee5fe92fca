"""Count distributions in gamlss.dist's parameterization: Poisson, NBI, PIG, GAF.

Every family has mean ``mu`` (per cell) and fixed shape parameters; see
:class:`CountDistribution` for the shared methods (``pmf``, ``logpmf``, ``cdf``, ``sf``,
``sample``, ``mean``, ``var``, ``upper_quantile``) and :func:`make_distribution` to build one
by name.  :class:`DiscreteLaplace` and :class:`DiscreteGaussian` are noise distributions on all the
integers with exact integer-arithmetic samplers (the noise of the differentially private mechanisms).
"""

# Imported in the order the families are listed everywhere (they register themselves).
from .poisson import Poisson  # isort: skip
from .nbi import NBI  # isort: skip
from .pig import PIG  # isort: skip
from .gaf import GAF  # isort: skip
from ._base import CountDistribution
from ._factory import distribution_names, make_distribution
from .integer_noise import DiscreteGaussian, DiscreteLaplace, NoiseOverflowError
from .conditioned_nb import ConditionedNegativeBinomial, conditioned_nb_log_pmf, sample_conditioned_nb
from ._exact import bernoulli_exp_fraction, bernoulli_exp_integer, rational_at_most

__all__ = ["CountDistribution", "distribution_names", "Poisson", "NBI", "PIG", "GAF", "make_distribution"]
__all__ += ["DiscreteLaplace", "DiscreteGaussian", "NoiseOverflowError"]
__all__ += ["ConditionedNegativeBinomial", "sample_conditioned_nb", "conditioned_nb_log_pmf"]
__all__ += ["bernoulli_exp_fraction", "bernoulli_exp_integer", "rational_at_most"]
