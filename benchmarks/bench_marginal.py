"""Marginal-based DP synthesis on Adult: cellsafe's MST and AIM against private-pgm's, same bins, same evaluation.

For each column set (8 columns and all 14) and epsilon (0.3, 1, 3; delta 1e-9, add/remove neighbours as
private-pgm states its guarantee), every mechanism runs in its own process on the same binned records:

- cellsafe ``MarginalSynthesizer(selection="mst"|"aim", relation="add-remove")`` reading the CSV through DuckDB
  with the public domain (categories as listed; the numeric columns, more than 20 codes, in 20 equal-width public
  bins of their codes);
- private-pgm's ``mechanisms/mst.py`` and ``aim.py`` (pip package ``mbi`` in its own venv, run by
  ``peer_private_pgm.py``), skipped with a message when that venv or the mechanisms are absent; AIM runs are bounded
  by ``--aim-timeout`` (AIM did not finish in 70 minutes here before) and reported as not finished.

The evaluation is one function for all: the average total-variation distance 0.5 ||x/|x| - y/|y|||_1 between the
original's and the synthetic records' marginals, over all 1-, 2- and 3-way marginals (also per degree).  Reported
per run: CPU seconds of the call (``time.process_time``) and of the whole process (``RUSAGE_CHILDREN``), wall time,
peak memory (RSS) and the load average.

    python benchmarks/bench_marginal.py                      # 8 and 14 columns, epsilon 0.3, 1, 3
    python benchmarks/bench_marginal.py --columns 8 --epsilons 1 --seeds 3 --json out.json
    python benchmarks/bench_marginal.py --summary out.json    # mean and standard error per cell of a saved run

One seed says little: on 8 columns the spanning tree hesitates between two pairs whose qualities differ by
0.05% (occupation with relationship or with sex) and whose trees differ by 0.008 in the average error, so
compare means over ten seeds or more, with their standard errors.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SHARED = Path("/work/shared/data/adult")
COLUMNS = {
    "8": ["age", "workclass", "education-num", "marital-status", "occupation", "relationship", "sex", "income>50K"],
    "14": ["age", "workclass", "fnlwgt", "education-num", "marital-status", "occupation", "relationship", "race", "sex",
           "capital-gain", "capital-loss", "hours-per-week", "native-country", "income>50K"],
}
BINS = 20


def _paths(args: argparse.Namespace) -> tuple[Path, Path]:
    data = Path(args.data) if args.data else SHARED / "adult.csv"
    domain = Path(args.domain_sizes) if args.domain_sizes else SHARED / "adult-domain.json"
    if not data.exists():
        data = HERE.parent / "tests" / "reference" / "adult" / "adult.csv.gz"
        domain = HERE.parent / "tests" / "reference" / "adult" / "adult-domain.json"
    return data, domain


def binned_codes(data: Path, sizes: dict[str, int], cols: list[str]) -> tuple[np.ndarray, list[int]]:
    """The records' codes on the public bins (numeric columns: 20 equal-width intervals of their codes)."""
    df = pd.read_csv(data, usecols=cols)
    out, shape = [], []
    for c in cols:
        n = int(sizes[c])
        v = df[c].to_numpy()
        if n > BINS:
            v = np.searchsorted(np.linspace(0, n, BINS + 1), v, side="right") - 1
            n = BINS
        out.append(v.astype(np.int64))
        shape.append(n)
    return np.column_stack(out), shape


def tv_errors(x: np.ndarray, y: np.ndarray, shape: list[int]) -> dict[str, float]:
    """Average total-variation distance of all 1-, 2- and 3-way marginals (and per degree)."""
    d = x.shape[1]
    per: dict[int, list[float]] = {1: [], 2: [], 3: []}
    for k in (1, 2, 3):
        for c in itertools.combinations(range(d), k):
            dims = [shape[a] for a in c]
            n = math.prod(dims)
            a = np.bincount(np.ravel_multi_index(tuple(x[:, i] for i in c), dims), minlength=n)
            b = np.bincount(np.ravel_multi_index(tuple(y[:, i] for i in c), dims), minlength=n)
            per[k].append(0.5 * float(np.abs(a / a.sum() - b / b.sum()).sum()))
    allv = per[1] + per[2] + per[3]
    return {"tv_123": float(np.mean(allv)), "tv_1": float(np.mean(per[1])), "tv_2": float(np.mean(per[2])),
            "tv_3": float(np.mean(per[3]))}


