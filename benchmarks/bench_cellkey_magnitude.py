"""Benchmark: the cell key method for magnitude tables against R's cellKey, in the same run.

1e6 records over 3 variables of 50 x 20 x 10 categories, a lognormal turnover and 8-digit uniform
record keys, published as ``a*b*c`` (every margin: 11,781 cells), top_k = 3, flex function
fp = 2000, p = (0.3, 0.05), q = 3, flex weights (1, 0.5, 0.2), a generated magnitude ptable
(D = 10, V = 3, step = 2, rows 1, 5, 10).

- cellsafe: ``CellKeyMagnitude.perturb`` from the Parquet file (DuckDB pass, largest contributions,
  cell keys, perturbation), in the call; and the magnitude table alone (``published.magnitude_table``),
  which any protection of these sums needs, for scale.
- R: cellKey 1.0.2's own per-cell function ``.perturb_cell_flex`` over the same published cells, fed
  cellsafe's sums, largest contributions and cell keys (only the perturbation step, which cellKey runs
  cell by cell; its search for the largest contributions, also per cell, is not timed).  The package
  itself needs sdcTable and sdcHierarchies, which are not installable here, so its file
  ``R/utils_numtabs.R`` is sourced from a checkout named by ``CELLKEY_SRC`` (with ptable and
  data.table installed).  Reports the largest difference between the two releases as well.

Run: ``CELLKEY_SRC=/path/to/cellKey python benchmarks/bench_cellkey_magnitude.py [n_records]``
(R is skipped with a message when Rscript or CELLKEY_SRC is missing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import timed  # noqa: E402

SIZES = {"a": 50, "b": 20, "c": 10}
FLEX = dict(fp=2000.0, top_k=3, p_small=0.3, p_large=0.05, q=3.0, flex_weights=(1.0, 0.5, 0.2))

R_SCRIPT = """
suppressPackageStartupMessages(library(data.table))
args <- commandArgs(trailingOnly = TRUE)
source(file.path(args[1], "R", "utils_numtabs.R"))
.ck_digits <- function() 3
.ck_debug <- function() FALSE
ptab <- fread(args[2])
setnames(ptab, c("p_int_lb", "p_int_ub"), c("lb", "ub"))
cells <- fread(args[3])
params <- list(ptab = ptab, zs = 0, mu_c = 0,
               mult_params = list(fp = 2000, p_small = 0.3, p_large = 0.05, q = 3, epsilon = c(1, 0.5, 0.2)))
t0 <- proc.time()[["elapsed"]]
out <- numeric(nrow(cells))
for (r in seq_len(nrow(cells))) {
  x <- na.omit(c(cells$x1[r], cells$x2[r], cells$x3[r]))
  ck <- .scramble_ckeys(cells$ck[r], top_k = 3, same_key = TRUE)[seq_along(x)]
  # a cell that an earlier component took to 0 makes cellKey divide 0 by 0 (NA and an error): kept as NA
  out[r] <- tryCatch(.perturb_cell_flex(cv = cells$cv[r], x = x, ck = ck, lookup = rep("all", length(x)),
                                        prot_req = FALSE, params = params)$cv_p, error = function(e) NA_real_)
}
t1 <- proc.time()[["elapsed"]]
fwrite(data.table(released = out), args[4], na = "NA")
cat(sprintf("%.3f %s\\n", t1 - t0, R.version$version.string))
"""


def _records(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    cols: dict[str, object] = {}
    for name, k in SIZES.items():
        w = rng.gamma(1.0, 1.0, k)
        cols[name] = np.array([f"{name}{i:02d}" for i in range(k)], dtype=object)[rng.choice(k, n, p=w / w.sum())]
    cols["turnover"] = np.round(rng.lognormal(5.0, 1.8, n), 2)
    cols["rkey"] = np.round(rng.random(n), 8)
    return pd.DataFrame(cols)


def main(n: int = 1_000_000) -> None:
    from cellsafe.mechanisms import CellKeyMagnitude, MagnitudePTable
    from cellsafe.published import magnitude_table

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        path = d / "records.parquet"
        _records(n).to_parquet(path, index=False)
        pt = MagnitudePTable.generate(D=10, V=3, step=2, icat=(1, 5, 10))
        mech = CellKeyMagnitude(pt, "a*b*c", **FLEX)
        variables = list(SIZES)
        res, t_ckm = timed(mech.perturb, str(path), variables=variables, value="turnover", record_key="rkey")
        res, t_ckm2 = timed(mech.perturb, str(path), variables=variables, value="turnover", record_key="rkey")
        t_ckm = min(t_ckm, t_ckm2)
        mt, t_mt = timed(magnitude_table, str(path), variables, "turnover", "a*b*c", n_top=3)
        print(f"{n:,} records, {res.n_published:,} published cells, top_k=3")
        print(f"cellsafe CellKeyMagnitude.perturb: {t_ckm:.2f} s (the magnitude table alone: {t_mt:.2f} s, ratio {t_ckm / t_mt:.2f})")
        rscript, src = shutil.which("Rscript"), os.environ.get("CELLKEY_SRC")
        if not rscript or not src:
            print("R cellKey: skipped (needs Rscript and CELLKEY_SRC=<cellKey checkout>, with ptable and data.table)")
            return
        top = mt.top
        k = np.minimum(mt.n_contributors, 3)
        cells = pd.DataFrame({"cv": res.original, "ck": res.cell_keys})
        for j in range(3):
            cells[f"x{j + 1}"] = np.where(k > j, top[:, j], np.nan)
        assert np.allclose(mt.values, res.original)
        pt.to_frame().to_csv(d / "ptable.csv", index=False)
        cells.to_csv(d / "cells.csv", index=False, float_format="%.17g")
        (d / "peer.R").write_text(R_SCRIPT)
        r = subprocess.run([rscript, str(d / "peer.R"), src, str(d / "ptable.csv"), str(d / "cells.csv"), str(d / "r.csv")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"R cellKey: failed ({r.stderr.strip()[-500:]})")
            return
        t_r, version = r.stdout.split(maxsplit=1)
        released_r = pd.read_csv(d / "r.csv")["released"].to_numpy()
        failed = np.isnan(released_r)
        rel = np.abs(released_r - res.released)[~failed] / np.maximum(np.abs(res.original[~failed]), 1.0)
        print(f"R cellKey per-cell perturbation ({version.strip()}): {float(t_r):.2f} s; "
              f"ratio R / cellsafe (whole pipeline) {float(t_r) / t_ckm:.1f}")
        print(f"largest relative difference between the releases: {rel.max():.2e} "
              f"({int(np.sum(rel > 1e-9))} of {rel.size} cells above 1e-9); cellKey failed on {int(failed.sum())} cell(s) "
              f"that an earlier component took to 0 (cellsafe releases them as 0: {np.all(res.released[failed] == 0)})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
