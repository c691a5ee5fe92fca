"""DP counts over a geography, consistent at every level: cellsafe's TopDownNoise against OpenDP.

The workload (issue: consistent DP counts over a hierarchy): ``--records`` records (default 5e6)
over a nation > 50 states > 20 counties each > 100 tracts each (100,000 tracts, many empty), one
count per cell of every level, replace-one neighbours, the budget split equally over the four
levels.  For each noise (geometric at epsilon, discrete Gaussian at the zCDP rho of (epsilon,
1e-9)) it reports the error per level (mean absolute error and RMSE over ``--reps`` releases), the
a priori RMSE, and time (in the call, CPU seconds):

- ``topdown``: cellsafe's release: noise at every level, least squares over the tree, then
  non-negative integers that add up at every level, top-down;
- ``independent``: the same measurements, unprocessed (what per-level DP counts give: not
  consistent, negative counts possible): the error OpenDP's counts have in distribution;
- ``ls+round``: the same least-squares estimate, its tracts rounded to non-negative integers one
  by one and summed upwards (consistent, but every tract's rounding adds up in the totals);
- ``opendp``: OpenDP 0.16 ``make_count_by_categories`` per level with the same noise and budget,
  run as a user scripts it (``peer_opendp_hierarchy.py``) in the virtual environment named by
  ``--opendp`` (default ``/work/peers/opendp``; skipped with a message where absent).

Run: ``python benchmarks/bench_dp_hierarchy.py [--records 5e6] [--reps 10]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import cellsafe
from cellsafe.fitting.tree import tree_least_squares
from cellsafe.mechanisms.topdown import TopDownNoise

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import run_usage  # noqa: E402

HERE = Path(__file__).parent
PREFIXES = [0, 2, 4, 7]  # the grand total, state, county, tract: code prefixes of the tract codes


def make_records(n: int, folder: Path) -> tuple[Path, list[str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    tracts = [f"{s:02d}{c:02d}{t:03d}" for s in range(50) for c in range(20) for t in range(100)]
    weights = rng.gamma(0.7, size=len(tracts))
    counts = rng.multinomial(n, weights / weights.sum())
    codes = np.repeat(np.arange(len(tracts), dtype=np.int32), counts)
    rng.shuffle(codes)
    path = folder / "records.parquet"
    pq.write_table(pa.table({"tract": pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(tracts))}), path)
    (folder / "codes.txt").write_text("\n".join(tracts))
    return path, tracts


def errors(levels: list[np.ndarray], truth: list[np.ndarray]) -> list[tuple[float, float]]:
    return [(float(np.abs(a - t).mean()), float(np.sqrt(((a - t) ** 2).mean()))) for a, t in zip(levels, truth)]


def run_cellsafe(table, mech, reps):
    truth = mech.level_counts(table)
    parents, sizes = mech.tree(table)
    out = {"topdown": [], "independent": [], "ls+round": []}
    cpu = []
    for r in range(reps):
        c0 = time.process_time()
        [release] = mech.sample(table, rng=r)
        cpu.append(time.process_time() - c0)
        out["topdown"].append(errors(mech.release_levels(release, table), truth))
        # the same noise, unprocessed; and least squares with tract-by-tract rounding
        meas = mech.measure(table, rng=r)
        out["independent"].append(errors(meas, truth))
        est = tree_least_squares(meas, mech.noise_variances(), parents)
        up = [np.maximum(np.floor(est.values[-1] + 0.5), 0)]
        for p, n in zip(reversed(parents), reversed(sizes[:-1])):
            up.insert(0, np.bincount(p, weights=up[0], minlength=n))
        out["ls+round"].append(errors(up, truth))
    return out, cpu, truth


def run_opendp(python: Path, records: Path, codes_file: Path, noise: str, budgets: list[float], truth, codes, reps):
    rows, times = [], []
    for r in range(reps):
        out = Path(tempfile.mkstemp(suffix=".npz")[1])
        run = _whole([str(python), str(HERE / "peer_opendp_hierarchy.py"), str(records), str(codes_file), noise,
                      ",".join(map(str, budgets)), ",".join(map(str, PREFIXES)), str(out)])
        call = float(run["stderr"].split("call")[-1].split()[0])
        d = np.load(out)
        levels = [d[f"level{k}"].astype(float) for k in range(len(PREFIXES))]
        # OpenDP's categories are sorted codes: the same order as the tree's (codes are sorted)
        rows.append(errors(levels, truth))
        times.append((run["wall"], run["cpu"], call, run["peak_mb"]))
        out.unlink()
    return rows, times


def _whole(argv: list[str]) -> dict:
    """One whole process (``_timing.run_usage``); its stderr raised where it fails."""
    run = run_usage(argv)
    if run["returncode"]:
        raise RuntimeError(run["stderr"][-2000:])
    return run


def whole_process(records: Path, codes: list[str], folder: Path, epsilon: float) -> None:
    """``cellsafe dp-publish`` on the records file, as a user runs it: CPU seconds of the whole process."""
    lines = []
    for i, c in enumerate(codes):
        if i == 0 or c[:2] != codes[i - 1][:2]:
            lines.append(c[:2])
        if i == 0 or c[:4] != codes[i - 1][:4]:
            lines.append("@" + c[:4])
        lines.append("@@" + c)
    (folder / "geo.hrc").write_text("\n".join(lines) + "\n")
    for noise in ["geometric", "discrete-gaussian"]:
        run = _whole(["cellsafe", "dp-publish", str(records), "--variables", "tract", "--hierarchy",
                      f"tract={folder / 'geo.hrc'}", "--epsilon", str(epsilon), "--noise", noise, "--seed", "1",
                      "--quiet", "--overwrite", "--output", str(folder / f"out-{noise}")])
        print(f"cellsafe dp-publish --noise {noise}, whole process: {run['wall']:.2f} s wall, {run['cpu']:.2f} CPU s, "
              f"peak {run['peak_mb']:.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=float, default=5e6)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--opendp-reps", type=int, default=1)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--opendp", default="/work/peers/opendp", help="virtual environment with opendp and pyarrow")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {int(args.records):,} records")
    with tempfile.TemporaryDirectory() as tmp:
        records, codes = make_records(int(args.records), Path(tmp))
        c0 = time.process_time()
        domain = cellsafe.Domain({"tract": codes})  # the public tract codes, empty tracts included
        table = domain.adopt(cellsafe.CountTable.from_microdata(records, list(domain.variables)))
        print(f"aggregation of the records: {time.process_time() - c0:.2f} CPU s")
        hierarchy = cellsafe.Hierarchy.from_positions(codes, {"state": 2, "county": 4})
        whole_process(records, codes, Path(tmp), args.epsilon)
        for noise in ["geometric", "discrete-gaussian"]:
            mech = TopDownNoise("tract", hierarchy, epsilon=args.epsilon, noise=noise)
            expected = mech.expected_errors(table)
            res, cpu, truth = run_cellsafe(table, mech, args.reps)
            budget = [args.epsilon / 4] * 4 if noise == "geometric" else [mech.rho / 4] * 4
            print(f"\n{noise}, epsilon {args.epsilon} (replace-one{'' if noise == 'geometric' else ', delta 1e-9'}), "
                  f"{args.reps} releases; TopDownNoise {np.median(cpu):.2f} CPU s per release (median)")
            print("mean absolute error / root mean squared error per cell; a priori: the RMSE of the least-squares "
                  "estimate, from the noise scales (the non-negative integers are closer where counts are near 0)")
            print(f"{'level':>8} {'cells':>7} {'a priori':>9} " + " ".join(f"{k:>20}" for k in res))
            for k, name in enumerate(mech.level_names):
                row = [(np.mean([rep[k][0] for rep in res[m]]), np.sqrt(np.mean([rep[k][1] ** 2 for rep in res[m]])))
                       for m in res]
                print(f"{name:>8} {truth[k].size:>7} {expected['expected_rmse'][k]:>9.2f} "
                      + " ".join(f"{a:>10.2f} /{r:>8.2f}" for a, r in row))
            python = Path(args.opendp) / "bin" / "python"
            if not python.exists():
                print(f"OpenDP: skipped ({python} not found: python3 -m venv {args.opendp} && {args.opendp}/bin/pip install opendp pyarrow numpy)")
                continue
            rows, times = run_opendp(python, records, Path(tmp) / "codes.txt", noise, budget, truth, codes, args.opendp_reps)
            wall, cpu_s, call, rss = np.median(np.array(times), axis=0)
            print(f"OpenDP ({args.opendp_reps} run(s)): whole process {wall:.1f} s wall, {cpu_s:.1f} CPU s, queries {call:.1f} s, {rss:.0f} MB")
            for k, name in enumerate(mech.level_names):
                print(f"{name:>8} OpenDP MAE {np.mean([r[k][0] for r in rows]):.2f}  "
                      f"RMSE {np.sqrt(np.mean([r[k][1] ** 2 for r in rows])):.2f}")


if __name__ == "__main__":
    main()
