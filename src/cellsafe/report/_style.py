"""One style for every figure: a colour-blind safe palette doubled by markers, line styles and
hatches (so that series stay apart in greyscale), titles wrapped to the figure's width, and SVG
with its text kept as text and a title for screen readers.

The palette is Okabe and Ito's (2008), designed to stay distinct under the common forms of colour
blindness; each series also gets its own marker, dash pattern or hatch, since several of the
colours have close luminance once printed in grey.
"""

from __future__ import annotations

import contextlib
import html
import io
import textwrap
from typing import Any, Iterator

import numpy as np

__all__ = ["PALETTE", "MARKERS", "LINESTYLES", "HATCHES", "styled", "new_figure", "wrap", "figure_svg", "log_scale_wanted"]

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 3)))
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "--", "oo")

# Styles shared by all figures (rc names of matplotlib 3.8+).
_RC: dict[str, Any] = {
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.titleweight": "bold",
    "axes.labelsize": 9.0,
    "axes.grid": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.fontsize": 8.0,
    "legend.framealpha": 0.9,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "figure.titlesize": 11.0,
    "figure.titleweight": "bold",
    "svg.fonttype": "none",  # text stays text: searchable, read aloud, sharp when printed
    "svg.hashsalt": "cellsafe",  # the same figure gives the same SVG (reproducible reports)
}


@contextlib.contextmanager
def styled() -> Iterator[None]:
    """The house style for the figures drawn (and saved) inside the block."""
    import matplotlib

    with matplotlib.rc_context(_RC):  # type: ignore[arg-type]  # the stubs list the keys as literals
        yield


def new_figure(nrows: int = 1, ncols: int = 1, size: tuple[float, float] = (6.4, 4.4)) -> tuple[Any, np.ndarray]:
    """A Figure without pyplot (no global state, no display) with constrained layout, and its axes.

    Constrained layout makes room for titles and labels, so nothing is clipped at the edges.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with styled():
        fig = Figure(figsize=size, layout="constrained")
        FigureCanvasAgg(fig)  # draws without a display (fig.canvas.draw() works)
        axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def wrap(text: str, width_inches: float, font_points: float = 10.0) -> str:
    """``text`` broken into lines that fit ``width_inches`` at ``font_points`` (bold: about 0.65 em a character)."""
    chars = max(20, int(0.92 * width_inches * 72.0 / (0.65 * font_points)))
    return "\n".join(textwrap.wrap(text, chars)) if len(text) > chars else text


def log_scale_wanted(values: Any, decades: float = 1.5) -> bool:
    """Whether positive values span more than ``decades`` powers of ten (then a log axis shows them)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return v.size >= 2 and float(np.log10(v.max() / v.min())) > decades


def figure_svg(fig: Any, title: str, description: str = "") -> str:
    """The figure as an inline ``<svg>`` element with ``role="img"``, an ``aria-label`` and a ``<title>``.

    The XML prologue and DOCTYPE are dropped (not allowed inside HTML); the document's date is not
    written, so the same figure gives the same bytes.
    """
    buf = io.StringIO()
    with styled():
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    start = svg.find("<svg")
    svg = svg[start:]
    head_end = svg.find(">") + 1
    label = html.escape(title if not description else f"{title}. {description}", quote=True)
    opening = svg[:head_end].replace("<svg", f'<svg role="img" aria-label="{label}"', 1)
    return opening + f"<title>{html.escape(title)}</title>" + svg[head_end:]
