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
from ._style import HATCHES, LINESTYLES, MARKERS, PALETTE, log_scale_wanted, new_figure, styled, wrap

__all__ = [
    "plot_frontier",
    "plot_tau4",
    "plot_transitions",
    "plot_reverse_transitions",
    "plot_synthetic_vs_original",
    "save_figure",
]

def _figure(nrows: int = 1, ncols: int = 1, size: tuple[float, float] = (6.4, 4.8)) -> tuple[Any, np.ndarray]:
    return new_figure(nrows, ncols, size)


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
        with styled():
            fig.savefig(t, dpi=dpi, format=t.suffix.lstrip(".").lower() or "png")
    return targets


def _finish(fig: Any, path: str | Path | None) -> Any:
    if path is not None:
        save_figure(fig, path)
    return fig


def _label(mech: Any) -> str:
    """A mechanism's spec ('nbi:sigma=1,alpha=0.01'), or its repr when it has none."""
    try:
        from ..mechanisms import mechanism_spec

        return mechanism_spec(mech)
    except Exception:  # a mechanism without a spec (a ptable read from a file): its repr says what it is
        return repr(mech)


def _of(data_name: str | None) -> str:
    return f" ({data_name})" if data_name else ""


# ---------------------------------------------------------------------- frontier
def _point_label(spec: str, one_class: bool) -> str:
    """'nbi:sigma=1,alpha=0' -> 'sigma=1' within one class of mechanisms (zero parameters dropped)."""
    name, _, params = str(spec).partition(":")
    kept = [p for p in params.split(",") if p and not p.endswith("=0")]
    text = ",".join(kept)
    return text if one_class and text else f"{name}:{text}" if text else name


# Candidate offsets of a label from its point, in points: right, left, above, below, then further out.
_OFFSETS = ((5, 3), (5, -9), (-5, 3), (-5, -9), (0, 7), (0, -14), (10, 10), (10, -17), (-10, 10), (-10, -17),
            (16, 0), (-16, 0), (0, 16), (0, -22))


def _place_labels(ax: Any, xs: np.ndarray, ys: np.ndarray, texts: list[str], px: np.ndarray, py: np.ndarray,
                  size: float = 7.0) -> None:
    """Annotate each point with its text at the first offset whose box meets no other label or point.

    Greedy, in display units estimated before the final layout: labels of close settings (a
    cluster of cell key settings) spread around them instead of printing over each other.
    """
    if not texts:
        return
    ax.autoscale_view()
    scale = ax.figure.dpi / 72.0
    at = ax.transData.transform(np.c_[xs, ys])
    dots = ax.transData.transform(np.c_[px, py])
    char, height = 0.58 * size * scale, 1.25 * size * scale
    placed: list[tuple[float, float, float, float]] = []

    def clash(box: tuple[float, float, float, float]) -> int:
        x0, y0, x1, y1 = box
        n = sum(not (x1 < a or x0 > c or y1 < b or y0 > d) for a, b, c, d in placed)
        return n + int(np.sum((dots[:, 0] > x0 - 3) & (dots[:, 0] < x1 + 3) & (dots[:, 1] > y0 - 3) & (dots[:, 1] < y1 + 3)))

    for (ux, uy), text in zip(at, texts):
        width = char * len(text)
        best = None
        for dx, dy in _OFFSETS:
            x0 = ux + dx * scale - (width if dx < 0 else width / 2 if dx == 0 else 0)
            y0 = uy + dy * scale
            box = (x0, y0, x0 + width, y0 + height)
            score = clash(box)
            if best is None or score < best[0]:
                best = (score, dx, dy, box)
            if score == 0:
                break
        assert best is not None  # _OFFSETS is not empty
        _, dx, dy, box = best
        placed.append(box)
        ha = "right" if dx < 0 else "center" if dx == 0 else "left"
        ax.annotate(text, ax.transData.inverted().transform((ux, uy)), xytext=(dx, dy), textcoords="offset points",
                    fontsize=size, ha=ha, va="bottom", zorder=5)


