"""Risk and utility metrics: pure functions of an original and protected tables (or microdata).

- tables, empirical: :func:`tau`, :func:`table_metrics`, :func:`hellinger_distance`,
  :func:`hellinger_utility`
- specific utility (log-linear models): :func:`specific_utility`, :func:`ci_overlap`,
  :func:`compare_intervals` (same sign, significance, overlap), combining rules
  :func:`combine_fully_synthetic` and :func:`combine_partially_synthetic`
- published tables (001): :func:`audit_suppression` (attacker's intervals of suppressed cells), :func:`audit_linked` (linked tables and earlier releases together), :func:`audit_releases` (published files read back, together), :func:`disclosure_probabilities`, :func:`disclosure_risk`, :func:`f_beta_risk`,
  and :func:`compare_published` (the fair comparison of protected publications)
- records: the :mod:`cellsafe.metrics.microdata` subpackage
"""

from . import microdata
from ._audit import SuppressionAudit, audit_suppression
from ._disclosure import (
    DisclosureProbabilities,
    DisclosureRisk,
    disclosure_probabilities,
    disclosure_risk,
    f_beta_risk,
)
from ._linked import LinkedAudit, audit_linked, audit_releases
from ._hellinger import hellinger_distance, hellinger_utility
from ._overlap import CombinedEstimate, ci_overlap, combine_fully_synthetic, combine_partially_synthetic, compare_intervals
from ._published import PublishedComparison, compare_published, release_publication
from ._tables import TableMetrics, empirical_tau, table_metrics, table_metrics_from_pairs, tau
from .specific import SpecificUtility, specific_utility

__all__ = [
    "SuppressionAudit",
    "audit_suppression",
    "LinkedAudit",
    "audit_linked",
    "audit_releases",
    "CombinedEstimate",
    "DisclosureProbabilities",
    "DisclosureRisk",
    "PublishedComparison",
    "SpecificUtility",
    "TableMetrics",
    "ci_overlap",
    "combine_fully_synthetic",
    "combine_partially_synthetic",
    "compare_published",
    "release_publication",
    "compare_intervals",
    "disclosure_probabilities",
    "disclosure_risk",
    "empirical_tau",
    "f_beta_risk",
    "hellinger_distance",
    "hellinger_utility",
    "microdata",
    "specific_utility",
    "table_metrics",
    "table_metrics_from_pairs",
    "tau",
]
