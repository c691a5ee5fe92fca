"""``cellsafe demo``: synthesize the built-in ESC-like table and summarize risk."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ._common import EXAMPLES_FORMATTER, add_output_options, add_quiet_option, outputs_from_args, progress_from_args

_EXAMPLES = """\
examples:
  cellsafe demo
  cellsafe demo --output demo-output --sigma 0.5 -m 3
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="synthesize the built-in ESC-like table with NBI noise and summarize",
        description="Builds cellsafe.datasets.esc_like() (326 x 20 x 4 x 19 x 7 = 3,468,640 cells, about 8.2 million "
        "records), synthesizes it with negative binomial noise, and compares the share of real uniques kept "
        "as uniques (tau3(1)) with its a priori value.",
        epilog=_EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    p.add_argument("--output", metavar="DIR", default=None,
                   help="also write the synthetic tables there (CSV, with manifest.json; a new or empty folder)")
    add_output_options(p)
    p.add_argument("--sigma", type=float, default=1.0, help="NBI dispersion (default 1)")
    p.add_argument("-m", type=int, default=2, dest="m", help="number of implicates (default 2)")
    add_quiet_option(p, summary=False)
    p.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..mechanisms.saturated import SaturatedSynthesizer
    from ..distributions import NBI

    synth = SaturatedSynthesizer(NBI(sigma=args.sigma))
    with outputs_from_args(args, mechanism=synth, seed=args.seed) as outputs:
        out_dir = outputs.folder(args.output) if args.output else None  # refused before any work if it would clobber
        return _run(args, synth, outputs, out_dir)


def _run(args: argparse.Namespace, synth, outputs, out_dir) -> int:  # type: ignore[no-untyped-def]
    from .. import apriori, metrics
    from ..datasets import esc_like

    t0 = time.perf_counter()
    table = esc_like()
    t1 = time.perf_counter()
    tables = synth.sample(table, m=args.m, rng=args.seed, progress=progress_from_args(args))
    t2 = time.perf_counter()
    expected = apriori.tau(table, synth, k=[1]).loc[1]
    observed = metrics.tau(table, tables, k=[1]).loc[1]
    print(f"original   {table!r}")
    print(f"mechanism  {synth!r}")
    print(f"built the table in {t1 - t0:.2f} s; synthesized {args.m} implicate(s) in {t2 - t1:.2f} s")
    for i, syn in enumerate(tables, start=1):
        print(f"implicate {i}: total {syn.total:,} (original {table.total:,}), {syn.nnz:,} non-zero cells")
    print(
        f"tau3(1), share of real uniques released as uniques: {observed.tau3:.4f} "
        f"(a priori {expected.tau3:.4f})"
    )
    print(
        f"tau4(1), share of synthetic uniques that are real uniques: {observed.tau4:.4f} "
        f"(a priori {expected.tau4:.4f})"
    )
    if out_dir is not None:
        for i, syn in enumerate(tables, start=1):
            outputs.write_frame(syn.to_frame(), Path(out_dir) / f"synthetic_{i}.csv")
        print(f"wrote {len(tables)} table(s) and manifest.json to {args.output}")
    return 0
