"""cellsafe's side of bench_peers_published.py for records handed in as a pandas frame, as a user would script it.

Usage: ``python ckm_frame.py records.parquet ptable.csv var,var,... out.csv``: reads the records with pandas,
perturbs them in the call (CellKeyMethod.perturb on the frame) and writes the release.  Prints the CPU seconds
of the call to stderr.
"""

import sys
import time

import pandas as pd

from cellsafe.mechanisms import CellKeyMethod, PTable

records, ptable_path, variables, out = sys.argv[1:5]
names = variables.split(",")
data = pd.read_parquet(records)
ckm = CellKeyMethod(PTable.read(ptable_path), ":".join(names) + " - 1")
t0 = time.process_time()
release = ckm.perturb(data, variables=names, record_key="record_key")
print(f"call {time.process_time() - t0:.3f}", file=sys.stderr)
release.write_csv(out)
