"""Predictor matrices built the same way from confidential and from synthetic columns.

A model is fitted on a matrix built from the confidential values of its predictors and draws
from the same matrix built from their synthetic values (course 002, section 2.4 and
exercise 2.7); both come from these functions, so the two share one layout.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ._columns import Column

__all__ = ["regression_design", "tree_matrix", "design_names"]


def regression_design(
    columns: Mapping[str, Column], arrays: Mapping[str, np.ndarray], predictors: Sequence[str], n: int
) -> np.ndarray:
    """Intercept, numeric predictors and treatment dummies of categorical predictors.

    A numeric predictor with missing values in the confidential data enters as its value
    (missing filled with the observed mean) plus a missing indicator; a categorical predictor
    enters as one dummy per code after the first (a missing value is a code of its own).
    """
    blocks = [np.ones((n, 1))]
    for name in predictors:
        col, a = columns[name], arrays[name]
        if col.kind == "numeric":
            miss = np.isnan(a)
            blocks.append(np.where(miss, col.mean, a)[:, None])
            if col.has_missing:
                blocks.append(miss.astype(np.float64)[:, None])
        elif col.n_codes > 1:
            dummies = np.zeros((n, col.n_codes - 1))
            rows = np.flatnonzero(a > 0)
            dummies[rows, a[rows] - 1] = 1.0
            blocks.append(dummies)
    return np.hstack(blocks)


def design_names(columns: Mapping[str, Column], predictors: Sequence[str]) -> list[str]:
    """Names of :func:`regression_design`'s columns, as R prints them (``sexmale``)."""
    names = ["(Intercept)"]
    for name in predictors:
        col = columns[name]
        if col.kind == "numeric":
            names.append(name)
            if col.has_missing:
                names.append(f"{name}:missing")
        else:
            labels = [str(v) for v in col.labels] + (["NA"] if col.has_missing else [])
            names += [f"{name}{lab}" for lab in labels[1:]]
    return names


def tree_matrix(
    columns: Mapping[str, Column], arrays: Mapping[str, np.ndarray], predictors: Sequence[str], n: int
) -> np.ndarray:
    """One float32 column per predictor: numeric values (NaN kept) or category codes.

    Codes are in the categories' order, so a tree splits categories into ranges of that order
    (numbers-as-text and ordered categories split as a user expects).
    """
    x = np.empty((n, len(predictors)), dtype=np.float32)
    for j, name in enumerate(predictors):
        x[:, j] = arrays[name]
    return x
