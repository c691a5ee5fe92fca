"""Run private-pgm's MST or AIM on binned Adult and write its synthetic records (run inside private-pgm's venv).

This script uses the peer; it is not the peer.  Set up once (see shared/docs/peers.md):

    python -m venv /work/peers/mbi && /work/peers/mbi/bin/pip install mbi pandas
    # mechanisms/mst.py, aim.py, mechanism.py, cdp2adp.py of the mbi repository (ryan112358/mbi, the same
    # version as the wheel; private-pgm's older copies use the 1.x API), e.g.
    git --git-dir=<mirror of ryan112358/mbi> archive HEAD mechanisms | tar -x -C /work/peers/private-pgm

Then ``bench_marginal.py`` calls it as

    /work/peers/mbi/bin/python benchmarks/peer_private_pgm.py --mechanisms /work/peers/private-pgm/mechanisms \
        --data adult.csv --domain adult-domain.json --columns age,workclass,... --bins 20 \
        --mechanism mst --epsilon 1 --delta 1e-9 --seed 0 --output synth.csv

Numeric columns (more than ``--bins`` codes in the domain file) are cut into ``--bins`` equal-width
intervals of their codes, exactly as the benchmark's public bins do.  It prints one JSON line with
the CPU seconds of the call (``time.process_time``), the wall time and the peak memory.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import sys
import time

import numpy as np
import pandas as pd


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mechanisms", required=True, help="folder holding private-pgm's mst.py / aim.py")
    p.add_argument("--data", required=True)
    p.add_argument("--domain", required=True)
    p.add_argument("--columns", required=True)
    p.add_argument("--bins", type=int, default=20)
    p.add_argument("--mechanism", choices=("mst", "aim"), required=True)
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--delta", type=float, default=1e-9)
    p.add_argument("--degree", type=int, default=3, help="AIM's workload: all marginals of this many columns")
    p.add_argument("--max-model-size", type=float, default=80.0, help="AIM's model size limit in MB (its default 80)")
    p.add_argument("--rounds", type=int, default=None, help="AIM's planned rounds T (its default 16 d)")
    p.add_argument("--max-iters", type=int, default=1000, help="AIM's mirror-descent iterations per fit (its default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", required=True)
    args = p.parse_args()
    sys.path.insert(0, args.mechanisms)
    from mbi import Dataset, Domain

    cols = args.columns.split(",")
    sizes = json.load(open(args.domain))
    df = pd.read_csv(args.data)[cols].copy()
    shape = []
    for c in cols:
        n = int(sizes[c])
        if n > args.bins:
            edges = np.linspace(0, n, args.bins + 1)
            df[c] = np.searchsorted(edges, df[c].to_numpy(), side="right") - 1
            n = args.bins
        shape.append(n)
    data = Dataset({c: df[c].to_numpy().astype(int) for c in cols}, Domain(cols, shape))
    np.random.seed(args.seed)
    t0, w0 = time.process_time(), time.perf_counter()
    if args.mechanism == "mst":
        from mst import MST

        synth = MST(data, args.epsilon, args.delta)
    else:
        from aim import AIM

        workload = [(cl, 1.0) for cl in itertools.combinations(cols, min(args.degree, len(cols)))]
        aim = AIM(args.epsilon, args.delta, rounds=args.rounds, max_model_size=args.max_model_size,
                  max_iters=args.max_iters)
        _, synth = aim.run(data, workload)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    out = synth.to_dict()
    pd.DataFrame({c: np.asarray(out[c]) for c in cols}).to_csv(args.output, index=False)
    print(json.dumps({"cpu": cpu, "wall": wall, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
