"""One comparison of the report's numbers with a command's JSON, shared by the report tests."""

from __future__ import annotations

import math

import pytest


def assert_same_numbers(a, b, path: str = "", skip: tuple[str, ...] = ()) -> None:
    """Every number of ``b`` (a command's JSON) equals the report's ``a`` (None stands for NaN or infinity).

    Keys of ``b`` named in ``skip`` (fields that describe the run, not the data) are not compared.
    """
    if isinstance(b, dict):
        for key, value in b.items():
            if key in skip:
                continue
            assert_same_numbers(a[key], value, f"{path}.{key}", skip)
    elif isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_numbers(x, y, f"{path}[{i}]", skip)
    elif isinstance(b, float) and not math.isfinite(b):
        assert a is None, path
    elif isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), path
    else:
        assert a == b, path
