"""Benchmark: every microdata metric on the full Adult data (48,842 records, 14 variables).

Runs :func:`cellsafe.metrics.microdata.evaluate_microdata` (propensity metrics with 106
parameters, 469 one-, two- and three-way tables, attribute disclosure, distance to closest record
and membership inference with a holdout) on independent-column synthetic data, reports the time of
each part, and compares two metrics with plain-Python baselines run in the same process:

- DiSCO / repU computed record by record with dictionaries;
- the two-way table statistics (VW over all pairs) counted record by record with dictionaries.

Usage: ``python benchmarks/bench_microdata.py [path/to/adult.csv]``; the default is the copy
committed with the tests (``tests/reference/adult/adult.csv.gz``).  Prints ratios, asserts
nothing about time.
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from cellsafe.metrics.microdata import (
    attribute_disclosure,
    distance_to_closest_record,
    evaluate_microdata,
    membership_inference,
    propensity_metrics,
    table_utilities,
)

from _timing import timed

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "reference" / "adult" / "adult.csv.gz"
KEYS = ["age", "sex", "race", "occupation"]
TARGET = "income>50K"


def _naive_disco(o: pd.DataFrame, s: pd.DataFrame, keys: list[str], target: str) -> tuple[float, float]:
    """DiSCO and repU with Python loops and dictionaries (the baseline)."""
    syn_groups: dict[tuple, Counter] = defaultdict(Counter)
    for row in s[keys + [target]].itertuples(index=False):
        syn_groups[tuple(row[:-1])][row[-1]] += 1
    orig_q: Counter = Counter()
    rows = list(o[keys + [target]].itertuples(index=False))
    for row in rows:
        orig_q[tuple(row[:-1])] += 1
    disco = repu = 0
    for row in rows:
        q, t = tuple(row[:-1]), row[-1]
        g = syn_groups.get(q)
        if g and len(g) == 1 and t in g:
            disco += 1
        if orig_q[q] == 1 and g is not None and sum(g.values()) == 1:
            repu += 1
    return disco / len(rows), repu / len(rows)


def _naive_twoway_vw(o: pd.DataFrame, s: pd.DataFrame) -> float:
    """Mean S_VW over all two-way tables (columns used by value), counted record by record."""
    cols = list(o.columns)
    ro = list(o.itertuples(index=False))
    rs = list(s.itertuples(index=False))
    c = len(rs) / (len(ro) + len(rs))
    vals = []
    for i, j in itertools.combinations(range(len(cols)), 2):
        co: Counter = Counter((r[i], r[j]) for r in ro)
        cs: Counter = Counter((r[i], r[j]) for r in rs)
        cells = set(co) | set(cs)
        vw = 0.0
        for cell in cells:
            a, b = co.get(cell, 0), cs.get(cell, 0)
            vw += (b - a * c / (1 - c)) ** 2 / ((a + b) * c)
        vals.append(vw / (len(cells) - 1))
    return float(np.mean(vals))


def main(path: str | None = None) -> None:
    adult = pd.read_csv(Path(path) if path else DEFAULT)
    gen = np.random.default_rng(2026)
    synthetic = pd.DataFrame({c: gen.permutation(adult[c].to_numpy()) for c in adult.columns})
    holdout = adult.sample(10000, random_state=1)
    print(f"Adult: {len(adult)} records, {adult.shape[1]} variables; independent-column synthetic data")

    ev, t_all = timed(
        evaluate_microdata, adult, synthetic, keys=KEYS, target=TARGET, holdout=holdout, n_sample=1000, rng=1
    )
    s = ev.to_dict()
    print(f"evaluate_microdata, all metrics:        {t_all:7.2f} s  (target: under 30 s)")
    print(f"  pMSE ratio {s['utility']['pmse_ratio']:.1f}, SPECKS {s['utility']['specks']:.3f}, "
          f"AUC {s['utility']['auc']:.3f}, repU {s['risk']['repU']:.4f}, DiSCO {s['risk']['DiSCO']:.4f}, "
          f"TCAP {s['risk']['TCAP']:.4f}")

    _, t_p = timed(propensity_metrics, adult, synthetic, rng=1)
    print(f"  propensity (logit, {ev.propensity[0].n_params} parameters):   {t_p:7.2f} s")
    tabs, t_t = timed(lambda: [table_utilities(adult, synthetic, tables=w) for w in ("oneway", "twoway", "threeway")])
    print(f"  tables ({sum(len(x) for x in tabs)} one/two/three-way):     {t_t:7.2f} s")
    ad, t_a = timed(attribute_disclosure, adult, synthetic, KEYS, TARGET)
    print(f"  attribute disclosure:                 {t_a:7.2f} s")
    _, t_d = timed(distance_to_closest_record, adult, synthetic, holdout, n_sample=1000, rng=1)
    _, t_m = timed(membership_inference, adult, synthetic, holdout, n_sample=1000, rng=1)
    print(f"  distance to closest record:           {t_d:7.2f} s")
    print(f"  membership inference:                 {t_m:7.2f} s")

    (disco, repu), t_nd = timed(_naive_disco, adult, synthetic, KEYS, TARGET)
    assert abs(disco - ad.DiSCO) < 1e-12 and abs(repu - ad.repU) < 1e-12
    print(f"baseline DiSCO/repU (Python loops):     {t_nd:7.2f} s   ratio baseline / cellsafe = {t_nd / t_a:6.1f}")
    two, t_2 = timed(table_utilities, adult, synthetic, tables="twoway", categorical=list(adult.columns))
    nv, t_n2 = timed(_naive_twoway_vw, adult, synthetic)
    assert abs(nv - two["S_VW"].mean()) < 1e-9 * max(1.0, nv)
    print(f"baseline two-way VW (Python loops):     {t_n2:7.2f} s   ratio baseline / cellsafe = {t_n2 / t_2:6.1f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
