"""Benchmark: cell suppression against Statistics Norway's GaussSuppression (R), in the same run.

1e6 records over 6 variables of 50 x 2 x 21 x 8 x 10 x 15 categories (gamma-weighted, so some
categories are rare), published as all 2-way margins ``(geo+sex+age+edu+occ+cob)^2``, frequency
rule maxN = 2 (counts 1..2 primary), zeros neither primary nor secondary.  Both run on the same
frequency table (CSV); times are in the call (R: ``SuppressSmallCounts``; cellsafe: publication,
primary and secondary suppression), peak memory is the process's (``ru_maxrss``; R in its own process).  Reports suppressed cells of each, whether cellsafe's pattern
passes the audit (every suppressed cell's interval of positive width), and the time ratio.
R is skipped with a message when Rscript or GaussSuppression is missing.

Run: ``python benchmarks/bench_suppression.py [n_records]``
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

SIZES = {"geo": 50, "sex": 2, "age": 21, "edu": 8, "occ": 10, "cob": 15}

R_SCRIPT = """
suppressPackageStartupMessages({library(SSBtools); library(GaussSuppression)})
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], colClasses = c(rep("character", 6), "integer"))
t0 <- proc.time()[["elapsed"]]
out <- SuppressSmallCounts(data = d, maxN = 2, freqVar = "n", formula = ~(geo + sex + age + edu + occ + cob)^2,
                           protectZeros = FALSE, secondaryZeros = FALSE, printInc = FALSE)
t1 <- proc.time()[["elapsed"]]
cat(sprintf("%d %d %d %.3f %s %s\\n", nrow(out), sum(out$primary), sum(out$suppressed), t1 - t0,
            packageVersion("GaussSuppression"), packageVersion("SSBtools")))
"""


def _records(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(2024)
    cols = {}
    for name, k in SIZES.items():
        w = rng.gamma(1.0, 1.0, k)
        cols[name] = np.array([f"{name[0]}{i:02d}" for i in range(k)], dtype=object)[rng.choice(k, n, p=w / w.sum())]
    return pd.DataFrame(cols)


def main(n: int = 1_000_000) -> None:
    import cellsafe
    from cellsafe.mechanisms import CellSuppression
    from cellsafe.metrics import audit_suppression

    print(f"cell suppression vs GaussSuppression: {n:,} records, 6 variables, all 2-way margins, maxN = 2")
    names = list(SIZES)
    table = cellsafe.CountTable.from_frame(_records(n), names)
    folder = Path(tempfile.mkdtemp())
    try:
        frame = table.to_frame() if hasattr(table, "to_frame") else None
        if frame is None or "count" not in frame.columns:
            raise SystemExit("CountTable.to_frame() with a 'count' column is needed")
        frame.rename(columns={"count": "n"}).to_csv(folder / "table.csv", index=False)
        t0 = time.perf_counter()
        [res] = CellSuppression("(geo+sex+age+edu+occ+cob)^2", rules=["freq<=2"]).sample(table)
        ours = time.perf_counter() - t0
        n_prim = int((res.suppression == "primary").sum())
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        print(f"  cellsafe {cellsafe.__version__}: {res.n_published:,} published cells, {n_prim} primary, "
              f"{res.n_suppressed} suppressed, {ours:.2f} s, peak {peak:.2f} GB")
        t0 = time.perf_counter()
        audit = audit_suppression(res, inner=res.publication.inner_counts(table))
        print(f"  audit: {audit!r} ({time.perf_counter() - t0:.1f} s)")
        if shutil.which("Rscript") is None:
            print("  R skipped: Rscript not found")
            return
        (folder / "gs.R").write_text(R_SCRIPT)
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "MAXRSS %M", "Rscript", str(folder / "gs.R"), str(folder / "table.csv")]
            if Path("/usr/bin/time").exists() else ["Rscript", str(folder / "gs.R"), str(folder / "table.csv")],
            capture_output=True, text=True,
        )
        if proc.returncode != 0:
            print(f"  R skipped: GaussSuppression failed or is not installed ({proc.stderr.strip()[-200:]})")
            return
        n_cells, r_prim, r_supp, r_time, version, ssb = proc.stdout.split()[-6:]
        rss = [ln.split()[1] for ln in proc.stderr.splitlines() if ln.startswith("MAXRSS")]
        r_mem = f", peak {int(rss[-1]) / 1e6:.2f} GB" if rss else ""
        print(f"  GaussSuppression {version} (SSBtools {ssb}): {int(n_cells):,} cells, {r_prim} primary, {r_supp} suppressed, "
              f"{float(r_time):.2f} s{r_mem}")
        print(f"  suppressed cells cellsafe / GaussSuppression: {res.n_suppressed / max(1, int(r_supp)):.3f}; "
              f"time ratio GaussSuppression / cellsafe: {float(r_time) / ours:.1f}x")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
