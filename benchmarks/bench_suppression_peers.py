"""Benchmark: cellsafe's cell suppression beside GaussSuppression (R) and pytauargus (tau-Argus on HiGHS), each release
judged by one independent attacker (``suppression_attacker.py``: linear programs over the inner cells with the
listing's lower bounds; it imports nothing from cellsafe).

Workloads (``--workload KIND:N``, repeatable; default all five):

- ``hier:N`` -- N records over 30 districts in 5 regions (6 each) x sex x 10 age groups (district weights spread
  evenly on a log scale over three orders of magnitude, age weights over one, seed 22: 142, 106 and 8 inner cells of
  1..3 at 2e4, 1e5 and 1e6 records), published with every level: (Total + 5 regions + 30 districts) x (Total + 2) x
  (Total + 10) = 1,188 cells, rule freq<=3.  The attacker's inner cells are all 600 combinations (what the file
  leaves possible).
- ``cube:N`` -- ``bench_suppression.py``'s table (6 variables of 30 x 2 x 15 x 8 x 10 x 10 categories, all 2-way
  margins, rule freq<=2).  The attacker's inner cells are the non-empty combinations: an attacker stronger than the
  file (it knows which combinations are empty), the cells every tool protected except GaussSuppression's defaults.

Tools (``--tools``, default all; a missing peer is skipped with a message):

- ``cellsafe`` -- ``CellSuppression(rules=['freq<=T'])`` (Gaussian elimination, the library's defaults), in the call
  and whole process (``cellsafe publish --method suppress``);
- ``cellsafe-optimal`` -- the same with ``secondary='optimal'`` (skipped where the library has no such method);
- ``optimal-ta`` -- cellsafe's optimal method (``mechanisms._optimal.optimal_secondary``) given tau-Argus's targets
  for FREQ(T+1, 100) instead of its own (upper bound value + min(value, T), lower bound 0, empty cells never
  withheld, cost the values): the same problem OPT solves, to compare the two solvers' secondary values;
- ``gauss`` -- GaussSuppression's ``SuppressSmallCounts(maxN = T)`` with its defaults (zeros protected, every
  combination an inner cell, singletons ``anySum``), from the private R library ``$PEERS_R_LIBS``
  (default /work/peers/Rlib);
- ``opt``, ``mod`` -- pytauargus ``protect(..., safety_rules='FREQ(T+1,100)', suppress='OPT(1,LIMIT)' / 'MOD(1)')``
  from the records (the table expanded, response a column of ones), in the Python of ``$PYTAUARGUS_PYTHON`` (default
  /work/peers/tauargus/bin/python).  FREQ(T+1, 100) makes counts 1..T unsafe with tau-Argus's widest frequency
  protection (upper and lower protection min(value, T)); hier only (a set of 2-way tables is 15 linked tables).

Reported per tool: withheld cells; primaries withheld (counts 1..T); the secondary value (sum of the withheld cells
that are not primaries); primaries whose attacker upper bound is at most T; derivable sums of primaries at most T;
withheld cells recovered exactly; CPU seconds (user + system) and wall seconds in the call and of the whole process;
peak resident memory; the load average.  A tool's published values are checked against the truth.

Run: ``python benchmarks/bench_suppression_peers.py [--workload hier:2e4 ...] [--tools cellsafe,gauss,...]
[--timeout S] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import run_usage  # noqa: E402
from bench_suppression import FORMULA as CUBE_FORMULA  # noqa: E402
from bench_suppression import NAMES as CUBE_NAMES  # noqa: E402
from bench_suppression import frequency_table, records  # noqa: E402
from suppression_attacker import attack  # noqa: E402

R_LIBS = os.environ.get("PEERS_R_LIBS", "/work/peers/Rlib")
TAU_PYTHON = os.environ.get("PYTAUARGUS_PYTHON", "/work/peers/tauargus/bin/python")
TOOLS = ("cellsafe", "cellsafe-optimal", "optimal-ta", "gauss", "opt", "mod")
HIER_NAMES = ("district", "sex", "age")
REGIONS = tuple(f"R{r}" for r in range(1, 6))
DISTRICTS = tuple(f"{r}D{d}" for r in REGIONS for d in range(1, 7))
AGES = tuple(f"A{a:02d}" for a in range(10))

# ---------------------------------------------------------------------------------------------- the tools' scripts
CELLSAFE_SCRIPT = """
import sys, time
import pandas as pd
import cellsafe
from cellsafe.mechanisms import CellSuppression
from cellsafe.published import Publication
kind, table_csv, hrc, T, secondary, out, limit = sys.argv[1:]
names = ["district", "sex", "age"] if kind == "hier" else ["geo", "sex", "age", "edu", "occ", "cob"]
d = pd.read_csv(table_csv, dtype={v: str for v in names})
c0, w0 = time.process_time(), time.perf_counter()
table = cellsafe.CountTable.from_frame(d, names, "n")
if kind == "hier":
    h = cellsafe.Hierarchy.read_hrc(hrc, level_names=["region"])
    # optimal-ta lists every cell, empty ones included, as tau-Argus does
    pub = Publication.from_formula(table, "district*sex*age", hierarchies={"district": h}, zeros=secondary == "optimal-ta")
