"""Figures of risk and utility (matplotlib; PNG or SVG).

- :func:`plot_frontier`: risk against utility with the non-dominated set (003 Fig. 6, 000 Fig. 7);
- :func:`plot_tau4`: tau4(1) against sigma for NBI and PIG, and against alpha (003 Fig. 1);
- :func:`plot_transitions`: released counts for original counts 1, 5, 10, 20 (000 Fig. 4);
- :func:`plot_reverse_transitions`: original counts behind released counts (000 Fig. 5);
- :func:`plot_synthetic_vs_original`: synthetic against original counts and the percentage
  difference funnel (003 Fig. 2).

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (no global state,
no display needed) and, given ``path``, saves it: the format follows the suffix (.png or .svg);
a path without a suffix gets both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .. import apriori
from ..exceptions import InvalidArgumentError
from ..table import CountTable

__all__ = [
    "plot_frontier",
    "plot_tau4",
    "plot_transitions",
    "plot_reverse_transitions",
    "plot_synthetic_vs_original",
    "save_figure",
]

_MARKERS = {"poisson": "s", "nbi": "o", "pig": "^", "gaf": "D"}
_COLORS = ["#1b6ca8", "#d1495b", "#edae49", "#00798c", "#66a182", "#8d6a9f"]


def _figure(nrows: int = 1, ncols: int = 1, size: tuple[float, float] = (6.4, 4.8)) -> tuple[Any, np.ndarray]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def save_figure(fig: Any, path: str | Path, dpi: int = 150) -> list[Path]:
    """Save ``fig`` as PNG or SVG by the suffix of ``path``; no suffix: both. Returns the paths."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".png", ".svg"):
        targets = [path]
    elif suffix == "":
        targets = [path.with_suffix(".png"), path.with_suffix(".svg")]
    else:
        raise InvalidArgumentError(f"figures are saved as .png or .svg. Got {str(path)!r}.")
    for t in targets:
        t.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(t, dpi=dpi)
    return targets


def _finish(fig: Any, path: str | Path | None) -> Any:
    if path is not None:
        save_figure(fig, path)
    return fig


def _label(mech: Any) -> str:
    dist = getattr(mech, "distribution", None)
    if dist is None:
        return repr(mech)
    parts = [type(dist).__name__]
    parts += [f"{k}={v:g}" for k, v in dist.params().items()]
    if getattr(mech, "alpha", 0):
        parts.append(f"alpha={mech.alpha:g}")
    if getattr(mech, "zeros_to_ones", 0):
        parts.append(f"zeros_to_ones={mech.zeros_to_ones:g}")
    return parts[0] + ("(" + ", ".join(parts[1:]) + ")" if len(parts) > 1 else "")


# ---------------------------------------------------------------------- frontier
def plot_frontier(frontier: Any, path: str | Path | None = None, *, title: str | None = None) -> Any:
    """Risk (x) against utility (y) for every setting; the non-dominated ones joined by a line.

    Parameters
    ----------
    frontier : cellsafe.tuning.Frontier
    path : str or Path, optional
        Save as PNG/SVG.

    Notes
    -----
    003 Figure 6 plots 1 - tau4(1) against utility; 000 Figure 7 plots tau4(1) against
    1 - invlogit(MSE).  Here risk is on the x axis (lower is safer), utility on the y axis:
    the best corner is the top left.
    """
    pts = frontier.points
    fig, axes = _figure(size=(7.0, 5.0))
    ax = axes[0, 0]
    for i, (fam, grp) in enumerate(pts.groupby("family", sort=False)):
        ax.scatter(
            grp["risk"], grp["utility"], marker=_MARKERS.get(fam, "o"), s=28, alpha=0.8,
            color=_COLORS[i % len(_COLORS)], label=fam.upper() if fam != "poisson" else "Poisson",
        )
    eff = frontier.efficient
    ax.step(eff["risk"], eff["utility"], where="post", color="black", lw=1.2, label="frontier (non-dominated)")
    ax.set_xlabel(f"risk: {frontier.risk}")
    ax.set_ylabel("utility: 1 - invlogit(MSE per cell)" if frontier.utility == "mse" else "utility: expected Hellinger utility")
    ax.set_title(title or "A priori risk-utility trade-off")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small", framealpha=0.9)
    return _finish(fig, path)


