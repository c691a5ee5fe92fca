"""Shared data for the microdata metric tests: subsamples of the Adult data (integer-coded)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ADULT = Path(__file__).resolve().parents[2] / "reference" / "adult" / "adult.csv.gz"


@pytest.fixture(scope="session")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT)


def independent_columns(df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Each column permuted on its own: the margins kept, every association destroyed."""
    return pd.DataFrame({c: rng.permutation(df[c].to_numpy()) for c in df.columns})


@pytest.fixture(scope="session")
def independent():
    """The function making independent-column synthetic data."""
    return independent_columns
