"""Utility and disclosure-risk metrics for synthetic microdata (records, not tables).

General utility
    :func:`compare_univariate` (frequencies, moments, percentiles, zeros),
    :func:`compare_bivariate` (correlation and Cramer's V fit), :func:`compare_missingness`
    (shares of missing values per column and by category), :func:`propensity_metrics`
    (pMSE, pMSE ratio, SPECKS, AUC), :func:`table_utility` / :func:`table_utilities`
    (Voas-Williamson, Freeman-Tukey, Jensen-Shannon, standardized pMSE over one-, two- and
    three-way tables).
Specific utility
    :func:`regression_utility` (confidence-interval overlap and SSO of a linear or logistic
    regression, combined over implicates).
Disclosure risk
    :func:`match_rates` and :func:`key_matches` (identity disclosure of partially synthetic
    data), :func:`attribute_disclosure` (repU, DiSCO, TCAP, CAP family),
    :func:`distance_to_closest_record` and :func:`membership_inference` (holdout benchmarks).
All at once
    :func:`evaluate_microdata`.

Inputs are pandas DataFrames (polars and pyarrow tables are converted); category, object,
string and boolean columns are categorical, other columns numeric unless listed in
``categorical`` (:func:`is_categorical`; :func:`joint_codes` codes several columns over their
union of values, as figures of the same comparisons need).  The propensity tree and nothing else
needs scikit-learn.  Source: course 002 (chapters 1, 3 and 5); methods.md section 8.
"""

from ._attribute import AttributeDisclosure, attribute_disclosure
from ._data import is_categorical, joint_codes, mark_missing, parse_numeric
from ._missing import MissingnessComparison, compare_missingness
from ._bivariate import BivariateComparison, MatrixDifference, compare_bivariate, cramers_v, matrix_difference
from ._distance import DistanceToClosestRecord, MembershipInference, distance_to_closest_record, membership_inference
from ._evaluate import MicrodataEvaluation, evaluate_microdata
from ...fitting.regression import GLMFit, fit_logistic, fit_ols
from ._identity import KeyMatches, MatchRates, key_matches, match_rates
from ._propensity import PropensityResult, ks_distance, propensity_metrics, roc_auc
from ._regression import RegressionUtility, regression_utility
from ._tables import TableUtility, table_utilities, table_utility
from ._univariate import UnivariateComparison, compare_univariate

__all__ = [
    "AttributeDisclosure",
    "BivariateComparison",
    "DistanceToClosestRecord",
    "GLMFit",
    "KeyMatches",
    "MatchRates",
    "MatrixDifference",
    "MembershipInference",
    "MissingnessComparison",
    "MicrodataEvaluation",
    "PropensityResult",
    "RegressionUtility",
    "TableUtility",
    "UnivariateComparison",
    "attribute_disclosure",
    "compare_bivariate",
    "compare_missingness",
    "compare_univariate",
    "cramers_v",
    "distance_to_closest_record",
    "evaluate_microdata",
    "fit_logistic",
    "fit_ols",
    "is_categorical",
    "joint_codes",
    "key_matches",
    "ks_distance",
    "mark_missing",
    "match_rates",
    "matrix_difference",
    "membership_inference",
    "parse_numeric",
    "propensity_metrics",
    "regression_utility",
    "roc_auc",
    "table_utilities",
    "table_utility",
]