def plot_frontier(
    frontier: Any,
    path: str | Path | None = None,
    *,
    title: str | None = None,
    data_name: str | None = None,
    chosen: Sequence[str] = (),
    labels: str = "auto",
) -> Any:
    """Risk (x) against utility (y) for every setting, each labelled with its parameters; the
    non-dominated ones joined by a line and the chosen settings ringed.

    Parameters
    ----------
    frontier : cellsafe.tuning.Frontier
    path : str or Path, optional
        Save as PNG/SVG.
    title : str, optional
        Default: 'Risk-utility frontier' with the data's name and the mechanisms.
    data_name : str, optional
        Named in the title.
    chosen : sequence of str
        Specs (the ``spec`` column) of the settings to mark as chosen.
    labels : {'auto', 'all', 'efficient', 'none'}
        Which points carry their parameters: 'auto' labels all of up to 30 points, else the
        non-dominated and chosen ones.

    Notes
    -----
    A setting whose risk is undefined (the cell key method with js >= 1 has no tau4(1)) is drawn
    as a hollow diamond in the right margin at its utility, labelled "risk undefined".
    003 Figure 6 plots 1 - tau4(1) against utility; 000 Figure 7 plots tau4(1) against
    1 - invlogit(MSE), a scale that cannot exceed 0.5 and flattens every low-noise setting near
    it.  Here the MSE utility is drawn on its natural scale, the expected squared error per cell,
    on a log axis turned so that better is up; the Hellinger utility on its own scale, with
    limits from the data.  Risk is on the x axis (lower is safer; log when it spans decades), so
    the best corner is the top left.
    """
    if labels not in ("auto", "all", "efficient", "none"):
        raise InvalidArgumentError(f"labels must be 'auto', 'all', 'efficient' or 'none'. Got {labels!r}.")
    pts = frontier.points.reset_index(drop=True)
    mse = frontier.utility == "mse"
    tv = str(frontier.utility).startswith("marginal_tv") and "marginal_tv" in pts
    if mse and "mse_per_cell" in pts:
        y = pts["mse_per_cell"].to_numpy(float)
    elif tv:
        y = pts["marginal_tv"].to_numpy(float)
    else:
        u = pts["utility"].to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            # 1 - invlogit(x) = 1 / (1 + e^x): x = log((1 - u) / u) is the MSE per cell again (inf once u underflows)
            y = np.log((1.0 - u) / u) if mse else u
    x = pts["risk"].to_numpy(float)
    classes = list(dict.fromkeys(pts["mechanism"]))
    fig, axes = _figure(size=(7.2, 5.0))
    ax = axes[0, 0]
    with styled():
        for i, name in enumerate(classes):
            sel = (pts["mechanism"] == name).to_numpy()
            ax.scatter(
                x[sel], y[sel], marker=MARKERS[i % len(MARKERS)], s=30, color=PALETTE[i % len(PALETTE)],
                edgecolor="black", linewidth=0.4, zorder=3, label=str(name),
            )
        eff = pts.index[pts["efficient"].to_numpy(bool)]
        order = eff[np.argsort(x[eff], kind="stable")]
        ax.step(x[order], y[order], where="post", color="black", lw=1.0, zorder=2, label="frontier (non-dominated)")
        picked = pts.index[pts["spec"].isin(list(chosen))] if len(chosen) else pts.index[:0]
        if len(picked):
            ax.scatter(x[picked], y[picked], s=170, facecolor="none", edgecolor="black", linewidth=1.6, zorder=4,
                       label="chosen setting")
        if labels == "all" or (labels == "auto" and len(pts) <= 30):
            shown = pts.index
        elif labels in ("auto", "efficient"):
            shown = eff.union(picked)
        else:
            shown = pts.index[:0]
        if log_scale_wanted(x):
            ax.set_xscale("log")
        if frontier.risk in ("epsilon", "rho"):
            relation = getattr(frontier, "relation", "replace-one")
            ax.set_xlabel(f"privacy loss: {frontier.risk} of one release, {relation} neighbours (lower is safer)")
        else:
            ax.set_xlabel(f"risk: a priori {frontier.risk} (lower is safer)")
        if mse or tv:
            if log_scale_wanted(y, 0.0):
                ax.set_yscale("log")
            ax.invert_yaxis()
            k = str(frontier.utility)[len("marginal_tv("):-1] if tv else ""
            ax.set_ylabel("expected squared error per cell\n(lower is better; axis turned: better is up)" if mse else
                          f"expected average TV error of the {k}-way marginals\n(lower is better; axis turned: "
                          "better is up)")
        else:
            ax.set_ylabel("expected Hellinger utility (higher is better)")
        one = len(classes) == 1
        ok = np.isfinite(x) & np.isfinite(y)
        _margin_points(ax, pts, x, y, one)
        shown = [i for i in shown if ok[i]]
        _place_labels(ax, x[shown], y[shown], [_point_label(pts.at[i, "spec"], one) for i in shown], x[ok], y[ok])
        mechs = ", ".join(map(str, classes))
        ax.set_title(wrap(title or f"Risk-utility frontier{_of(data_name)}: {mechs}", 7.0))
        ax.legend(loc="best")
    return _finish(fig, path)


