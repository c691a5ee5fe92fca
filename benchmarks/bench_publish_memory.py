"""Benchmark: peak memory of ``cellsafe publish --method ckm`` against ``--method scr`` on the same file.

Both commands run whole-process on one 5e6-record Parquet file over variables of 300 x 20 x 4 x 19
categories (skewed, some categories rare) and the publication ``area*eth + sex*age``.  Small count
rounding aggregates the records in DuckDB to the table's non-zero cells; the cell key method must do
the same (counts and key sums streamed from DuckDB, never the records in pandas), so its peak
resident memory should stay within 1.3 times that of rounding.  Prints wall time and peak RSS of
each command and their ratios.

Run: ``python benchmarks/bench_publish_memory.py``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import run_process

CLI = [sys.executable, "-m", "cellsafe.cli.main"]
N = 5_000_000
FORMULA = "area*eth + sex*age"
LIMIT = 1.3


def _skewed(rng: np.random.Generator, prefix: str, k: int, n: int, shape: float) -> np.ndarray:
    """n codes of k categories with gamma-distributed weights, as strings."""
    w = rng.gamma(shape, 1.0, k)
    cats = np.array([f"{prefix}{i:03d}" for i in range(k)], dtype=object)
    return cats[rng.choice(k, n, p=w / w.sum())]


def _records(path: Path, n: int = N) -> None:
    rng = np.random.default_rng(2024)
    pd.DataFrame(
        {
            "area": _skewed(rng, "E", 300, n, 2.0),
            "eth": _skewed(rng, "G", 20, n, 1.0),
            "sex": _skewed(rng, "S", 4, n, 5.0),
            "age": _skewed(rng, "A", 19, n, 3.0),
        }
    ).to_parquet(path, index=False)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "records.parquet"
        _records(data)
        common = [*CLI, "publish", str(data), "--variables", "area,eth,sex,age", "--formula", FORMULA,
                  "--seed", "1", "--quiet", "--overwrite"]
        print(f"publish: {N:,} records (300 x 20 x 4 x 19), formula {FORMULA!r}, whole process")
        figures = {}
        for method in ("scr", "ckm"):
            out = folder / f"{method}.csv"
            ptable = ["--D", "5", "--V", "3", "--js", "2"] if method == "ckm" else []
            dt, peak, _ = run_process([*common, "--method", method, *ptable, "--output", str(out)], repeat=2)
            figures[method] = (dt, peak)
            cells = sum(1 for _ in open(out)) - 1
            print(f"  {method}: {dt:6.2f} s, peak RSS {peak:7.0f} MB, {cells:,} published cells")
        ratio = figures["ckm"][1] / figures["scr"][1]
        verdict = "within" if ratio <= LIMIT else "ABOVE"
        print(f"  ckm / scr: memory {ratio:.2f}x ({verdict} {LIMIT}x), time {figures['ckm'][0] / figures['scr'][0]:.2f}x")


if __name__ == "__main__":
    main()
