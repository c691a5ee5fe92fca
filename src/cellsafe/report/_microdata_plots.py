"""Figures for the microdata evaluation: univariate comparisons and propensity distributions.

:func:`plot_univariate` draws, per variable, paired bars of the relative frequencies
(categorical variables) or the empirical CDFs (numeric variables) of the original and the first
synthetic data set; :func:`plot_propensity` draws the distributions of the propensity scores of
original and synthetic records (course 002, sections 3.3 and 3.5).  matplotlib (Agg backend) is
imported inside the functions.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = ["plot_univariate", "plot_propensity", "write_microdata_plots"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, fig: Any, path: "str | os.PathLike[str]") -> Path:
    """Lay out, write atomically (format from the suffix, PNG without one) and close the figure."""
    from ..io import atomic_path

    fig.tight_layout()
    target = Path(path)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=target.suffix.lstrip(".") or "png", dpi=110)
    plt.close(fig)
    return target


def plot_univariate(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    path: "str | os.PathLike[str]",
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
    max_categories: int = 30,
) -> Path:
    """One panel per variable comparing the original and synthetic one-way distributions.

    Categorical variables (and numeric ones with at most ``max_categories`` values) get paired
    bars of relative frequencies; other numeric variables their two empirical CDFs.
    """
    from ..metrics.microdata import is_categorical, joint_codes

    plt = _pyplot()
    cols = list(columns) if columns is not None else [c for c in original.columns if c in synthetic.columns]
    ncol = min(3, max(1, len(cols)))
    nrow = math.ceil(len(cols) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.0 * nrow), squeeze=False)
    for ax, c in zip(axes.ravel(), cols):
        o, s = original[c], synthetic[c]
        few = pd.concat([o, s], ignore_index=True).nunique(dropna=False) <= max_categories
        if is_categorical(o, categorical) or is_categorical(s, categorical) or few:
            (co, cs), uniq = joint_codes([o, s])
            n = len(uniq)
            po = np.bincount(co, minlength=n) / len(co)
            ps = np.bincount(cs, minlength=n) / len(cs)
            order = np.argsort(-po, kind="stable")[:max_categories]
            x = np.arange(order.size)
            ax.bar(x - 0.2, po[order], width=0.4, label="original", color="#4C72B0")
            ax.bar(x + 0.2, ps[order], width=0.4, label="synthetic", color="#DD8452")
            ax.set_xticks(x)
            ax.set_xticklabels([str(u) for u in np.asarray(uniq, dtype=object)[order]], rotation=90, fontsize=7)
            ax.set_ylabel("relative frequency")
        else:
            for vals, lab, col in ((o, "original", "#4C72B0"), (s, "synthetic", "#DD8452")):
                v = np.sort(pd.to_numeric(vals, errors="coerce").dropna().to_numpy())
                ax.step(v, np.arange(1, v.size + 1) / max(v.size, 1), where="post", label=lab, color=col)
            ax.set_ylabel("cumulative share")
        ax.set_title(str(c), fontsize=9)
    for ax in axes.ravel()[len(cols) :]:
        ax.set_visible(False)
    axes.ravel()[0].legend(fontsize=8)
    return _save(plt, fig, path)


def plot_propensity(propensity: Any, path: "str | os.PathLike[str]", bins: int = 40) -> Path:
    """Histograms of the propensity scores of original and synthetic records (one result or several)."""
    plt = _pyplot()
    results = list(propensity) if isinstance(propensity, (list, tuple)) else [propensity]
    fig, axes = plt.subplots(1, len(results), figsize=(4.5 * len(results), 3.2), squeeze=False)
    for i, (ax, r) in enumerate(zip(axes.ravel(), results)):
        edges = np.linspace(0.0, 1.0, bins + 1)
        ax.hist(r.scores[~r.is_synthetic], bins=edges, alpha=0.55, density=True, label="original", color="#4C72B0")
        ax.hist(r.scores[r.is_synthetic], bins=edges, alpha=0.55, density=True, label="synthetic", color="#DD8452")
        ax.axvline(r.c, color="k", lw=0.8, ls="--")
        ax.set_xlabel("propensity of being synthetic")
        ax.set_title(
            f"implicate {i + 1}: pMSE ratio {r.pmse_ratio:.3g}, SPECKS {r.specks:.3f}, AUC {r.auc:.3f}", fontsize=8
        )
    axes.ravel()[0].legend(fontsize=8)
    return _save(plt, fig, path)


def write_microdata_plots(
    evaluation: Any,
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    directory: "str | os.PathLike[str]",
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
) -> list[Path]:
    """Write ``univariate.png`` and ``propensity.png`` for an evaluation into ``directory``."""
    from ..io import ensure_writable_dir

    d = Path(directory)
    ensure_writable_dir(d)
    return [
        plot_univariate(original, synthetic, d / "univariate.png", columns, categorical=categorical),
        plot_propensity(list(evaluation.propensity), d / "propensity.png"),
    ]