def _margin_points(ax: Any, pts: Any, x: np.ndarray, y: np.ndarray, one: bool) -> None:
    """Settings whose risk is undefined but whose utility is known: a hollow marker in the right margin at their
    utility, labelled, so that no setting is dropped from the figure without a word; those whose utility is
    undefined but whose risk is known, in the bottom margin at their risk; those with neither, named under the
    axes."""
    _bottom_margin_points(ax, pts, x, y, one)
    lost = np.flatnonzero(~np.isfinite(x) & np.isfinite(y))
    if not lost.size:
        return
    where = ax.get_yaxis_transform()  # x in axes coordinates, y in data coordinates
    ax.scatter(np.full(lost.size, 1.03), y[lost], transform=where, clip_on=False, marker="D", s=36,
               facecolor="white", edgecolor="black", linewidth=1.0, zorder=5, label="risk undefined (margin)")
    for i in lost:
        ax.annotate(_point_label(pts.at[i, "spec"], one) + ": risk undefined", (1.05, y[i]), xycoords=where,
                    fontsize=7, va="center", ha="left", annotation_clip=False)


def _bottom_margin_points(ax: Any, pts: Any, x: np.ndarray, y: np.ndarray, one: bool) -> None:
    lost = np.flatnonzero(np.isfinite(x) & ~np.isfinite(y))
    where = ax.get_xaxis_transform()  # x in data coordinates, y in axes coordinates
    if lost.size:
        shown = y[np.isfinite(y)]
        if shown.size:  # widen the risk axis to hold them, on the utility's own range
            ax.scatter(x[lost], np.full(lost.size, shown[0]), alpha=0.0)
        ax.scatter(x[lost], np.full(lost.size, 0.03), transform=where, clip_on=False, marker="v", s=36,
                   facecolor="white", edgecolor="black", linewidth=1.0, zorder=5, label="utility undefined (foot)")
        for j, i in enumerate(lost):
            ax.annotate(_point_label(pts.at[i, "spec"], one), (x[i], 0.03), xycoords=where, xytext=(0, 6 + 8 * (j % 2)),
                        textcoords="offset points", fontsize=6, ha="center", va="bottom", annotation_clip=False)
    neither = np.flatnonzero(~np.isfinite(x) & ~np.isfinite(y))
    if neither.size:
        names = ", ".join(_point_label(pts.at[i, "spec"], False) for i in neither)
        ax.annotate(wrap(f"not on these axes (see 'undefined'): {names}", 10.0), (0.0, -0.16), xycoords="axes fraction",
                    fontsize=6, ha="left", va="top", annotation_clip=False)


