"""The release report and its figures.

:class:`Report` gathers what a disclosure-review panel signs off (data, mechanisms, a priori and
empirical risk and utility, frontier, transitions, microdata measures, privacy budget,
provenance) into one self-contained HTML file and the same content as JSON.  The figures (the
risk-utility frontier, tau4 curves, transition distributions, CI overlap and microdata
comparisons) share one style and are drawn with matplotlib, imported only when a figure is drawn.
"""

from ._figures import (
    plot_frontier,
    plot_reverse_transitions,
    plot_synthetic_vs_original,
    plot_tau4,
    plot_transitions,
    save_figure,
)
from ._microdata_plots import natural_order, plot_propensity, plot_univariate, write_microdata_plots
from ._overlap_plot import plot_overlap
from ._inputs import Released, Requirement, load_release, parse_requirement
from ._report import SECTIONS, Report

__all__ = [
    "Report",
    "Released",
    "Requirement",
    "SECTIONS",
    "load_release",
    "parse_requirement",
    "natural_order",
    "plot_frontier",
    "plot_overlap",
    "plot_propensity",
    "plot_reverse_transitions",
    "plot_synthetic_vs_original",
    "plot_tau4",
    "plot_transitions",
    "plot_univariate",
    "save_figure",
    "write_microdata_plots",
]