# ---------------------------------------------------------------------- one run in its own process
def child(args: argparse.Namespace) -> None:
    """Run cellsafe once (this process) and write the synthetic codes."""
    import cellsafe
    from cellsafe import Domain
    from cellsafe.table import Bins

    data, domain_file = _paths(args)
    sizes = json.loads(Path(domain_file).read_text())
    cols = COLUMNS[args.columns]
    spec = {c: (Bins(np.linspace(0, sizes[c], BINS + 1)) if sizes[c] > BINS else [str(i) for i in range(sizes[c])])
            for c in cols}
    t0, w0 = time.process_time(), time.perf_counter()
    synth = cellsafe.MarginalSynthesizer(args.epsilon, delta=args.delta, selection=args.mechanism,
                                         relation="add-remove")
    rel = synth.release(str(data), Domain(spec), rng=args.seed)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    pd.DataFrame(rel.records[0], columns=cols).to_csv(args.output, index=False)
    print(json.dumps({"cpu": cpu, "wall": wall, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "rho": rel.rho, "rho_spent": rel.rho_spent, "measured": len(rel.measured),
                      "model_cells": int(rel.model.tree.n_cells)}))


def _run(cmd: list[str], timeout: float | None) -> tuple[dict | None, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, math.nan, f"not finished in {timeout:.0f} s"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    whole = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return None, whole, (proc.stderr.strip().splitlines() or ["failed"])[-1]
    return json.loads(lines[-1]), whole, ""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data")
    p.add_argument("--domain-sizes")
    p.add_argument("--columns", default="8,14")
    p.add_argument("--epsilons", default="0.3,1,3")
    p.add_argument("--delta", type=float, default=1e-9)
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--mechanisms", default="mst,aim")
    p.add_argument("--peers", default="cellsafe,private-pgm")
    p.add_argument("--peer-python", default="/work/peers/mbi/bin/python")
    p.add_argument("--peer-mechanisms", default="/work/peers/private-pgm/mechanisms")
    p.add_argument("--aim-timeout", type=float, default=1800.0, help="seconds before a private-pgm AIM run is stopped")
    p.add_argument("--peer-aim-max-model-size", type=float, default=80.0,
                   help="private-pgm AIM's max_model_size in MB (its default 80; 1 is its authors' setting for trials)")
    p.add_argument("--peer-aim-rounds", type=int, default=None,
                   help="private-pgm AIM's planned rounds T (its default 16 d; fewer rounds, fewer fits)")
    p.add_argument("--peer-aim-max-iters", type=int, default=1000,
                   help="private-pgm AIM's mirror-descent iterations per fit (its default 1000)")
    p.add_argument("--json", help="write every row here")
    p.add_argument("--summary", nargs="+", metavar="JSON", help="print the per-cell summary of saved runs and stop")
    # child mode
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--mechanism", help=argparse.SUPPRESS)
    p.add_argument("--epsilon", type=float, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--output", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    if args.summary:
        summary([r for f in args.summary for r in json.loads(Path(f).read_text())])
        return
    data, domain_file = _paths(args)
    sizes = json.loads(Path(domain_file).read_text())
    peers = args.peers.split(",")
    have_peer = Path(args.peer_python).exists() and (Path(args.peer_mechanisms) / "mst.py").exists()
    if "private-pgm" in peers and not have_peer:
        print(f"private-pgm skipped: no {args.peer_python} or {args.peer_mechanisms}/mst.py "
              "(see benchmarks/peer_private_pgm.py for the set-up)")
        peers = [x for x in peers if x != "private-pgm"]
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="bench-marginal-"))
    print(f"{'cols':>4} {'eps':>4} {'tool':12} {'mech':4} {'seed':>4} {'TV 1-3':>7} {'TV 3':>6} {'CPU call':>9} "
          f"{'CPU proc':>9} {'wall':>7} {'RSS MB':>7} {'load':>5}")
    for cols_key in args.columns.split(","):
        cols = COLUMNS[cols_key]
        x, shape = binned_codes(data, sizes, cols)
        for eps in (float(e) for e in args.epsilons.split(",")):
            for mech in args.mechanisms.split(","):
                for tool in peers:
                    for seed in range(args.first_seed, args.first_seed + args.seeds):
                        out = tmp / f"{tool}-{mech}-{cols_key}-{eps}-{seed}.csv"
                        if tool == "cellsafe":
                            cmd = [sys.executable, __file__, "--child", "--columns", cols_key, "--mechanism", mech,
                                   "--epsilon", str(eps), "--delta", str(args.delta), "--seed", str(seed),
                                   "--output", str(out)] + (["--data", args.data] if args.data else []) + (
                                ["--domain-sizes", args.domain_sizes] if args.domain_sizes else [])
                            timeout = None
                        else:
                            cmd = [args.peer_python, str(HERE / "peer_private_pgm.py"), "--mechanisms",
                                   args.peer_mechanisms, "--data", str(data), "--domain", str(domain_file),
                                   "--columns", ",".join(cols), "--bins", str(BINS), "--mechanism", mech,
                                   "--epsilon", str(eps), "--delta", str(args.delta), "--seed", str(seed),
                                   "--output", str(out), "--max-model-size", str(args.peer_aim_max_model_size),
                                   "--max-iters", str(args.peer_aim_max_iters)] + (
                                ["--rounds", str(args.peer_aim_rounds)] if args.peer_aim_rounds else [])
                            timeout = args.aim_timeout if mech == "aim" else None
                        load = os.getloadavg()[0]
                        res, whole, why = _run(cmd, timeout)
                        row = {"columns": int(cols_key), "epsilon": eps, "tool": tool, "mechanism": mech,
                               "seed": seed, "load": load, "cpu_process": whole}
                        if res is None:
                            row["error"] = why
                            print(f"{cols_key:>4} {eps:>4g} {tool:12} {mech:4} {seed:>4}   {why}")
                        else:
                            y = pd.read_csv(out)[cols].to_numpy().astype(np.int64)
                            row.update(res)
                            row.update(tv_errors(x, y, shape))
                            print(f"{cols_key:>4} {eps:>4g} {tool:12} {mech:4} {seed:>4} {row['tv_123']:7.4f} "
                                  f"{row['tv_3']:6.4f} {res['cpu']:9.2f} {whole:9.2f} {res['wall']:7.1f} "
                                  f"{res['maxrss_mb']:7.0f} {load:5.1f}", flush=True)
                        rows.append(row)
                        if args.json:
                            Path(args.json).write_text(json.dumps(rows, indent=1))
    summary(rows)


