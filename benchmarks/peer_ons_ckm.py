"""Peer of bench_peers_published.py: the ONS cell_key_perturbation package, as a user would script it.

Usage: ``python peer_ons_ckm.py records.parquet ptable.csv geog,var,... out.csv``.  Prints the CPU
seconds of the call to stderr.
"""

import sys
import time

import pandas as pd
from cell_key_perturbation.create_perturbed_table import create_perturbed_table

records, ptable_path, variables, out = sys.argv[1:5]
data = pd.read_parquet(records)
ptable = pd.read_csv(ptable_path)
names = variables.split(",")
t0 = time.process_time()
table = create_perturbed_table(data, ptable, geog=names[:1], tab_vars=names[1:], record_key="record_key")
print(f"call {time.process_time() - t0:.3f}", file=sys.stderr)
table.to_csv(out, index=False)
