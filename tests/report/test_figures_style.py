"""The figures a panel reads: labelled points, readable scales, titles inside the figure, natural
category order, every implicate shown, series told apart without colour."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cellsafe.report import natural_order, plot_frontier, plot_overlap, plot_propensity, plot_tau4, plot_univariate
from cellsafe.tuning import frontier

SIZES = {0: 4000, 1: 300, 2: 150, 3: 80, 5: 50, 10: 30, 25: 10, 80: 4}


def _inside(fig) -> None:
    """Every title and label lies within the figure (nothing clipped at the edges)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        if ax.get_visible():
            texts += [ax.title, ax.xaxis.label, ax.yaxis.label]
    for t in texts:
        if t.get_text():
            b = t.get_window_extent(renderer)
            assert b.x0 >= box.x0 - 1 and b.x1 <= box.x1 + 1 and b.y0 >= box.y0 - 1 and b.y1 <= box.y1 + 1, t.get_text()


def test_natural_order_keeps_bands_and_numbers_in_order():
    assert natural_order(["10-14", "5-9", "0-4", "15+"]) == [2, 1, 0, 3]
    assert natural_order([10, 2, 33]) == [1, 0, 2]
    assert natural_order(["b", "A", "c"]) == [1, 0, 2]


def test_frontier_points_carry_their_parameters_and_the_chosen_are_ringed():
    grid = ["nbi:sigma=0.1", "nbi:sigma=1", "nbi:sigma=10", "geometric:epsilon=1", "ckm:D=5,V=3"]
    f = frontier(SIZES, grid)
    fig = plot_frontier(f, chosen=["nbi:sigma=1"], data_name="toy data")
    ax = fig.axes[0]
    labels = {t.get_text() for t in ax.texts}
    assert labels == {"nbi:sigma=0.1", "nbi:sigma=1", "nbi:sigma=10", "geometric:epsilon=1", "ckm:D=5,V=3"}
    assert "chosen setting" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert "toy data" in ax.get_title() and "squared error per cell" in ax.get_ylabel()
    assert ax.get_yscale() == "log" and ax.yaxis_inverted()  # natural scale, better up
    markers = {tuple(c.get_paths()[0].vertices.round(3).ravel()[:6]) for c in ax.collections[:3]}
    assert len(markers) == 3  # each class its own marker: apart in greyscale too
    _inside(fig)


def test_tau4_alpha_axis_shows_the_small_values():
    fig = plot_tau4(SIZES, sigmas=[0.1, 1.0], data_name="toy data")
    right = fig.axes[1]
    assert right.get_xscale() == "symlog" and "toy data" in right.get_title()
    _inside(fig)


def test_univariate_shows_every_implicate_in_natural_order_and_folds_rare_categories():
    gen = np.random.default_rng(1)
    bands = ["0-4", "5-9", "10-14", "15-19"]
    many = [f"c{i}" for i in range(40)]
    orig = pd.DataFrame({"age": gen.choice(bands, 500), "code": gen.choice(many, 500)})
    syn = [pd.DataFrame({"age": gen.choice(bands, 500), "code": gen.choice(many, 500)}) for _ in range(3)]
    fig = plot_univariate(orig, syn, max_categories=10, data_name="toy data")
    age, code = fig.axes[0], fig.axes[1]
    assert [t.get_text() for t in age.get_xticklabels()] == bands
    ticks = [t.get_text() for t in code.get_xticklabels()]
    assert len(ticks) == 10 and ticks[-1] == "other (31)"
    legend = [t.get_text() for t in age.get_legend().get_texts()]
    assert "synthetic, mean of 3" in legend and "range over implicates" in legend
    assert "all 3 implicates" in fig._suptitle.get_text()
    _inside(fig)


def test_propensity_and_overlap_are_labelled():
    class P:
        scores = np.r_[np.linspace(0.3, 0.6, 50), np.linspace(0.4, 0.7, 50)]
        is_synthetic = np.r_[np.zeros(50, bool), np.ones(50, bool)]
        c, pmse_ratio, specks, auc = 0.5, 1.2, 0.1, 0.55

    fig = plot_propensity([P(), P()])
    assert all(ax.get_ylabel() == "density" for ax in fig.axes)
    _inside(fig)
    fig = plot_overlap({"implicate 1": [0.9, 0.8], "implicate 2": [0.7]},
                       title="CI overlap of a long regression formula y ~ a + b + c + d + e, toy data")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(t.startswith("0.5:") for t in legend)
    _inside(fig)