def summary(rows: list[dict]) -> None:
    """Mean and standard error over seeds of each cell (the seeds' spread is large: one tree edge more or less)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if "tv_123" in r:
            groups.setdefault((r["columns"], r["epsilon"], r["tool"], r["mechanism"]), []).append(r)
    if not groups:
        return
    print(f"\n{'cols':>4} {'eps':>4} {'tool':12} {'mech':4} {'runs':>4} {'TV 1-3':>7} {'se':>7} {'CPU call':>9} "
          f"{'CPU proc':>9} {'RSS MB':>7} {'load':>9}")
    for (cols, eps, tool, mech), rs in groups.items():
        tv = np.array([r["tv_123"] for r in rs])
        se = float(tv.std(ddof=1) / math.sqrt(tv.size)) if tv.size > 1 else math.nan
        loads = [r["load"] for r in rs]
        print(f"{cols:>4} {eps:>4g} {tool:12} {mech:4} {tv.size:>4} {tv.mean():7.4f} {se:7.4f} "
              f"{np.mean([r['cpu'] for r in rs]):9.2f} {np.mean([r['cpu_process'] for r in rs]):9.2f} "
              f"{max(r['maxrss_mb'] for r in rs):7.0f} {min(loads):4.1f}-{max(loads):<4.1f}")


if __name__ == "__main__":
    main()
