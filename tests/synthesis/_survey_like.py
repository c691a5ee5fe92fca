"""A MASS::survey-like data set made here (237 students; the real one is GPL data we do not ship)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def survey_like(n: int = 237, seed: int = 0) -> pd.DataFrame:
    """Sex, Age, Height and M.I (missing together), Pulse with gaps, Exer, Smoke (young mostly never)."""
    g = np.random.default_rng(seed)
    sex = g.choice(["Female", "Male"], size=n)
    age = np.round(16.75 + g.gamma(1.2, 3.0, size=n), 3)
    height = np.round(np.where(sex == "Male", 178.0, 166.0) + g.normal(0, 7, size=n), 1)
    no_height = g.random(n) < 0.12
    height[no_height] = np.nan
    mi = np.where(no_height, None, g.choice(["Imperial", "Metric"], size=n, p=[0.33, 0.67]))
    pulse = np.round(g.normal(74, 11, size=n))
    pulse[g.random(n) < 0.19] = np.nan
    exer = g.choice(["Freq", "None", "Some"], size=n, p=[0.48, 0.1, 0.42])
    young = age < 18
    smoke = np.where(
        young & (g.random(n) < 0.9),
        "Never",
        g.choice(["Heavy", "Never", "Occas", "Regul"], size=n, p=[0.06, 0.74, 0.1, 0.1]),
    )
    return pd.DataFrame(
        {"Sex": sex, "Age": age, "Height": height, "M.I": mi, "Pulse": pulse, "Exer": exer, "Smoke": smoke}
    )
