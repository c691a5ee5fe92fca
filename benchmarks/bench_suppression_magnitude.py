"""Benchmark: magnitude-table cell suppression with protection levels and singletons, against Gaussian elimination alone.

What users run instead is secondary suppression that only makes primaries not computable exactly
(GaussSuppression's default, cellsafe's with ``intervals=False, singletons=False``), then an audit.
Both run here on the same magnitude tables of turnover by NACE x region x size class (lognormal
values, firms as holdings), rules p% = 15 and freq <= 2 on contributors: cells suppressed, primaries
short of their p% protection in the audit (which must be 0 with protection levels), time in the call
and the ratio.  R's SuppressDominantCells is not run: with Debian's Matrix 1.5-3 it fails inside
``max_contribution`` (shared/docs/peers.md).

Run: ``python benchmarks/bench_suppression_magnitude.py``

Profile of a larger workload (not run here: it does not finish in minutes).  The records of
benchmarks/bench_cellkey_magnitude.py, formula ``a*b*c``, every record its own contributor, rules
p% = 15 and freq <= 3 (the CLI's magnitude default is freq<=3 alone; the p% rule turns the
protection levels on), 2 cores, numpy 2.4, scipy's HiGHS:

- 1e4 records: 4,500 published cells (3,018 inner), 3,063 primaries (2,964 needing a width),
  1,629 cells with one contributor.  Gaussian elimination 3.2 s (19 secondaries).  Singletons
  333 s before the span test was shared between contributors (one full Gram-Schmidt of the
  published span per contributor alone in a withheld cell), 142 s after, of which the 29
  elimination re-runs (about 3 s each) are most.  Protection levels: one HiGHS program per side
  per primary, about 0.24 s each (3,017 equations x 9,052 variables at first, about 1,400 x
  5,800 later), so at least 5,900 programs, about 25 minutes, before any program against a single
  contributor: the programs dominate.
- 1e5 records: 8,144 published cells (6,425 inner), 3,455 primaries (3,292 needing a width),
  1,437 cells with one contributor.  Gaussian elimination 32 s (71 secondaries); the singleton
  check, shared span test and all, had not finished 200 s later (its elimination re-runs cost
  about 30 s each at this size), and the protection levels were not reached.
- 2,000 records, singletons only (``intervals=False``): 230 s before the shared span test, 4.3 s
  after, with the same pattern.

What is left is the number of programs: a cheap certificate that a side is already protected
(a feasible y reaching the target, checked exactly) would skip most of them; not done yet.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

CASES = [
    # records, categories of nace and region, formula
    (3_000, 30, 12, "nace*region"),
    (20_000, 60, 20, "(nace+region+size)^2"),
]


def _records(n: int, n_nace: int, n_region: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "nace": rng.choice(n_nace, n).astype(str),
            "region": rng.choice(n_region, n).astype(str),
            "size": rng.choice(5, n).astype(str),
        }
    )
    df["firm"] = rng.integers(0, n // 3, n)
    df["turnover"] = np.round(rng.lognormal(4, 1.5, n), 1)
    return df


def main() -> None:
    from cellsafe.mechanisms import CellSuppression, primary_cells
    from cellsafe.metrics import audit_suppression
    from cellsafe.published import magnitude_table

    rules = ["p%=15", "freq<=2"]
    for n, n_nace, n_region, formula in CASES:
        mt = magnitude_table(_records(n, n_nace, n_region), ["nace", "region", "size"], "turnover", formula, contributor="firm")
        _, need = primary_cells(rules, mt.n_contributors, mt.values, mt.top)
        print(f"{n:,} records, {formula}: {mt.publication.n_published:,} published cells, {mt.publication.n_inner:,} inner")
        times = {}
        for label, kw in (("Gaussian elimination alone", {"intervals": False, "singletons": False}), ("protection levels + singletons", {})):
            mech = CellSuppression(mt.publication, rules=rules, priority="value", **kw)
            t0 = time.perf_counter()
            res = mech.suppress_magnitude(mt)
            times[label] = time.perf_counter() - t0
            t0 = time.perf_counter()
            audit = audit_suppression(res, required=need, inner=mt.inner_values)
            t_audit = time.perf_counter() - t0
            print(f"  {label}: {int((res.suppression == 'primary').sum())} primary, {res.n_suppressed} suppressed, "
                  f"{audit.n_unsafe} short of protection, {times[label]:.2f} s (audit {t_audit:.1f} s)")
        a, b = times.values()
        print(f"  time ratio protected / Gaussian alone: {b / a:.1f}")


if __name__ == "__main__":
    main()
