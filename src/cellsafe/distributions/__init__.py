"""Count distributions in gamlss.dist's parameterization: Poisson, NBI, PIG, GAF.

Every family has mean ``mu`` (per cell) and fixed shape parameters; see
:class:`CountDistribution` for the shared methods (``pmf``, ``logpmf``, ``cdf``, ``sf``,
``sample``, ``mean``, ``var``, ``upper_quantile``) and :func:`make_distribution` to build one
by name.
"""

from ._base import CountDistribution
from ._factory import DISTRIBUTION_NAMES, make_distribution
from .gaf import GAF
from .nbi import NBI
from .pig import PIG
from .poisson import Poisson

__all__ = ["CountDistribution", "DISTRIBUTION_NAMES", "Poisson", "NBI", "PIG", "GAF", "make_distribution"]
