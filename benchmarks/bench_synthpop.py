"""Benchmark: cellsafe's CART sequential synthesis beside R synthpop's ``syn(method = "cart")``.

Same records, same visit sequence (the file's column order: the first variable sampled, CART for
every later one, at least 5 records a leaf), the same categorical columns, m implicates each.
Reported for both: CPU seconds and wall time of the whole process (R with synthpop loaded, the
``cellsafe synthesize-microdata`` command) and of the synthesis in the call, peak memory, and the
pMSE (and pMSE ratio) of every implicate against the original measured by one piece of code,
cellsafe's :func:`~cellsafe.metrics.microdata.propensity_metrics` (logistic propensity with
pairwise interactions, at most 200 parameters), with the load average.

Data: ``penguins`` (palmerpenguins, 344 records with R's NA; committed with the tests) and
``adult`` (48,842 records, 14 integer-coded variables; committed with the tests).

synthpop is not in Debian: fetch its public sources (the CRAN mirror ``cran/synthpop`` or
``bnowok/synthpop``) and ``R CMD INSTALL`` them (with ``mipfp``, ``cmm`` and ``broman``, the imports
Debian lacks) into a private library, then ``R_LIBS_USER=/that/library python
benchmarks/bench_synthpop.py [penguins|adult] [-m M]``.  Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REF = HERE.parent / "tests" / "reference"
DATA = {
    "penguins": (REF / "penguins" / "penguins.csv", ["species", "island", "sex", "year"]),
    "adult": (
        REF / "adult" / "adult.csv.gz",
        ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country", "income>50K"],
    ),
}

_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
    "dt = time.perf_counter() - t0\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write(r.stderr)\n"
    "print(dt, u.ru_utime + u.ru_stime, u.ru_maxrss, r.returncode)\n"
)


def whole_process(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident MB of one command."""
    r = subprocess.run([sys.executable, "-c", _WRAPPER, *map(str, argv)], capture_output=True, text=True, env=env)
    wall, cpu, rss, code = r.stdout.split()
    if int(code) != 0:
        raise RuntimeError(f"{argv[0]} failed: {r.stderr[-3000:]}")
    return float(wall), float(cpu), int(rss) / 1024


def read_all(path: Path, categorical: list[str]) -> pd.DataFrame:
    """A CSV read the same way for the original and every synthetic file: NA and blanks missing."""
    frame = pd.read_csv(path, na_values=["NA", ""], keep_default_na=False)
    for c in categorical:
        frame[c] = frame[c].astype("string").astype(object)
    return frame


def pmse(original: pd.DataFrame, implicates: list[pd.DataFrame], categorical: list[str]) -> tuple[float, float, list[float]]:
    from cellsafe.metrics.microdata import propensity_metrics

    res = [propensity_metrics(original, s, categorical=categorical, rng=11) for s in implicates]
    values = [r.pmse for r in res]
    return float(np.mean(values)), float(np.mean([r.pmse_ratio for r in res])), values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default="penguins", choices=sorted(DATA))
    parser.add_argument("-m", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", metavar="DIR", default=None, help="write both syntheses into DIR")
    args = parser.parse_args()
    path, categorical = DATA[args.data]
    rscript = shutil.which("Rscript")
    cli = Path(sys.executable).with_name("cellsafe")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_synthpop_"))
    csv = work / "data.csv"
    work.mkdir(parents=True, exist_ok=True)
    pd.read_csv(path, dtype=str, keep_default_na=False).to_csv(csv, index=False)  # plain CSV for both
    original = read_all(csv, categorical)
    print(f"{args.data}: {len(original):,} records, {original.shape[1]} variables, m = {args.m}; "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")

    # --- synthpop
    if rscript is None:
        print("  synthpop: skipped (R is not installed)")
        sp = None
    else:
        out_r = work / "synthpop"
        env = dict(os.environ)
        wall_r, cpu_r, mem_r = whole_process(
            [rscript, HERE / "synthpop_cart.R", csv, out_r, args.m, args.seed, ",".join(categorical)], env
        )
        info = json.loads((out_r / "synthpop_time.json").read_text())
        sp = [read_all(out_r / f"synthpop_{i}.csv", categorical) for i in range(1, args.m + 1)]
        print(f"  synthpop {info['synthpop']} (R {info['R']}) syn(method='cart'): whole process {cpu_r:.2f} CPU s "
              f"({wall_r:.2f} s wall, {mem_r:.0f} MB); syn() itself {info['cpu_seconds']:.2f} CPU s "
              f"({info['elapsed_seconds']:.2f} s wall); loading synthpop {info['load_cpu_seconds']:.2f} CPU s")

    # --- cellsafe, whole process (the command) and in the call
    out_c = work / "cellsafe"
    wall_c, cpu_c, mem_c = whole_process(
        [cli, "synthesize-microdata", csv, "--categorical", ",".join(categorical), "--method", "cart",
         "--method-for", f"{original.columns[0]}=sample", "-m", args.m, "--seed", args.seed, "--output", out_c, "--quiet"]
    )
    import warnings

    from cellsafe import SequentialSynthesizer
    from cellsafe.io import read_records

    frame = read_records(csv)
    t0, w0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SequentialSynthesizer().fit(frame, categorical=categorical)
        synth.sample(m=args.m, rng=args.seed)
    cpu_call, wall_call = time.process_time() - t0, time.perf_counter() - w0
    cs = [read_all(out_c / f"synthetic_{i}.csv", categorical) for i in range(1, args.m + 1)]
    print(f"  cellsafe synthesize-microdata (cart): whole process {cpu_c:.2f} CPU s ({wall_c:.2f} s wall, "
          f"{mem_c:.0f} MB); fit + sample in the call {cpu_call:.2f} CPU s ({wall_call:.2f} s wall)")

    # without the category pairs kept apart, as synthpop draws (a tree's leaf may mix them)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        free = SequentialSynthesizer(structural_zeros=False).fit(frame, categorical=categorical).sample(m=args.m, rng=args.seed)
    free_path = work / "cellsafe_free"
    free_path.mkdir(exist_ok=True)
    for i, s in enumerate(free, start=1):
        s.to_csv(free_path / f"synthetic_{i}.csv", index=False)
    cs_free = [read_all(free_path / f"synthetic_{i}.csv", categorical) for i in range(1, args.m + 1)]

    # --- utility, measured by the same code
    p_cs, r_cs, v_cs = pmse(original, cs, categorical)
    print(f"  pMSE cellsafe  {p_cs:.3e} (ratio {r_cs:.2f}); per implicate {', '.join(f'{v:.3e}' for v in v_cs)}")
    p_fr, r_fr, _ = pmse(original, cs_free, categorical)
    print(f"  pMSE cellsafe without structural zeros of records {p_fr:.3e} (ratio {r_fr:.2f})")
    if sp is not None:
        p_sp, r_sp, v_sp = pmse(original, sp, categorical)
        print(f"  pMSE synthpop  {p_sp:.3e} (ratio {r_sp:.2f}); per implicate {', '.join(f'{v:.3e}' for v in v_sp)}")
        print(f"  ratios synthpop / cellsafe: whole-process CPU {cpu_r / cpu_c:.2f}, in the call "
              f"{info['cpu_seconds'] / cpu_call:.2f}; pMSE {p_sp / p_cs:.2f} (above 1: cellsafe's is lower)")


if __name__ == "__main__":
    main()
