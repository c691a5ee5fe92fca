"""Benchmark: the suppression of a 10^4-leaf hierarchy, and its audit, as whole commands (issue 26 item 4).

Workload (default): 10^5 records (seed 2026) over ``geo`` (10,000 leaves coded L00000..L09999 under 100
parents P000..P099, 100 leaves each, given as a tau-Argus ``.hrc`` file, levels ``region``) and ``sex``
(F, M); a record's leaf is uniform, so a leaf-by-sex cell holds Poisson(5) records and about a quarter of
them are primary under ``freq<=3``.  Published: ``region*sex + geo*sex`` (every level of geo by sex and
alone): 30,303 cells over the 19,862 non-empty inner cells.

Measured 2026-11-26 (2 cores shared, load 11) with the dense elimination: ``publish`` had not finished after
656 s wall (187 CPU s, peak 9.4 GB); refused past ten minutes, it said "about 35 min" (the pace deeper in
gave about two CPU hours).  With the sparse elimination (``mechanisms/_gauss_sparse.py``, same pattern),
load 9: ``publish`` exit 0 in 341 CPU s (950 s wall), peak 358 MB, 9,173 withheld (5,219 primary, 3,954
secondary), of which the elimination and the singleton protection take 16 CPU s (the first elimination
0.35 s; 77 contributors' reruns) and the interval programs against contributors alone in withheld cells
(``_intervals.singleton_shortfalls``) nearly all the rest; ``audit`` exit 0 in 187 CPU s (370 s wall),
peak 446 MB, passed.  2,000 leaves under 40 parents, 20,000 records (``--leaves 2000 --parents 40
--records 20000``): ``publish`` 6.3 CPU s, ``audit`` 6.2 CPU s, passed; the attacker (``--attack``)
finds 0 primaries within the rule, 0 derivable sums, 0 exact recoveries among its 1,870 withheld cells.

The commands are the ones a user runs::

    cellsafe publish people.csv --variables geo,sex --hierarchy geo=geo.hrc:region \\
        --formula 'region*sex + geo*sex' --method suppress --rule 'freq<=3' --quiet --output p.csv
    cellsafe audit p.csv people.csv --variables geo,sex --hierarchy geo=geo.hrc:region \\
        --formula 'region*sex + geo*sex'

Reported for each: exit status, wall time, CPU seconds (user + system of the process, from
``getrusage(RUSAGE_CHILDREN)``), peak resident memory, and the load average before and after; for the
release: published, primary and secondary cells, and the audit's verdict line.

Run: ``python benchmarks/bench_suppression_leaves.py [--leaves 10000] [--parents 100] [--records 100000]
[--allow-long] [--attack]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "dt = time.perf_counter() - t0\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write(r.stderr)\n"
    "sys.stderr.write(r.stdout)\n"
    "print(dt, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024, r.returncode)\n"
)


def _run(argv: list[str]) -> tuple[float, float, float, int, str]:
    """Wall seconds, CPU seconds, peak MB, exit status and what the command printed."""
    r = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], capture_output=True, text=True)
    wall, cpu, peak, rc = r.stdout.split()
    return float(wall), float(cpu), float(peak), int(rc), r.stderr.strip()


def write_inputs(folder: Path, leaves: int, parents: int, records: int, seed: int = 2026) -> tuple[Path, Path]:
    per = leaves // parents
    hrc = "".join(f"P{p:03d}\n" + "".join(f"@L{p * per + i:05d}\n" for i in range(per)) for p in range(parents))
    (folder / "geo.hrc").write_text(hrc)
    rng = np.random.default_rng(seed)
    leaf = rng.integers(0, parents * per, records)
    sex = rng.integers(0, 2, records)
    rows = "".join(f"L{g:05d},{'FM'[s]}\n" for g, s in zip(leaf.tolist(), sex.tolist()))
    (folder / "people.csv").write_text("geo,sex\n" + rows)
    return folder / "people.csv", folder / "geo.hrc"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--leaves", type=int, default=10_000)
    ap.add_argument("--parents", type=int, default=100)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--allow-long", action="store_true", help="pass --allow-long to both commands")
    ap.add_argument("--attack", action="store_true", help="attack the release (suppression_attacker.py) after the audit")
    a = ap.parse_args()
    cellsafe = [sys.executable, "-m", "cellsafe.cli.main"]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        people, hrc = write_inputs(d, a.leaves, a.parents, a.records)
        common = ["--variables", "geo,sex", "--hierarchy", f"geo={hrc}:region", "--formula", "region*sex + geo*sex"]
        extra = ["--allow-long"] if a.allow_long else []
        out = d / "p.csv"
        print(f"{a.records:,} records, {a.leaves:,} leaves under {a.parents} parents x sex; load {os.getloadavg()}")
        runs = {
            "publish": [*cellsafe, "publish", str(people), *common, "--method", "suppress", "--rule", "freq<=3",
                        "--quiet", *extra, "--output", str(out)],
            "audit": [*cellsafe, "audit", str(out), str(people), *common, *extra],
        }
        for name, argv in runs.items():
            wall, cpu, peak, rc, text = _run(argv)
            print(f"{name}: exit {rc}, {wall:.1f} s wall, {cpu:.1f} CPU s, peak {peak:.0f} MB; load {os.getloadavg()}")
            if text:
                print("  " + text.replace("\n", "\n  "))
            if name == "publish":
                if rc != 0:
                    break
                import pandas as pd

                f = pd.read_csv(out, keep_default_na=False)
                s = f["suppression"]
                print(f"  published {len(f):,}, primary {(s == 'primary').sum():,}, "
                      f"secondary {(s == 'secondary').sum():,}")
        if a.attack and out.exists():
            attack_release(out, people, a.leaves, a.parents)


def attack_release(release: Path, people: Path, leaves: int, parents: int) -> None:
    """The independent attacker on the release: its inner cells are every leaf x sex (what the file leaves possible).

    The matrix and the true values are built here from the codes of :func:`write_inputs` (no cellsafe).
    """
    import time

    import pandas as pd
    import scipy.sparse as sp

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from suppression_attacker import attack

    per = leaves // parents
    f = pd.read_csv(release, keep_default_na=False, dtype=str)
    recs = pd.read_csv(people, dtype=str)
    leaf_of = recs["geo"].str[1:].astype(int).to_numpy()
    sex_of = (recs["sex"] == "M").to_numpy().astype(int)
    inner_truth = np.bincount(leaf_of * 2 + sex_of, minlength=2 * leaves).astype(float)
    inner = np.arange(2 * leaves)
    leaf, sex = inner // 2, inner % 2
    geo = f["geo"].to_numpy()
    sx = f["sex"].to_numpy()
    rows, cols = [], []
    for j, (g, s) in enumerate(zip(geo, sx)):
        if g == "Total":
            hit = np.ones(inner.size, dtype=bool)
        elif g.startswith("P"):
            hit = leaf // per == int(g[1:])
        else:
            hit = leaf == int(g[1:])
        if s != "Total":
            hit = hit & (sex == (1 if s == "M" else 0))
        idx = np.flatnonzero(hit)
        rows.append(idx)
        cols.append(np.full(idx.size, j))
    X = sp.csc_matrix((np.ones(sum(r.size for r in rows)), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(inner.size, len(f)))
    truth = np.asarray(X.T @ inner_truth).ravel()
    released = np.where(f["count"].to_numpy() == "", np.nan, pd.to_numeric(f["count"], errors="coerce"))
    shown = ~np.isnan(released)
    assert np.array_equal(released[shown], truth[shown]), "published values differ from the records"
    primary = (truth >= 1) & (truth <= 3)
    t0 = time.process_time()
    r = attack(X, released, truth, primary, threshold=3)
    print(f"attacker: {r.withheld.size:,} withheld, {np.isin(r.withheld, np.flatnonzero(primary)).sum():,} primaries; "
          f"{r.primaries_within.size} primaries within the rule, {len(r.sums)} derivable sums, {r.exact.size} exact; "
          f"{time.process_time() - t0:.1f} CPU s; load {os.getloadavg()}")


if __name__ == "__main__":
    main()
