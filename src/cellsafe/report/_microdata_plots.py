"""Figures for the microdata evaluation: univariate comparisons and propensity distributions.

:func:`plot_univariate` draws, per variable, the relative frequencies of the original and of every
synthetic implicate (categorical variables: bars in the categories' natural order, the implicates'
mean with the range across them; the rarest categories of a long list folded into 'other') or
their empirical CDFs (numeric variables: one line per implicate); :func:`plot_propensity` draws
the distributions of the propensity scores of original and synthetic records (course 002,
sections 3.3 and 3.5).  matplotlib is imported inside the functions; the figures share the
style of :mod:`cellsafe.report._style`.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ._style import HATCHES, LINESTYLES, PALETTE, new_figure, styled, wrap

__all__ = ["plot_univariate", "plot_propensity", "write_microdata_plots", "natural_order"]


def _save(fig: Any, path: "str | os.PathLike[str]") -> Path:
    """Write atomically (format from the suffix, PNG without one)."""
    from ..io import atomic_path

    target = Path(path)
    with atomic_path(target) as tmp, styled():
        fig.savefig(tmp, format=target.suffix.lstrip(".") or "png", dpi=110)
    return target


def _natural_key(value: Any) -> tuple:
    """Numbers by value, text with embedded numbers by them ('age 5-9' before 'age 10-14')."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, float(value), ())
    text = str(value)
    try:
        return (0, float(text), ())
    except ValueError:
        parts = tuple((0, float(t), "") if t.isdigit() else (1, 0.0, t.lower()) for t in re.split(r"(\d+)", text) if t)
        return (1, 0.0, parts)


def natural_order(values: Sequence[Any]) -> list[int]:
    """Positions of ``values`` in their natural order: numeric values by value, text by its
    words and numbers (so age bands keep their order), never by frequency.

    Examples
    --------
    >>> natural_order(["10-14", "5-9", "0-4"])
    [2, 1, 0]
    """
    return sorted(range(len(values)), key=lambda i: _natural_key(values[i]))


def _as_list(synthetic: Any) -> list[pd.DataFrame]:
    return list(synthetic) if isinstance(synthetic, (list, tuple)) else [synthetic]


def plot_univariate(
    original: pd.DataFrame,
    synthetic: "pd.DataFrame | Sequence[pd.DataFrame]",
    path: "str | os.PathLike[str] | None" = None,
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
    max_categories: int = 30,
    data_name: str | None = None,
) -> Any:
    """One panel per variable comparing the original and synthetic one-way distributions.

    Categorical variables (and numeric ones with at most ``max_categories`` values) get bars of
    relative frequencies in the categories' natural order (:func:`natural_order`): the original,
    and the mean over all implicates with a bar from the smallest to the largest implicate's
    share.  Beyond ``max_categories`` categories, the rarest in the original are folded into one
    'other' bar.  Other numeric variables get the empirical CDF of the original and one line per
    implicate.  Returns the figure; with ``path``, also writes it (format by the suffix).
    """
    from ..metrics.microdata import is_categorical, joint_codes

    syn = _as_list(synthetic)
    cols = list(columns) if columns is not None else [c for c in original.columns if all(c in s.columns for s in syn)]
    ncol = min(3, max(1, len(cols)))
    nrow = math.ceil(len(cols) / ncol)
    fig, axes = new_figure(nrow, ncol, (4.4 * ncol, 3.2 * nrow + 0.5))
    with styled():
        for ax, c in zip(axes.ravel(), cols):
            o = original[c]
            few = pd.concat([o, *(s[c] for s in syn)], ignore_index=True).nunique(dropna=False) <= max_categories
            if is_categorical(o, categorical) or any(is_categorical(s[c], categorical) for s in syn) or few:
                codes, uniq = joint_codes([o, *(s[c] for s in syn)])
                n = len(uniq)
                shares = np.array([np.bincount(cc, minlength=n) / max(len(cc), 1) for cc in codes])
                names = [str(u) for u in np.asarray(uniq, dtype=object)]
                keep = np.arange(n)
                if n > max_categories:  # fold the rarest categories of the original into "other"
                    top = np.sort(np.argsort(-shares[0], kind="stable")[: max_categories - 1])
                    rest = np.setdiff1d(np.arange(n), top, assume_unique=True)
                    shares = np.c_[shares[:, top], shares[:, rest].sum(axis=1)]
                    names = [names[i] for i in top] + [f"other ({rest.size})"]
                    keep = top
                order = natural_order([uniq[i] for i in keep]) + ([len(keep)] if len(names) > len(keep) else [])
                shares, names = shares[:, order], [names[i] for i in order]
                x = np.arange(len(names))
                ax.bar(x - 0.2, shares[0], width=0.4, label="original", color=PALETTE[0], edgecolor="black", linewidth=0.3)
                mean = shares[1:].mean(axis=0)
                ax.bar(x + 0.2, mean, width=0.4, color=PALETTE[1], hatch=HATCHES[1], edgecolor="black", linewidth=0.3,
                       label=f"synthetic, mean of {len(syn)}" if len(syn) > 1 else "synthetic")
                if len(syn) > 1:
                    lo, hi = shares[1:].min(axis=0), shares[1:].max(axis=0)
                    ax.errorbar(x + 0.2, mean, yerr=[mean - lo, hi - mean], fmt="none", ecolor="black", elinewidth=0.8,
                                capsize=1.5, label="range over implicates")
                ax.set_xticks(x)
                ax.set_xticklabels(names, rotation=90 if len(names) > 6 else 0, fontsize=7)
                ax.set_ylabel("relative frequency")
                ax.grid(False, axis="x")
            else:
                v = np.sort(pd.to_numeric(o, errors="coerce").dropna().to_numpy())
                ax.step(v, np.arange(1, v.size + 1) / max(v.size, 1), where="post", label="original", color=PALETTE[0], lw=1.6)
                for i, s in enumerate(syn):
                    w = np.sort(pd.to_numeric(s[c], errors="coerce").dropna().to_numpy())
                    ax.step(w, np.arange(1, w.size + 1) / max(w.size, 1), where="post", color=PALETTE[1],
                            ls=LINESTYLES[1], lw=0.8, alpha=0.8, label="synthetic (each implicate)" if i == 0 else None)
                ax.set_ylabel("cumulative share")
                ax.set_xlabel(str(c))
            ax.set_title(wrap(str(c), 4.4))
        for ax in axes.ravel()[len(cols):]:
            ax.set_visible(False)
        axes.ravel()[0].legend()
        what = f"all {len(syn)} implicates" if len(syn) > 1 else "one implicate"
        fig.suptitle(wrap(f"Original and synthetic distributions{f' of {data_name}' if data_name else ''} ({what})",
                          4.4 * ncol, 11.0))
    if path is not None:
        _save(fig, path)
        return Path(path)
    return fig