# ---------------------------------------------------------------------- tau4 curves
def plot_tau4(
    table_or_cell_sizes: Any,
    *,
    sigmas: Sequence[float] | None = None,
    alphas: Sequence[float] | None = None,
    alpha_sigmas: Sequence[float] = (0.1, 1.0, 10.0),
    k: int = 1,
    path: str | Path | None = None,
    data_name: str | None = None,
) -> Any:
    """tau4(k) against sigma for NBI and PIG (alpha = 0), and against alpha for NBI (003 Fig. 1).

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
    sigmas : sequence of float, optional
        Default: 60 values log-spaced from 0.01 to 100.
    alphas : sequence of float, optional
        Default: 0 and 40 values log-spaced from 1e-5 to 0.1, on a symmetric-log axis: the
        useful range of alpha is often below 0.002, which a linear axis to 0.1 squashes.
    alpha_sigmas : sequence of float
        NBI sigmas drawn in the right panel (Poisson is added).
    data_name : str, optional
        Named in the titles.
    """
    from ..distributions import NBI, PIG, Poisson
    from ..mechanisms.saturated import SaturatedSynthesizer

    cs = apriori.cell_sizes(table_or_cell_sizes)
    s = np.geomspace(0.01, 100.0, 60) if sigmas is None else np.asarray(sigmas, dtype=float)
    a = np.r_[0.0, np.geomspace(1e-5, 0.1, 40)] if alphas is None else np.asarray(alphas, dtype=float)
    kk = np.array([k])

    def t4(mech: Any) -> float:
        return float(apriori._tau_frame(cs, mech, kk).tau4.iloc[0])

    fig, axes = _figure(1, 2, size=(11.0, 4.6))
    left, right = axes[0]
    with styled():
        left.plot(s, [t4(SaturatedSynthesizer(NBI(float(x)))) for x in s], LINESTYLES[0], color=PALETTE[0], label="NBI")
        left.plot(s, [t4(SaturatedSynthesizer(PIG(float(x)))) for x in s], LINESTYLES[1], color=PALETTE[1], label="PIG")
        left.axhline(t4(SaturatedSynthesizer(Poisson())), color="grey", lw=0.8, ls=":", label="Poisson")
        left.set_xscale("log")
        left.set_xlabel("sigma (log scale)")
        left.set_ylabel(f"tau4({k})")
        left.set_title(wrap(f"tau4({k}) against sigma, alpha = 0{_of(data_name)}", 5.0))
        left.legend()
        right.plot(a, [t4(SaturatedSynthesizer(Poisson(), alpha=float(x))) for x in a], ":", color="grey", label="Poisson")
        for i, sg in enumerate(alpha_sigmas):
            right.plot(
                a, [t4(SaturatedSynthesizer(NBI(float(sg)), alpha=float(x))) for x in a],
                linestyle=LINESTYLES[i % len(LINESTYLES)], color=PALETTE[(i + 2) % len(PALETTE)],
                label=f"NBI, sigma = {sg:g}",
            )
        positive = a[a > 0]
        if positive.size and log_scale_wanted(positive):
            right.set_xscale("symlog", linthresh=float(positive.min()))
            right.set_xlabel("alpha, pseudocount on random zeros (symmetric log scale)")
        else:
            right.set_xlabel("alpha, pseudocount on random zeros")
        right.set_ylabel(f"tau4({k})")
        right.set_title(wrap(f"tau4({k}) against alpha{_of(data_name)}", 5.0))
        right.legend()
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
        ax.bar(
            x + (i - (n - 1) / 2) * width, p, width=width, color=PALETTE[i % len(PALETTE)],
            hatch=HATCHES[i % len(HATCHES)], edgecolor="black", linewidth=0.3, label=label,
        )


