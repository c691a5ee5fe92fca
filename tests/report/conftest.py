"""A small original table, a release of it written by ``cellsafe synthesize``, and a budget log."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main

VARIABLES = "area,sex,age"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    gen = np.random.default_rng(3)
    n = 2500
    people = pd.DataFrame({
        "area": gen.choice([f"A{i}" for i in range(25)], n),
        "sex": gen.choice(["F", "M"], n),
        "age": gen.choice(["0-4", "5-9", "10-14", "15-19"], n, p=[0.4, 0.3, 0.2, 0.1]),
    })
    people.to_csv(root / "people.csv", index=False)
    assert main(["synthesize", str(root / "people.csv"), "--variables", VARIABLES, "--distribution", "nbi", "--sigma", "0.5",
                 "-m", "3", "--seed", "1", "--output", str(root / "release"), "--quiet"]) == 0
    assert main(["budget", str(root / "budget.json"), "--create", "--epsilon", "3"]) == 0
    return root
