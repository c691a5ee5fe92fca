"""Writes hypercube_table.csv.gz, the input of make_hypercube.R and of the hypercube test.

1e6 records over 6 variables of 20 x 2 x 10 x 6 x 8 x 5 categories (gamma(0.25) category weights,
seed 2024), drawn by the generator of benchmarks/bench_suppression.py; the table holds the 10,769
non-empty inner cells with their counts ``n``.  Committed, so the test does not depend on numpy's
random streams.  Run from this folder: python make_hypercube_table.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from bench_suppression import frequency_table, records  # noqa: E402

table = frequency_table(records(1_000_000, sizes=(20, 2, 10, 6, 8, 5), shape=0.25, seed=2024))
table.to_csv("hypercube_table.csv.gz", index=False, compression={"method": "gzip", "mtime": 0})
print(len(table), "inner cells")
