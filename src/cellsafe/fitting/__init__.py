"""Model fitting: IPF for hierarchical log-linear models, the Poisson log-linear GLM, and
least-squares additivity restoration with expected inner frequencies (001), and linear and
logistic regression with standard errors (for microdata specific utility), and consistent
estimates over a tree of counts (least squares, then non-negative integers top-down)."""

from .glm import LogLinearFit, fit_loglinear
from .ipf import IPFResult, ipf
from .nnls import AdditivityResult, ExpectedInnerResult, expected_inner, restore_additivity
from .regression import GLMFit, fit_logistic, fit_ols
from .tree import TreeEstimate, tree_integers, tree_least_squares

__all__ = [
    "AdditivityResult",
    "ExpectedInnerResult",
    "GLMFit",
    "IPFResult",
    "LogLinearFit",
    "expected_inner",
    "fit_logistic",
    "fit_loglinear",
    "fit_ols",
    "ipf",
    "restore_additivity",
    "TreeEstimate",
    "tree_integers",
    "tree_least_squares",
]
