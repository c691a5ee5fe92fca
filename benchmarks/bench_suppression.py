"""Benchmark: cell suppression against Statistics Norway's GaussSuppression (R), in the same run.

Workload (default): 1e6 records over 6 variables of 30 x 2 x 15 x 8 x 10 x 10 categories (720,000
combinations; category weights gamma(0.3), seed 2024, so some categories are rare), 45,870 non-empty
inner cells, published as all 2-way margins ``(geo+sex+age+edu+occ+cob)^2`` (1,912 non-empty
cells), frequency rule maxN = 2 (counts 1..2 primary), zeros neither primary nor secondary.

Both sides get the same input, the frequency table of the non-empty inner cells (CSV), and the same
publication: R ``SuppressSmallCounts(..., extend0 = FALSE, singletonMethod = "none")``, cellsafe
``CellSuppression(rules=['freq<=2'])`` (its publication of a CountTable is its non-zero cells, and it
has no singleton handling, hence R's ``"none"``).  ``--r-default`` also runs R with its own singleton
handling (``"anySum"``), which suppresses more.

Why not the package's spec defaults and the larger hypercube: ``SuppressSmallCounts``'s spec sets
``extend0 = TRUE``, which makes every combination of categories an inner cell (720,000 here, 2.52M
for 50 x 2 x 21 x 8 x 10 x 15), and GaussSuppression's elimination runs over the inner cells with
fill-in: its time grows with inner cells x published cells.  On 50 x 2 x 21 x 8 x 10 x 15 with
gamma(1) weights it had not finished in 300 s at 1e4 records (9,453 inner cells, 3,362 published)
nor at 1e5 or 1e6 records; ``--sizes 50,2,21,8,10,15 --shape 1 --r-timeout 600`` reproduces that.

Reported: published, primary and suppressed cells of each side, whether the patterns are the same
cell by cell, whether cellsafe's pattern passes :func:`cellsafe.metrics.audit_suppression` (every
suppressed cell's interval of positive width), times in the call (R: ``SuppressSmallCounts``;
cellsafe: publication, primary and secondary suppression) and of the whole process (Rscript; the
``cellsafe publish ... --method suppress --rule 'freq<=2'`` command on the same table), peak memory
of each process, the versions, and the load average.  R is skipped with a message when Rscript or
GaussSuppression is missing.

Run: ``python benchmarks/bench_suppression.py [n_records] [--sizes K,K,...] [--shape A] [--r-default]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import run_process  # noqa: E402

NAMES = ("geo", "sex", "age", "edu", "occ", "cob")
SIZES = (30, 2, 15, 8, 10, 10)
SHAPE = 0.3
SEED = 2024
FORMULA = "(geo+sex+age+edu+occ+cob)^2"

R_SCRIPT = """
suppressPackageStartupMessages({library(SSBtools); library(GaussSuppression)})
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], colClasses = c(rep("character", 6), "integer"))
t0 <- proc.time()[["elapsed"]]
out <- SuppressSmallCounts(data = d, maxN = 2, freqVar = "n", formula = ~(geo + sex + age + edu + occ + cob)^2,
                           protectZeros = FALSE, secondaryZeros = FALSE, extend0 = FALSE,
                           singletonMethod = args[2], printInc = FALSE)
t1 <- proc.time()[["elapsed"]]
write.csv(out, args[3], row.names = FALSE)
cat(sprintf("RESULT %d %d %d %.3f %s %s %s\\n", nrow(out), sum(out$primary), sum(out$suppressed), t1 - t0,
            packageVersion("GaussSuppression"), packageVersion("SSBtools"), getRversion()), file = stderr())
"""

OURS_SCRIPT = """
import sys, time
import pandas as pd
import cellsafe
from cellsafe.mechanisms import CellSuppression
names = ["geo", "sex", "age", "edu", "occ", "cob"]
d = pd.read_csv(sys.argv[1], dtype={v: str for v in names})
t0 = time.perf_counter()
table = cellsafe.CountTable.from_frame(d, names, "n")
[res] = CellSuppression(sys.argv[2], rules=["freq<=2"]).sample(table)
dt = time.perf_counter() - t0
res.to_frame().to_csv(sys.argv[3], index=False)
s = res.suppression
n_primary = (s == "primary").sum()
sys.stderr.write(f"RESULT {res.n_published} {n_primary} {res.n_suppressed} {dt:.3f} {cellsafe.__version__}\\n")
"""


def records(n: int, sizes=SIZES, shape: float = SHAPE, seed: int = SEED) -> pd.DataFrame:
    """n records over the variables NAMES of ``sizes`` categories, each with gamma(shape) category weights."""
    rng = np.random.default_rng(seed)
    cols = {}
    for name, k in zip(NAMES, sizes):
        w = rng.gamma(shape, 1.0, k)
        labels = np.array([f"{name[0]}{i:02d}" for i in range(k)], dtype=object)
        cols[name] = labels[rng.choice(k, n, p=w / w.sum())]
    return pd.DataFrame(cols)


def frequency_table(recs: pd.DataFrame) -> pd.DataFrame:
    """The non-empty inner cells of the records with their counts ``n``, sorted by the variables."""
    return recs.groupby(list(recs.columns), sort=True).size().rename("n").reset_index()


def _result(stderr: str) -> list[str] | None:
    lines = [ln.split()[1:] for ln in stderr.splitlines() if ln.startswith("RESULT ")]
    return lines[-1] if lines else None


def _pattern(path: Path) -> pd.Series:
    """Suppressed (True/False) by published cell, keyed by the variables' codes."""
    d = pd.read_csv(path, dtype=str, keep_default_na=False)
    key = d[list(NAMES)].agg("|".join, axis=1)
    flag = d["suppressed"].eq("TRUE") if "suppressed" in d else d["suppression"].ne("")
    return pd.Series(flag.to_numpy(), index=key.to_numpy()).sort_index()