# ---------------------------------------------------------------------- tau4 curves
def plot_tau4(
    table_or_cell_sizes: Any,
    *,
    sigmas: Sequence[float] | None = None,
    alphas: Sequence[float] | None = None,
    alpha_sigmas: Sequence[float] = (0.1, 1.0, 10.0),
    k: int = 1,
    path: str | Path | None = None,
) -> Any:
    """tau4(k) against sigma for NBI and PIG (alpha = 0), and against alpha for NBI (003 Fig. 1).

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
    sigmas : sequence of float, optional
        Default: 60 values log-spaced from 0.01 to 100.
    alphas : sequence of float, optional
        Default: 40 values from 0 to 0.1.
    alpha_sigmas : sequence of float
        NBI sigmas drawn in the right panel (Poisson is added).
    """
    from ..distributions import NBI, PIG, Poisson
    from ..mechanisms.saturated import SaturatedSynthesizer

    cs = apriori.cell_sizes(table_or_cell_sizes)
    s = np.geomspace(0.01, 100.0, 60) if sigmas is None else np.asarray(sigmas, dtype=float)
    a = np.linspace(0.0, 0.1, 41) if alphas is None else np.asarray(alphas, dtype=float)
    kk = np.array([k])

    def t4(mech: Any) -> float:
        return float(apriori._tau_frame(cs, mech, kk).tau4.iloc[0])

    fig, axes = _figure(1, 2, size=(11.0, 4.5))
    left, right = axes[0]
    left.plot(s, [t4(SaturatedSynthesizer(NBI(float(x)))) for x in s], "-", color=_COLORS[0], label="NBI")
    left.plot(s, [t4(SaturatedSynthesizer(PIG(float(x)))) for x in s], "--", color=_COLORS[1], label="PIG")
    left.axhline(t4(SaturatedSynthesizer(Poisson())), color="grey", lw=0.8, ls=":", label="Poisson")
    left.set_xscale("log")
    left.set_xlabel("sigma")
    left.set_ylabel(f"tau4({k})")
    left.set_title(f"tau4({k}) against sigma (alpha = 0)")
    left.legend(fontsize="small")
    left.grid(True, alpha=0.3)
    right.plot(a, [t4(SaturatedSynthesizer(Poisson(), alpha=float(x))) for x in a], ":", color="grey", label="Poisson")
    for i, sg in enumerate(alpha_sigmas):
        right.plot(
            a, [t4(SaturatedSynthesizer(NBI(float(sg)), alpha=float(x))) for x in a], "-",
            color=_COLORS[(i + 2) % len(_COLORS)], label=f"NBI, sigma = {sg:g}",
        )
    right.set_xlabel("alpha (pseudocount on random zeros)")
    right.set_ylabel(f"tau4({k})")
    right.set_title(f"tau4({k}) against alpha")
    right.legend(fontsize="small")
    right.grid(True, alpha=0.3)
    return _finish(fig, path)


# ---------------------------------------------------------------------- transition bars
def _as_mechanisms(mechanisms: Any) -> dict[str, Any]:
    if isinstance(mechanisms, Mapping):
        return dict(mechanisms)
    if not isinstance(mechanisms, (list, tuple)):
        mechanisms = [mechanisms]
    return {_label(m): m for m in mechanisms}


def _bars(ax: Any, rows: dict[str, np.ndarray], x: np.ndarray) -> None:
    n = len(rows)
    width = 0.8 / n
    for i, (label, p) in enumerate(rows.items()):
        ax.bar(x + (i - (n - 1) / 2) * width, p, width=width, color=_COLORS[i % len(_COLORS)], label=label)


