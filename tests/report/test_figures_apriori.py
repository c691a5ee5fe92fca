"""Figures of a priori and empirical risk and utility: they draw, label their axes and save."""

import pytest

from cellsafe import CountTable, Variable
from cellsafe.distributions import GAF, NBI
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms.saturated import SaturatedSynthesizer
from cellsafe.report import (
    plot_frontier,
    plot_reverse_transitions,
    plot_synthetic_vs_original,
    plot_tau4,
    plot_transitions,
    save_figure,
)
from cellsafe.tuning import frontier

SIZES = {0: 4000, 1: 300, 2: 150, 3: 80, 5: 50, 10: 30, 25: 10, 80: 4}


def _labelled(fig):
    for ax in fig.axes:
        if ax.get_visible():
            assert ax.get_xlabel() and ax.get_ylabel()


@pytest.mark.slow
def test_frontier_figure(tmp_path):
    f = frontier(SIZES, families=["poisson", "nbi", "gaf"], n=12)
    fig = plot_frontier(f, path=tmp_path / "frontier")
    _labelled(fig)
    assert (tmp_path / "frontier.png").stat().st_size > 5000
    assert (tmp_path / "frontier.svg").read_text().startswith("<?xml")
    assert fig.axes[0].get_legend() is not None


def test_tau4_figure(tmp_path):
    fig = plot_tau4(SIZES, sigmas=[0.1, 1, 10], alphas=[0, 0.05, 0.1], path=tmp_path / "t.svg")
    _labelled(fig)
    assert len(fig.axes) == 2 and (tmp_path / "t.svg").exists()


def test_transition_figures(tmp_path):
    mechs = [SaturatedSynthesizer(GAF(2.0, nu=-0.5)), SaturatedSynthesizer(NBI(0.5), alpha=0.01)]
    fig = plot_transitions(mechs, path=tmp_path / "a.png")
    _labelled(fig)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 4
    fig = plot_reverse_transitions(SIZES, mechs, k=[1, 5, 10], path=tmp_path / "b.png")
    _labelled(fig)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 3


def test_scatter_figure(tmp_path):
    v = [Variable("a", tuple(range(50)))]
    t = CountTable(v, list(range(40)), [1 + i % 7 for i in range(40)])
    syn = SaturatedSynthesizer(NBI(0.5)).sample(t, m=2, rng=3)
    fig = plot_synthetic_vs_original(t, syn, path=tmp_path / "s.png")
    _labelled(fig)
    assert len(fig.axes) == 4


def test_bad_figure_path(tmp_path):
    fig = plot_tau4(SIZES, sigmas=[1.0], alphas=[0.0])
    with pytest.raises(InvalidArgumentError, match=".png or .svg"):
        save_figure(fig, tmp_path / "x.jpg")