def _bar_panels(
    values: list[int], panel: Any, title: str, xlabel: str, ylabel: str, path: str | Path | None,
    suptitle: str | None = None,
) -> Any:
    """One panel of bars per count v, two panels a row: ``panel(v)`` gives the x positions and
    the bar heights by label; a dotted line marks v."""
    ncols = 2 if len(values) > 1 else 1
    nrows = -(-len(values) // ncols)
    fig, axes = _figure(nrows, ncols, size=(5.2 * ncols, 3.4 * nrows + 0.6))
    with styled():
        for ax, v in zip(axes.flat, values):
            x, rows = panel(v)
            _bars(ax, rows, x)
            ax.axvline(v, color="black", lw=0.8, ls=":")
            ax.set_title(f"{title} {v}")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(False, axis="x")
        for ax in list(axes.flat)[len(values):]:
            ax.set_visible(False)
        axes.flat[0].legend()
        if suptitle:
            fig.suptitle(wrap(suptitle, 5.2 * ncols, 11.0))
    return _finish(fig, path)


def plot_transitions(
    mechanisms: Any,
    j: Sequence[int] = (1, 5, 10, 20),
    *,
    path: str | Path | None = None,
    coverage: float = 0.995,
    title: str | None = None,
) -> Any:
    """P(released k | original j) as bars, one panel per original count j (000 Figure 4).

    Parameters
    ----------
    mechanisms : CellwiseMechanism, sequence, or mapping label -> mechanism
    j : sequence of int
        Original counts, one panel each.
    coverage : float
        Each panel shows the released counts holding this much probability for every mechanism.
    title : str, optional
        Above the panels; default 'Released counts given the original' and the mechanisms.
    """
    mechs = _as_mechanisms(mechanisms)

    def panel(jv: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        k_max = max(int(np.max(m.transition_support([jv], 1.0 - coverage))) for m in mechs.values())
        k_max = max(k_max, 2 * jv, 3)
        rows = {lab: apriori.transition_table(m, [jv], k_max).to_numpy()[0] for lab, m in mechs.items()}
        return np.arange(k_max + 1), rows

    head = title or "Released counts given the original: " + "; ".join(mechs)
    return _bar_panels(
        [int(x) for x in j], panel, "original count", "released count k", "P(k | original)", path, head
    )


def plot_reverse_transitions(
    table_or_cell_sizes: Any,
    mechanisms: Any,
    k: Sequence[int] = (1, 5, 10, 20),
    *,
    path: str | Path | None = None,
    j_max_shown: int | None = None,
    data_name: str | None = None,
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

    head = f"Original counts behind a released count{_of(data_name)}: " + "; ".join(mechs)
    return _bar_panels(kk, panel, "released count", "original count j", "P(j | released)", path, head)


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
    for r, (label, table) in enumerate(syn.items()):  # drawn in the house style (see _style.py)
        g = table.lookup(idx).astype(float)
        left, right = axes[r]
        left.scatter(f, g, s=4, alpha=0.3, color=PALETTE[0], rasterized=True, label="cells")
        left.plot([0.8, top], [0.8, top], color="black", lw=0.8, label="synthetic = original")
        left.set_xscale("log")
        left.set_yscale("symlog", linthresh=1.0)
        left.set_ylim(bottom=-0.3)
        left.set_xlabel("original count")
        left.set_ylabel("synthetic count")
        left.set_title(f"{label}: synthetic against original")
        left.legend(fontsize="small", loc="upper left")
        pct = 100.0 * (g - f) / f
        right.scatter(f, pct, s=4, alpha=0.3, color=PALETTE[1], rasterized=True)
        right.axhline(0.0, color="black", lw=0.8)
        right.set_xscale("log")
        right.set_xlabel("original count")
        right.set_ylabel("100 (synthetic - original) / original")
        right.set_title(f"{label}: percentage difference")
        for ax in (left, right):
            ax.grid(True, alpha=0.3)
    return _finish(fig, path)
