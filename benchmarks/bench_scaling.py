"""How cost grows with the table: saturated synthesis and the cell key method at 1e5..3e7 non-zero cells.

For each size, a table of that many non-zero cells (flat indices spread over four times as many
possible cells, at least 1e7, counts with ESC-like's mix of small and large sizes) is built once, then, each in
a fresh process so that peak memory belongs to that size alone:

- Poisson and NBI(sigma = 1) synthesis, one implicate (``SaturatedSynthesizer.sample``, alpha 0:
  the non-zero cells only);
- the cell key method on the inner cells (``CellKeyMethod.perturb`` of the table with drawn keys,
  a 10-5 ONS ptable, the publication of the one crossing of all variables: every published cell
  is an inner cell).

Figures: CPU seconds of the call (best of 3), its peak of traced allocations in bytes per
non-zero cell (tracemalloc, a separate run), and the ratio to the numpy floor: what no
implementation of the same mechanism can avoid, timed in the same process (Poisson: one
``rng.poisson`` draw per cell; NBI: one gamma and one Poisson draw per cell; the cell key method:
one integer key per cell and one lookup of the perturbation by (count, key) in a dense ptable).

Run: ``python benchmarks/bench_scaling.py [max_cells]`` (default 3e7; the largest size needs about
2 GB of memory).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

SIZES = (100_000, 300_000, 1_000_000, 3_000_000, 10_000_000, 30_000_000)
PTABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference", "ons_ptable",
                      "ptable_10_5_rule.csv")


def _table(nnz: int):
    from cellsafe import CountTable, Variable

    rng = np.random.default_rng(nnz)
    # four variables whose crossing has about 4 nnz cells, and more than 1e7: the cell key method then
    # publishes the non-zero cells (below 1e7 it publishes every combination, as the ONS package does)
    side = max(int(round((4 * nnz) ** 0.25)) + 1, 57)
    variables = [Variable(f"v{i}", range(side)) for i in range(4)]
    n_cells = side**4
    index = np.sort(rng.choice(n_cells, size=nnz, replace=False))
    # ESC-like sizes: most cells small, a long tail of large ones
    counts = np.maximum(1, np.round(rng.lognormal(1.0, 1.3, nnz))).astype(np.int64)
    return CountTable(variables, index, counts)


def _best_cpu(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _peak(fn) -> int:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def one_size(nnz: int) -> dict:
    """The figures of one size (run in its own process)."""
    from cellsafe.distributions import NBI, Poisson
    from cellsafe.mechanisms import CellKeyMethod, PTable, SaturatedSynthesizer

    table = _table(nnz)
    mu = table.counts.astype(np.float64)
    out: dict = {"nnz": nnz}
    for name, dist, floor in (
        ("poisson", Poisson(), lambda g: g.poisson(mu)),
        ("nbi", NBI(1.0), lambda g: g.poisson(mu * g.gamma(1.0, 1.0, mu.size))),
    ):
        synth = SaturatedSynthesizer(dist)
        t = _best_cpu(lambda: synth.sample(table, rng=1))
        t_floor = _best_cpu(lambda: floor(np.random.default_rng(1)))
        out[name] = {"cpu": t, "floor": t_floor, "bytes_per_cell": _peak(lambda: synth.sample(table, rng=1)) / nnz}
    ptable = PTable.read(PTABLE)
    ckm = CellKeyMethod(ptable, [tuple(table.names)])
    lookup = np.zeros((751, ptable.n_keys), dtype=np.int64)  # a perturbation per (row, key), as an ONS ptable holds

    def ckm_floor():
        g = np.random.default_rng(1)
        keys = g.integers(0, ptable.n_keys, nnz)
        return table.counts + lookup[np.minimum(table.counts, 750), keys]  # one draw and one lookup per cell

    t = _best_cpu(lambda: ckm.perturb(table, rng=1))
    out["ckm"] = {"cpu": t, "floor": _best_cpu(ckm_floor), "bytes_per_cell": _peak(lambda: ckm.perturb(table, rng=1)) / nnz}
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(json.dumps(one_size(int(float(sys.argv[2])))))
        return
    top = float(sys.argv[1]) if len(sys.argv) > 1 else 3e7
    print(f"load {os.getloadavg()[0]:.1f}; CPU seconds of one call (best of 3), traced peak bytes per non-zero cell, "
          "ratio to the numpy floor")
    print(f"{'cells':>11s} | {'Poisson':>26s} | {'NBI sigma 1':>26s} | {'cell key method':>26s}")
    for nnz in SIZES:
        if nnz > top:
            break
        r = subprocess.run([sys.executable, __file__, "--one", str(nnz)], capture_output=True, text=True)
        if r.returncode:
            print(f"{nnz:>11,d} | failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
            continue
        res = json.loads(r.stdout)
        cols = [f"{res[k]['cpu']:7.3f} s {res[k]['bytes_per_cell']:5.0f} B {res[k]['cpu'] / res[k]['floor']:5.2f}x"
                for k in ("poisson", "nbi", "ckm")]
        print(f"{nnz:>11,d} | " + " | ".join(f"{c:>26s}" for c in cols) + f"   (load {os.getloadavg()[0]:.1f})",
              flush=True)


if __name__ == "__main__":
    main()
