"""Figures: the risk-utility frontier, tau4 curves, transition distributions, CI overlap and
microdata comparisons (matplotlib, imported only when a figure is drawn)."""

from ._figures import (
    plot_frontier,
    plot_reverse_transitions,
    plot_synthetic_vs_original,
    plot_tau4,
    plot_transitions,
    save_figure,
)
from ._microdata_plots import plot_propensity, plot_univariate, write_microdata_plots
from ._overlap_plot import plot_overlap

__all__ = [
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
