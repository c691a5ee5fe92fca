"""Differential privacy: sanitizers, randomized response, budget accounting, verification, post-processing.

The fixed-total DP synthesizers live in :mod:`cellsafe.mechanisms` (multinomial-Dirichlet and
Poisson-gamma, 004); this package holds the tools around them.
"""

from .._privacy import ADD_REMOVE, RELATIONS, REPLACE_ONE, PrivacyLoss, cdp_delta, cdp_epsilon, cdp_rho
from ..exceptions import BudgetExceededError
from ._accountant import BudgetSummary, PrivacyAccountant, Release
from ._prior import PriorWeight, prior_weight
from ._postprocess import clip_negative, make_counts, restore_additivity, round_to_total
from ._hierarchical import HierarchicalPlan, plan_hierarchical_counts
from ._release import SYNTHESIS_MECHANISMS, DPSynthesis, plan_synthesis
from ._randomized_response import (
    randomized_response,
    randomized_response_epsilon,
    randomized_response_estimate,
    randomized_response_probability,
)
from ._sanitizers import (
    discrete_gaussian_mechanism,
    discrete_gaussian_sigma,
    gaussian_mechanism,
    gaussian_sigma,
    geometric_mechanism,
    laplace_mechanism,
    sanitize,
)
from ._verify import EpsilonVerification, verify_epsilon

__all__ = [
    "PrivacyLoss",
    "ADD_REMOVE",
    "REPLACE_ONE",
    "RELATIONS",
    "cdp_delta",
    "cdp_epsilon",
    "cdp_rho",
    "PrivacyAccountant",
    "plan_synthesis",
    "DPSynthesis",
    "SYNTHESIS_MECHANISMS",
    "plan_hierarchical_counts",
    "HierarchicalPlan",
    "Release",
    "BudgetSummary",
    "BudgetExceededError",
    "clip_negative",
    "round_to_total",
    "make_counts",
    "restore_additivity",
    "randomized_response",
    "randomized_response_estimate",
    "randomized_response_probability",
    "randomized_response_epsilon",
    "laplace_mechanism",
    "geometric_mechanism",
    "gaussian_mechanism",
    "discrete_gaussian_mechanism",
    "gaussian_sigma",
    "discrete_gaussian_sigma",
    "sanitize",
    "verify_epsilon",
    "prior_weight",
    "PriorWeight",
    "EpsilonVerification",
]
