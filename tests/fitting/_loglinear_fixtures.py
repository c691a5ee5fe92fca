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
    """Ethnicity x age x language (20 x 19 x 7) of ``cellsafe.datasets.esc_like()``."""
    from cellsafe.datasets import esc_like

    return esc_like().margin(["ethnicity", "age", "language"])
