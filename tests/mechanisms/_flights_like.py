"""A flights-like frequency table: 16 carriers x 105 destinations (6 regions) x 12 months (4 quarters).

The shape of nycflights13's carrier x destination x month, with a long tail of small cells: each
carrier serves a random set of destinations, route sizes are log-normal over three orders of
magnitude, months vary seasonally.  Made here (no data file), seeded.
"""

from __future__ import annotations

import numpy as np

from cellsafe import CountTable, Hierarchy, Variable

FORMULA = "carrier*dest + carrier*month + region*quarter"


def flights_like(seed: int = 13) -> tuple[CountTable, dict[str, Hierarchy]]:
    rng = np.random.default_rng(seed)
    carriers = [f"C{i:02d}" for i in range(16)]
    dests = [f"D{i:03d}" for i in range(105)]
    region = [f"R{i}" for i in rng.integers(0, 6, 105)]
    region[:6] = [f"R{i}" for i in range(6)]
    months = [f"{m:02d}" for m in range(1, 13)]
    size = rng.lognormal(0, 1.5, 16)
    pop = rng.lognormal(0, 1.2, 105)
    season = 1 + 0.2 * np.sin(np.arange(12) / 12 * 2 * np.pi)
    counts = np.zeros((16, 105, 12), dtype=np.int64)
    for c in range(16):
        k = max(3, int(rng.integers(3, 60) * min(1.0, size[c])))
        for d in rng.choice(105, size=min(105, k), replace=False, p=pop / pop.sum()):
            rate = 25 * size[c] * pop[d] * rng.lognormal(-1.0, 2.0)
            counts[c, d] = rng.poisson(rate * season / season.sum())
    table = CountTable.from_dense(counts, [Variable("carrier", carriers), Variable("dest", dests), Variable("month", months)])
    geo = Hierarchy.from_groups({r: [d for d, rr in zip(dests, region) if rr == r] for r in sorted(set(region))}, dests, level="region")
    qtr = Hierarchy.from_groups({f"Q{q}": months[3 * (q - 1) : 3 * q] for q in range(1, 5)}, months, level="quarter")
    return table, {"dest": geo, "month": qtr}