def plot_propensity(
    propensity: Any, path: "str | os.PathLike[str] | None" = None, bins: int = 40, *, title: str | None = None
) -> Any:
    """Histograms of the propensity scores of original and synthetic records (one result or several).

    The dashed line is c, the share of synthetic records among all: a propensity model that cannot
    tell the two apart puts every score near it.  ``title`` goes above the panels (the data and the
    synthesis, say).  Returns the figure; with ``path``, writes it and returns the path.
    """
    results = list(propensity) if isinstance(propensity, (list, tuple)) else [propensity]
    ncol = min(len(results), 3)
    nrow = math.ceil(len(results) / ncol)
    fig, axes = new_figure(nrow, ncol, (4.4 * ncol, 3.3 * nrow))
    edges = np.linspace(0.0, 1.0, bins + 1)
    with styled():
        for i, (ax, r) in enumerate(zip(axes.ravel(), results)):
            ax.hist(r.scores[~r.is_synthetic], bins=edges, density=True, label="original", color=PALETTE[0],
                    histtype="stepfilled", alpha=0.5, edgecolor=PALETTE[0])
            ax.hist(r.scores[r.is_synthetic], bins=edges, density=True, label="synthetic", color=PALETTE[1],
                    histtype="step", linewidth=1.4, linestyle="--")
            ax.axvline(r.c, color="black", lw=0.8, ls=":", label=f"c = {r.c:.2f}, share synthetic")
            ax.set_xlabel("propensity of being synthetic")
            ax.set_ylabel("density")
            ax.set_title(wrap(f"implicate {i + 1}: pMSE ratio {r.pmse_ratio:.3g}, SPECKS {r.specks:.3f}, "
                              f"AUC {r.auc:.3f}", 4.4, 9.0), fontsize=9)
        for ax in axes.ravel()[len(results):]:
            ax.set_visible(False)
        axes.ravel()[0].legend()
        if title:
            fig.suptitle(wrap(title, 4.4 * ncol, 11.0))
    if path is not None:
        return _save(fig, path)
    return fig


def write_microdata_plots(
    evaluation: Any,
    original: pd.DataFrame,
    synthetic: "pd.DataFrame | Sequence[pd.DataFrame]",
    directory: "str | os.PathLike[str]",
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
) -> list[Path]:
    """Write ``univariate.png`` (every implicate given) and ``propensity.png`` for an evaluation into ``directory``."""
    from ..io import ensure_writable_dir

    d = Path(directory)
    ensure_writable_dir(d)
    return [
        plot_univariate(original, synthetic, d / "univariate.png", columns, categorical=categorical),
        plot_propensity(list(evaluation.propensity), d / "propensity.png"),
    ]