def _bar_panels(
    values: list[int], panel: Any, title: str, xlabel: str, ylabel: str, path: str | Path | None
) -> Any:
    """One panel of bars per count v, two panels a row: ``panel(v)`` gives the x positions and
    the bar heights by label; a dotted line marks v."""
    ncols = 2 if len(values) > 1 else 1
    nrows = -(-len(values) // ncols)
    fig, axes = _figure(nrows, ncols, size=(5.2 * ncols, 3.6 * nrows))
    for ax, v in zip(axes.flat, values):
        x, rows = panel(v)
        _bars(ax, rows, x)
        ax.axvline(v, color="black", lw=0.8, ls=":")
        ax.set_title(f"{title} {v}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(values):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize="small")
    return _finish(fig, path)


def plot_transitions(
    mechanisms: Any, j: Sequence[int] = (1, 5, 10, 20), *, path: str | Path | None = None, coverage: float = 0.995
) -> Any:
    """P(released k | original j) as bars, one panel per original count j (000 Figure 4).

    Parameters
    ----------
    mechanisms : CellwiseMechanism, sequence, or mapping label -> mechanism
    j : sequence of int
        Original counts, one panel each.
    coverage : float
        Each panel shows the released counts holding this much probability for every mechanism.
    """
    mechs = _as_mechanisms(mechanisms)

    def panel(jv: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        k_max = max(int(np.max(m.transition_support([jv], 1.0 - coverage))) for m in mechs.values())
        k_max = max(k_max, 2 * jv, 3)
        rows = {lab: apriori.transition_table(m, [jv], k_max).to_numpy()[0] for lab, m in mechs.items()}
        return np.arange(k_max + 1), rows

    return _bar_panels([int(x) for x in j], panel, "original count", "released count k", "P(k | original)", path)


def plot_reverse_transitions(
    table_or_cell_sizes: Any,
    mechanisms: Any,
    k: Sequence[int] = (1, 5, 10, 20),
    *,
    path: str | Path | None = None,
    j_max_shown: int | None = None,
) -> Any:
    """P(original j | released k) as bars, one panel per released count k (000 Figure 5).

    Needs the table's cell sizes: the original counts behind a released count depend on how
    many cells of each size there are.  Each panel shows original counts 0 .. ``j_max_shown``
    (default max(2k + 5, 10)); the probabilities are over all original counts.
    """
    cs = apriori.cell_sizes(table_or_cell_sizes)
    mechs = _as_mechanisms(mechanisms)
    kk = [int(x) for x in k]
    tables = {lab: apriori.reverse_transition_table(cs, m, kk) for lab, m in mechs.items()}

    def panel(kv: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        j_max = max(2 * kv + 5, 10) if j_max_shown is None else int(j_max_shown)
        return np.arange(j_max + 1), {lab: _pad(t.loc[kv].to_numpy(), j_max + 1) for lab, t in tables.items()}

    return _bar_panels(kk, panel, "released count", "original count j", "P(j | released)", path)


def _pad(p: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    m = min(n, p.size)
    out[:m] = np.nan_to_num(p[:m])
    return out


# ---------------------------------------------------------------------- synthetic vs original
def plot_synthetic_vs_original(
    original: CountTable,
    synthetic: CountTable | Mapping[str, CountTable] | Sequence[CountTable],
    *,
    path: str | Path | None = None,
    max_points: int = 20000,
    rng: int = 0,
) -> Any:
    """Synthetic against original counts, and 100 (synthetic - original) / original (003 Fig. 2).

    One row of two panels per synthetic table; cells with an original count of zero are left
    out (as in 003).  At most ``max_points`` cells are drawn per table (a fixed random subset).
    """
    if isinstance(synthetic, CountTable):
        syn = {"synthetic": synthetic}
    elif isinstance(synthetic, Mapping):
        syn = dict(synthetic)
    else:
        syn = {f"implicate {i + 1}": s for i, s in enumerate(synthetic)}
    if not syn:
        raise InvalidArgumentError("give at least one synthetic table.")
    gen = np.random.default_rng(rng)
    idx = original.index
    if idx.size > max_points:
        idx = np.sort(gen.choice(idx, size=max_points, replace=False))
    f = original.lookup(idx).astype(float)
    fig, axes = _figure(len(syn), 2, size=(10.0, 3.8 * len(syn)))
    top = float(f.max()) if f.size else 1.0
    for r, (label, table) in enumerate(syn.items()):
        g = table.lookup(idx).astype(float)
        left, right = axes[r]
        left.scatter(f, g, s=4, alpha=0.3, color=_COLORS[0], rasterized=True, label="cells")
        left.plot([0.8, top], [0.8, top], color="black", lw=0.8, label="synthetic = original")
        left.set_xscale("log")
        left.set_yscale("symlog", linthresh=1.0)
        left.set_ylim(bottom=-0.3)
        left.set_xlabel("original count")
        left.set_ylabel("synthetic count")
        left.set_title(f"{label}: synthetic against original")
        left.legend(fontsize="small", loc="upper left")
        pct = 100.0 * (g - f) / f
        right.scatter(f, pct, s=4, alpha=0.3, color=_COLORS[1], rasterized=True)
        right.axhline(0.0, color="black", lw=0.8)
        right.set_xscale("log")
        right.set_xlabel("original count")
        right.set_ylabel("100 (synthetic - original) / original")
        right.set_title(f"{label}: percentage difference")
        for ax in (left, right):
            ax.grid(True, alpha=0.3)
    return _finish(fig, path)
