"""Count distributions in gamlss.dist's parameterization: Poisson, NBI, PIG, GAF."""

from ._base import CountDistribution

__all__ = ["CountDistribution"]