else:
    pub = "(geo+sex+age+edu+occ+cob)^2"
kw = {"secondary": secondary, "time_limit": float(limit)} if secondary == "optimal" else {}
[res] = CellSuppression(pub, rules=[f"freq<={T}"], **kw).sample(table)
note = getattr(res, "note", "") or ""
f = res.to_frame()
f["withheld"] = f["suppression"] != ""
if secondary == "optimal-ta":  # tau-Argus's targets for FREQ(T+1,100): upper value + min(value, T), lower 0
    import numpy as np
    from cellsafe.mechanisms._optimal import optimal_secondary
    z = res.original.astype(float)
    prim = (z >= 1) & (z <= int(T))
    r = optimal_secondary(res.publication.X, z, prim, np.where(prim, z + np.minimum(z, int(T)), np.nan),
                          np.where(prim, z - np.minimum(z, int(T)), np.nan), np.full(z.size, np.nan),
                          start=f["withheld"].to_numpy(), cost="value", forced=(z == 0) & ~prim, time_limit=float(limit))
    f["withheld"] = r.suppressed
    note = r.note
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
f.drop(columns=[c for c in f.columns if c not in names + ["withheld", "count"]]).to_csv(out, index=False)
sys.stderr.write(f"RESULT {cpu:.3f} {wall:.3f} {cellsafe.__version__} {note!r}\\n")
"""

R_SCRIPT = """
suppressPackageStartupMessages({library(SSBtools); library(GaussSuppression)})
args <- commandArgs(trailingOnly = TRUE)
kind <- args[1]; T <- as.integer(args[3])
if (kind == "hier") {
  d <- read.csv(args[2], colClasses = c("character", "character", "character", "integer", "character"))
} else {
  d <- read.csv(args[2], colClasses = c(rep("character", 6), "integer"))
}
t0 <- proc.time()
if (kind == "hier") {
  out <- SuppressSmallCounts(data = d, maxN = T, freqVar = "n", dimVar = c("region", "district", "sex", "age"),
                             printInc = FALSE)
} else {
  out <- SuppressSmallCounts(data = d, maxN = T, freqVar = "n", formula = ~(geo + sex + age + edu + occ + cob)^2,
                             printInc = FALSE)
}
dt <- proc.time() - t0
out$withheld <- out$suppressed
write.csv(out, args[4], row.names = FALSE)
cat(sprintf("RESULT %.3f %.3f GaussSuppression-%s/SSBtools-%s/R-%s\\n", dt[["user.self"]] + dt[["sys.self"]],
            dt[["elapsed"]], packageVersion("GaussSuppression"), packageVersion("SSBtools"), getRversion()),
    file = stderr())