def _run_r(folder: Path, method: str, timeout: float) -> tuple[list[str] | None, float, float, str]:
    out = folder / f"r_{method}.csv"
    argv = ["timeout", str(int(timeout)), "Rscript", folder / "gs.R", folder / "table.csv", method, out]
    try:
        wall, peak, err = run_process(argv)
    except RuntimeError as e:
        return None, float("nan"), float("nan"), str(e)
    return _result(err), wall, peak, str(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=float, default=1e6)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--shape", type=float, default=SHAPE)
    ap.add_argument("--r-default", action="store_true", help="also run R with its default singleton handling")
    ap.add_argument("--r-timeout", type=float, default=1800)
    args = ap.parse_args(argv)
    import cellsafe
    from cellsafe.mechanisms import CellSuppression
    from cellsafe.metrics import audit_suppression

    n, sizes = int(args.n), tuple(int(k) for k in args.sizes.split(","))
    folder = Path(tempfile.mkdtemp())
    try:
        table = frequency_table(records(n, sizes, args.shape))
        table.to_csv(folder / "table.csv", index=False)
        print(f"cell suppression vs GaussSuppression: {n:,} records, 6 variables of {' x '.join(map(str, sizes))} "
              f"categories (gamma({args.shape:g}) weights), {len(table):,} non-empty inner cells, all 2-way margins, "
              f"maxN = 2; load average {os.getloadavg()[0]:.2f}")
        (folder / "ours.py").write_text(OURS_SCRIPT)
        ours = [sys.executable, folder / "ours.py", folder / "table.csv", FORMULA, folder / "ours.csv"]
        wall, peak, err = run_process(ours)
        cells, prim, supp, call, version = _result(err)
        print(f"  cellsafe {version}: {int(cells):,} published cells, {prim} primary, {supp} suppressed; "
              f"{float(call):.2f} s in the call, {wall:.2f} s whole process, peak {peak / 1024:.2f} GB")
        cli = [sys.executable, "-m", "cellsafe.cli.main", "publish", folder / "table.csv", "--count", "n",
               "--variables", ",".join(NAMES), "--formula", FORMULA, "--method", "suppress", "--rule", "freq<=2",
               "--output", folder / "cli.csv", "--overwrite", "--quiet"]
        cli_wall, cli_peak, _ = run_process(cli)
        print(f"  cellsafe publish --method suppress --rule 'freq<=2' (same table): {cli_wall:.2f} s whole process, "
              f"peak {cli_peak / 1024:.2f} GB")
        read = pd.read_csv(folder / "table.csv", dtype={v: str for v in NAMES})
        t = cellsafe.CountTable.from_frame(read, list(NAMES), "n")
        [res] = CellSuppression(FORMULA, rules=["freq<=2"]).sample(t)
        audit = audit_suppression(res, inner=res.publication.inner_counts(t))
        print(f"  audit of cellsafe's pattern: {audit!r}")
        if shutil.which("Rscript") is None:
            print("  R skipped: Rscript not found")
            return
        (folder / "gs.R").write_text(R_SCRIPT)
        for method in ["none"] + (["default"] * args.r_default):
            r_method = "anySum" if method == "default" else method
            got, r_wall, r_peak, info = _run_r(folder, r_method, args.r_timeout)
            if got is None:
                print(f"  GaussSuppression (singletonMethod {r_method!r}): not finished within {args.r_timeout:.0f} s "
                      f"or failed ({info.strip()[-200:]})")
                continue
            r_cells, r_prim, r_supp, r_call, gs, ssb, rv = got
            print(f"  GaussSuppression {gs} (SSBtools {ssb}, R {rv}), singletonMethod {r_method!r}: {int(r_cells):,} "
                  f"cells, {r_prim} primary, {r_supp} suppressed; {float(r_call):.2f} s in the call, {r_wall:.2f} s "
                  f"whole process, peak {r_peak / 1024:.2f} GB")
            a, b = _pattern(folder / "ours.csv"), _pattern(Path(info))
            same = a.index.equals(b.index) and bool((a == b).all())
            print(f"    suppressed cellsafe / GaussSuppression: {int(supp) / max(1, int(r_supp)):.3f}; same pattern "
                  f"cell by cell: {same}; time GaussSuppression / cellsafe: {float(r_call) / float(call):.1f}x in the "
                  f"call, {r_wall / cli_wall:.1f}x whole process (Rscript vs cellsafe publish)")
        print(f"  load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
