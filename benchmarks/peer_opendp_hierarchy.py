"""Peer of bench_dp_hierarchy.py: OpenDP counting every level of a geography, as a user would script it.

Usage: ``python peer_opendp_hierarchy.py records.parquet public_codes.txt noise budget,... prefix_length,... out.npz``
(run in a virtual environment with ``opendp``).  Each level is an independent count-by-categories
query over the public codes (replace-one: symmetric distance 2), with discrete Laplace
(``noise=geometric``: the per-level values are epsilons) or discrete Gaussian noise
(``noise=discrete-gaussian``: the values are rhos).  The counts are not made consistent: OpenDP
offers no post-processing across queries.  Prints the time of the queries to stderr.
"""

import sys
import time

import numpy as np
import opendp.prelude as dp
import pyarrow.parquet as pq

dp.enable_features("contrib")

records, public, noise, budgets, prefixes, out = sys.argv[1:7]
budgets = [float(x) for x in budgets.split(",")]
prefixes = [int(x) for x in prefixes.split(",")]  # 0: the grand total; a full code length: the finest level
codes = pq.read_table(records, columns=["tract"]).column("tract").to_pylist()
with open(public) as f:
    public_codes = f.read().split()
t0 = time.perf_counter()
released = {}
space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
for level, (budget, k) in enumerate(zip(budgets, prefixes)):
    data = [c[:k] for c in codes] if k else ["" for _ in codes]
    categories = sorted({c[:k] for c in public_codes})  # public: zeros included
    if noise == "geometric":
        query = space >> dp.t.then_count_by_categories(categories, null_category=False) >> dp.m.then_laplace(2.0 / budget)
    else:
        # rho = d_in^2 / (2 scale^2) for the L2 sensitivity sqrt(2) of a moved record: scale = 1 / sqrt(budget)
        query = space >> dp.t.then_count_by_categories(categories, null_category=False, MO=dp.L2Distance[int]) >> dp.m.then_gaussian(
            float(np.sqrt(1.0 / budget))
        )
    loss = query.map(2)
    released[f"level{level}"] = np.asarray(query(data), dtype=np.int64)
    released[f"codes{level}"] = np.asarray(categories)
    released[f"loss{level}"] = np.asarray(loss)
print(f"call {time.perf_counter() - t0:.3f}", file=sys.stderr)
np.savez(out, **released)
