"""Boxplots of confidence-interval overlap, as 003 Figs. 4 and 5.

Uses matplotlib's object API with the Agg canvas (no pyplot, no global state), so it works
without a display and from threads, in the house style of :mod:`cellsafe.report._style`.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

__all__ = ["plot_overlap"]


def plot_overlap(
    groups: Mapping[str, Any],
    path: "str | os.PathLike[str] | None" = None,
    *,
    title: str | None = None,
    xlabel: str = "synthetic data",
    ylabel: str = "confidence interval overlap",
) -> Any:
    """One box of CI overlap values per group (an implicate, a synthesis setting...).

    Parameters
    ----------
    groups : mapping of str to array_like
        Label -> overlap values (NaN are left out), in display order; e.g. the rows of
        :attr:`SpecificUtility.overlap_implicates <cellsafe.metrics.specific.SpecificUtility>` keyed
        by implicate, or one result per sigma as in 003 Figs. 4-5.
    path : str or path, optional
        Write the figure there (the extension chooses the format, e.g. ``.png``, ``.pdf``).
    title, xlabel, ylabel : str
        Labels.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from ._style import PALETTE, new_figure, styled, wrap

    if not groups:
        from ..exceptions import InvalidArgumentError

        raise InvalidArgumentError("plot_overlap needs at least one group of overlap values.")
    labels = [str(k) for k in groups]
    data = []
    for v in groups.values():
        a = np.asarray(v, dtype=np.float64).ravel()
        data.append(a[np.isfinite(a)])
    width = max(4.8, 0.8 * len(labels) + 2.4)
    fig, axes = new_figure(1, 1, (width, 4.2))
    FigureCanvasAgg(fig)
    ax = axes[0, 0]
    with styled():
        kw = {"tick_labels": labels} if _has_tick_labels() else {"labels": labels}
        ax.boxplot(data, patch_artist=True, boxprops={"facecolor": PALETTE[5], "alpha": 0.6},
                   medianprops={"color": "black"}, **kw)
        # 0.5 is what an interval far wider than the original's, and containing it, scores:
        # boxes below it mean intervals that are shifted or too wide to be useful.
        ax.axhline(0.5, color="0.4", linewidth=0.9, linestyle="--",
                   label="0.5: a far wider interval containing the original one")
        ax.axhline(1.0, color="0.4", linewidth=0.6, linestyle=":", label="1: identical intervals")
        ax.set_ylim(-0.02, 1.05)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(wrap(title, width))
        ax.legend(loc="lower left")
        if len(labels) > 6:
            for lab in ax.get_xticklabels():
                lab.set_rotation(45)
                lab.set_ha("right")
    if path is not None:
        from ..io import atomic_path

        with atomic_path(path) as tmp:
            with styled():
                fig.savefig(tmp, format=os.path.splitext(os.fspath(path))[1].lstrip(".") or "png", dpi=120)
    return fig


def _has_tick_labels() -> bool:
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return (major, minor) >= (3, 9)
