"""Shared helpers for the log-linear tests: the R fixtures and a three-way ESC-like table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from cellsafe.table import CountTable, Variable

REF = Path(__file__).resolve().parents[1] / "reference" / "loglinear"
CASES = pd.read_csv(REF / "cases.csv")
ESC_MODEL = "ethnicity*age + ethnicity*language + age*language"


def load_input(name: str) -> tuple[CountTable, list[Variable]]:
    """A fixture input with categories in order of first appearance (R's factor levels there)."""
    df = pd.read_csv(REF / name)
    variables = [Variable(c, list(pd.unique(df[c]))) for c in df.columns if c != "count"]
    return CountTable.from_frame(df, variables, count="count"), variables


def dense_from(table: CountTable) -> np.ndarray:
    out = np.zeros(table.n_cells)
    out[table.index] = table.counts
    return out


def esc_three_way() -> CountTable:
    """Ethnicity x age x language (20 x 19 x 7) of the ESC-like data.

    Uses ``cellsafe.datasets.esc_like()`` when it exists; otherwise a stand-in with the same
    shape and a similar total (8.19 million) and share of empty cells.
    """
    try:
        from cellsafe.datasets import esc_like  # type: ignore[attr-defined]

        return esc_like().margin(["ethnicity", "age", "language"])
    except (ImportError, AttributeError):
        pass
    rng = np.random.default_rng(20240611)
    eth = rng.dirichlet(np.full(20, 0.4))
    age = rng.dirichlet(np.full(19, 5.0))
    lang = rng.dirichlet(np.full(7, 0.3))
    mu = 8.19e6 * eth[:, None, None] * age[None, :, None] * lang[None, None, :]
    mu *= rng.gamma(2.0, 0.5, size=mu.shape)
    counts = rng.poisson(mu)
    variables = [
        Variable("ethnicity", [f"E{i:02d}" for i in range(20)]),
        Variable("age", [f"A{i:02d}" for i in range(19)]),
        Variable("language", [f"L{i}" for i in range(7)]),
    ]
    return CountTable.from_dense(counts, variables)
