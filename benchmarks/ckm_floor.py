"""The floor of bench_peers_published.py's cell key method rows: a process that only reads the records.

Usage: ``python ckm_floor.py parquet records.parquet col,col,...`` reads those columns with pyarrow, row group by
row group (the least a Parquet reader does); ``python ckm_floor.py pandas records.parquet`` imports pandas and reads
the file into a frame (what the frame rows' scripts, and the ONS script, do before their call).
"""

import sys

how, records = sys.argv[1:3]
if how == "parquet":
    import pyarrow.parquet as pq

    columns = sys.argv[3].split(",")
    with pq.ParquetFile(records) as f:
        for g in range(f.num_row_groups):
            f.read_row_group(g, columns=columns)
elif how == "pandas":
    import pandas as pd

    pd.read_parquet(records)
else:
    raise SystemExit(f"unknown floor {how!r}: parquet or pandas")