"""

TAU_SCRIPT = """
import os, sys, time, tempfile
import pandas as pd
import pytauargus
from pytauargus import protect
table_csv, hrc, T, method, out, limit = sys.argv[1:]
t = pd.read_csv(table_csv, dtype=str)
t["n"] = t["n"].astype(int)
rec = t.loc[t.index.repeat(t["n"]), ["district", "sex", "age"]].reset_index(drop=True)
rec["one"] = 1.0
spec = f"OPT(1,{int(float(limit))})" if method == "opt" else "MOD(1)"
work = tempfile.mkdtemp(prefix="tau_")
os.chdir(work)  # the engine writes its logs into the working folder
c0, w0 = time.process_time(), time.perf_counter()
res = protect(rec, ["district", "sex", "age"], response="one", safety_rules=f"FREQ({int(T) + 1},100)", suppress=spec,
              hrc={"district": hrc}, hierleadstring="@", workdir=work)
df = res.tables[0].dataframe()
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
df["withheld"] = df["status"].isin(["U", "M"])
df.rename(columns={"one": "count"}).to_csv(out, index=False)
sys.stderr.write(f"RESULT {cpu:.3f} {wall:.3f} pytauargus-{getattr(pytauargus, '__version__', '?')}\\n")
"""


# ---------------------------------------------------------------------------------------------- workloads
class Workload:
    """The inputs, the published cells (keys and true values) and the attacker's matrix X of one table."""

    def __init__(self, kind: str, n: int, folder: Path) -> None:
        self.kind, self.n, self.folder = kind, n, folder
        self.table_csv = folder / "table.csv"
        self.hrc = folder / "geo.hrc"
        if kind == "hier":
            self.threshold, self.names = 3, list(HIER_NAMES)
            t = hier_table(n)
            t.to_csv(self.table_csv, index=False)
            self.hrc.write_text("".join(f"{r}\n" + "".join(f"@{d}\n" for d in DISTRICTS if d.startswith(r)) for r in REGIONS))
            self.keys, self.X, self.truth = hier_cells(t)
        elif kind == "cube":
            self.threshold, self.names = 2, list(CUBE_NAMES)
            t = frequency_table(records(n))
            t.to_csv(self.table_csv, index=False)
            self.keys, self.X, self.truth = cube_cells(t)
        else:
            raise SystemExit(f"unknown workload {kind!r}: hier or cube")
        self.primary = (self.truth >= 1) & (self.truth <= self.threshold)

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.n:.0e}"

    def judge(self, frame: pd.DataFrame) -> dict:
        """Align a tool's output (key columns, 'withheld') with the published cells and attack it."""
        key = _key(frame, self.names)
        pos = pd.Series(np.arange(len(self.keys)), index=_key(self.keys, self.names))
        found = pos.reindex(key)
        if found.isna().any():
            bad = key[np.flatnonzero(found.isna().to_numpy())[0]]
            raise RuntimeError(f"the output has a cell {bad!r} that is not a published cell of the table")
        idx = found.to_numpy(dtype=np.int64)
        withheld = np.zeros(len(self.keys), dtype=bool)
        withheld[idx] = frame["withheld"].astype(str).str.upper().isin(["TRUE", "1", "1.0"]).to_numpy()
        listed = np.zeros(len(self.keys), dtype=bool)
        listed[idx] = True
        if "count" in frame.columns or "n" in frame.columns:
            col = "count" if "count" in frame.columns else "n"
            shown = pd.to_numeric(frame[col], errors="coerce").to_numpy()
            ok = ~withheld[idx] & ~np.isnan(shown)
            if not np.allclose(shown[ok], self.truth[idx][ok]):
                raise RuntimeError("a published value differs from the truth")
        if np.any(self.truth[~listed] != 0):
            raise RuntimeError("the output leaves out a non-empty cell")
        released = np.where(withheld, np.nan, self.truth).astype(np.float64)
        lower = 1.0 if not listed.all() else 0.0  # a file listing only non-empty cells says each listed one is >= 1
        a = attack(self.X, released, self.truth, self.primary, threshold=self.threshold, listed_lower=lower)
        sec = withheld & ~self.primary
        return {
            "listing": "non-empty cells" if lower else "every cell",
            "withheld": int(withheld.sum()),
            "primaries_withheld": int((withheld & self.primary).sum()),
            "primaries_published": int((~withheld & self.primary).sum()),
            "secondary": int(sec.sum()),
            "secondary_value": float(self.truth[sec].sum()),
            "within_rule": int(a.primaries_within.size),
            "derivable_sums": len(a.sums),
            "exact": int(a.exact.size),
            "attack_seconds": round(a.seconds, 1),
        }


def hier_table(n: int) -> pd.DataFrame:
    """The inner frequency table of the hierarchical workload (non-empty cells, with each district's region)."""
    rng = np.random.default_rng(22)
    wd, wa = 10 ** np.linspace(0, -3, len(DISTRICTS)), 10 ** np.linspace(0, -1, len(AGES))
    rng.shuffle(wd)
    rng.shuffle(wa)
    d = rng.choice(len(DISTRICTS), n, p=wd / wd.sum())
    a = rng.choice(len(AGES), n, p=wa / wa.sum())
    s = rng.choice(2, n)
    code = (d * 2 + s) * len(AGES) + a
    counts = np.bincount(code, minlength=len(DISTRICTS) * 2 * len(AGES))
    nz = np.flatnonzero(counts)
    di, rest = np.divmod(nz, 2 * len(AGES))
    si, ai = np.divmod(rest, len(AGES))
    t = pd.DataFrame({"district": np.array(DISTRICTS)[di], "sex": np.array(["F", "M"])[si], "age": np.array(AGES)[ai],
                      "n": counts[nz]})
    t["region"] = t["district"].str[:2]
    return t


def hier_cells(t: pd.DataFrame) -> tuple[pd.DataFrame, sp.csc_matrix, np.ndarray]:
    """Published cells (geo, sex, age) of every level, X over all 600 inner combinations, the true counts."""
    geo = ["Total", *REGIONS, *DISTRICTS]
    sexes = ["Total", "F", "M"]
    ages = ["Total", *AGES]
    keys = pd.DataFrame([(g, s, a) for g in geo for s in sexes for a in ages], columns=list(HIER_NAMES))
    n_inner = len(DISTRICTS) * 2 * len(AGES)
    di, rest = np.divmod(np.arange(n_inner), 2 * len(AGES))
    si, ai = np.divmod(rest, len(AGES))
    rows, cols = [], []
    for g in (np.zeros_like(di), 1 + di // 6, 1 + len(REGIONS) + di):
        for s in (np.zeros_like(si), 1 + si):
            for a in (np.zeros_like(ai), 1 + ai):
                rows.append(np.arange(n_inner))
                cols.append((g * len(sexes) + s) * len(ages) + a)
    X = sp.csc_matrix((np.ones(12 * n_inner), (np.concatenate(rows), np.concatenate(cols))), shape=(n_inner, len(keys)))
    y = np.zeros(n_inner)
    code = (pd.Index(DISTRICTS).get_indexer(t["district"]) * 2 + pd.Index(["F", "M"]).get_indexer(t["sex"])) * len(AGES)
    y[code + pd.Index(AGES).get_indexer(t["age"])] = t["n"].to_numpy()
    return keys, X, np.asarray(X.T @ y)


def cube_cells(t: pd.DataFrame) -> tuple[pd.DataFrame, sp.csc_matrix, np.ndarray]:
    """Published cells of all 2-way margins (every combination of categories of each pair), X over the non-empty
    inner cells, the true counts."""
    names = list(CUBE_NAMES)
    cats = {v: sorted(t[v].unique()) for v in names}
    codes = np.column_stack([pd.Index(cats[v]).get_indexer(t[v]) for v in names])
    crossings = [()] + [(i,) for i in range(6)] + [(i, j) for i in range(6) for j in range(i + 1, 6)]
    frames, rows, cols, offset = [], [], [], 0
    for c in crossings:
        sizes = [len(cats[names[i]]) for i in c]
        cells = np.array(np.meshgrid(*[np.arange(k) for k in sizes], indexing="ij")).reshape(len(c), -1).T if c else np.zeros((1, 0), dtype=int)
        f = pd.DataFrame({v: "Total" for v in names}, index=range(len(cells)))
        for pos, i in enumerate(c):
            f[names[i]] = np.array(cats[names[i]], dtype=object)[cells[:, pos]]
        frames.append(f)
        flat = np.zeros(len(t), dtype=np.int64)
        for i in c:
            flat = flat * len(cats[names[i]]) + codes[:, i]
        rows.append(np.arange(len(t)))
        cols.append(offset + flat)
        offset += len(cells)
    keys = pd.concat(frames, ignore_index=True)
    X = sp.csc_matrix((np.ones(sum(map(len, rows))), (np.concatenate(rows), np.concatenate(cols))), shape=(len(t), offset))
    return keys, X, np.asarray(X.T @ t["n"].to_numpy(dtype=np.float64))


def _key(frame: pd.DataFrame, names: list[str]) -> pd.Index:
    return pd.Index(frame[names].astype(str).agg("|".join, axis=1))


# ---------------------------------------------------------------------------------------------- running
def _result(stderr: str) -> list[str] | None:
    lines = [ln.split(maxsplit=4)[1:] for ln in stderr.splitlines() if ln.startswith("RESULT ")]
    return lines[-1] if lines else None


def run_tool(tool: str, w: Workload, timeout: float, limit: float) -> dict:
    out = w.folder / f"{tool}.csv"
    T = str(w.threshold)
    if tool in ("cellsafe", "cellsafe-optimal", "optimal-ta"):
        script = w.folder / "cellsafe_run.py"
        script.write_text(CELLSAFE_SCRIPT)
        secondary = {"cellsafe": "gauss", "cellsafe-optimal": "optimal", "optimal-ta": "optimal-ta"}[tool]
        argv = [sys.executable, script, w.kind, w.table_csv, w.hrc, T, secondary, out, str(limit)]
    elif tool == "gauss":
        if shutil.which("Rscript") is None or not (Path(R_LIBS) / "GaussSuppression").is_dir():
            return {"skipped": f"GaussSuppression not found (Rscript, {R_LIBS}/GaussSuppression)"}
        script = w.folder / "gs.R"
        script.write_text(R_SCRIPT)
        argv = ["env", f"R_LIBS_USER={R_LIBS}", "Rscript", script, w.kind, w.table_csv, T, out]
    else:
        if w.kind != "hier":
            return {"skipped": "tau-Argus protects one table per crossing: a set of 2-way margins is 15 linked tables"}
        if not Path(TAU_PYTHON).exists():
            return {"skipped": f"pytauargus not found ({TAU_PYTHON}; set PYTAUARGUS_PYTHON)"}
        script = w.folder / "tau.py"
        script.write_text(TAU_SCRIPT)
        argv = [TAU_PYTHON, script, w.table_csv, w.hrc, T, tool, out, str(limit)]
    u = run_usage(["timeout", str(int(timeout)), *map(str, argv)])
    if u["returncode"] != 0:
        why = "did not finish" if u["returncode"] == 124 else "failed"
        return {"skipped": f"{why} within {timeout:.0f} s: {u['stderr'].strip()[-300:]}"}
    got = _result(u["stderr"])
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    if tool == "gauss" and w.kind == "hier":
        frame = frame.rename(columns={"district": "district"})
    row = {"cpu_call": float(got[0]), "wall_call": float(got[1]), "version": got[2], "note": got[3] if len(got) > 3 else "",
           "cpu_process": u["cpu"], "wall_process": u["wall"], "peak_mb": round(u["peak_mb"])}
    row.update(w.judge(frame))
    return row


def run_cli(w: Workload, method_args: list[str], timeout: float) -> dict:
    """``cellsafe publish --method suppress`` on the workload's table, whole process (stopped after ``timeout`` s)."""
    if w.kind == "hier":
        argv = ["--variables", "district,sex,age", "--hierarchy", f"district={w.hrc}:region", "--formula", "district*sex*age",
                "--rule", "freq<=3"]
    else:
        argv = ["--variables", ",".join(CUBE_NAMES), "--formula", CUBE_FORMULA, "--rule", "freq<=2"]
    u = run_usage(["timeout", str(int(timeout)), sys.executable, "-m", "cellsafe.cli.main", "publish", w.table_csv,
                   "--count", "n", *argv, "--method", "suppress", *method_args, "--output", w.folder / "cli.csv",
                   "--overwrite", "--quiet", "--allow-long"])
    if u["returncode"] != 0:
        why = f"did not finish within {timeout:.0f} s" if u["returncode"] == 124 else "failed"
        return {"skipped": f"{why}: {u['stderr'].strip()[-300:]}"}
    return {"cpu_process": u["cpu"], "wall_process": u["wall"], "peak_mb": round(u["peak_mb"])}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", action="append", default=[], help="KIND:N, e.g. hier:2e4 or cube:1e5 (repeatable)")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--timeout", type=float, default=1800, help="seconds each tool may take")
    ap.add_argument("--limit", type=float, default=600, help="time limit of the optimal methods (s)")
    ap.add_argument("--json", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    loads = ["hier:2e4", "hier:1e5", "hier:1e6", "cube:1e5", "cube:1e6"] if not args.workload else args.workload
    tools = [t for t in args.tools.split(",") if t]
    rows = []
    for spec in loads:
        kind, _, n = spec.partition(":")
        folder = Path(tempfile.mkdtemp(prefix="supp_peers_"))
        try:
            w = Workload(kind, int(float(n)), folder)
            print(f"{w.label}: {len(w.keys):,} published cells, {int(w.primary.sum())} with counts 1..{w.threshold}, "
                  f"attacker over {w.X.shape[0]:,} inner cells; load average {os.getloadavg()[0]:.1f}", flush=True)
            for tool in tools:
                load = os.getloadavg()[0]
                row = {"workload": w.label, "tool": tool, "load": round(load, 1), **run_tool(tool, w, args.timeout, args.limit)}
                rows.append(row)
                print("  " + _line(row), flush=True)
            if "cellsafe" in tools:
                row = {"workload": w.label, "tool": "cellsafe publish", "load": round(os.getloadavg()[0], 1), **run_cli(w, [], args.timeout)}
                rows.append(row)
                print("  " + _line(row), flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


def _line(r: dict) -> str:
    if "skipped" in r:
        return f"{r['tool']}: skipped ({r['skipped']})"
    if "withheld" not in r:
        return f"{r['tool']}: {r['cpu_process']:.2f} s CPU whole process ({r['wall_process']:.2f} s wall), {r['peak_mb']} MB, load {r['load']}"
    note = r.get("note", "").strip("'\"")
    note = f"; {note}" if note else ""
    return (f"{r['tool']}: {r['withheld']} withheld ({r['primaries_withheld']} primary, {r['secondary']} secondary of value "
            f"{r['secondary_value']:.0f}), {r['primaries_published']} primaries published; attacker: {r['within_rule']} "
            f"primaries within the rule, {r['derivable_sums']} derivable sums, {r['exact']} exact; CPU {r['cpu_call']:.2f} s "
            f"in the call ({r['wall_call']:.2f} s wall), {r['cpu_process']:.2f} s whole process ({r['wall_process']:.2f} s), "
            f"{r['peak_mb']} MB, load {r['load']}, listing {r['listing']}{note}")


if __name__ == "__main__":
    main()
