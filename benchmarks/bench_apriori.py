"""A priori metrics, tuning and the frontier against Monte Carlo estimates of the same numbers.

Run: python benchmarks/bench_apriori.py  (``mc [--whole F,F] [--batch N] [F ...]``: every metric of assess against
100 Monte Carlo implicates, in the call and whole process; F is poisson, nbi, pig or with a sigma, nbi:0.1)

Each line times an a priori computation on the ESC-like table (3.47 million cells) and a Monte
Carlo estimate of the same quantity in the same process (synthesize, then measure), and prints
the ratio.  Targets from the issue: tau and loss from a cell-size distribution < 50 ms; one
tuning solve < 1 s; a 100-point frontier < 10 s.
"""

from __future__ import annotations

import warnings

import numpy as np

from _timing import best_time


def main() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)
    from cellsafe import apriori
    from cellsafe.datasets import esc_like
    from cellsafe.distributions import NBI
    from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    from cellsafe.metrics import table_metrics
    from cellsafe.tuning import default_grid, frontier, tune
    from cellsafe.tuning._frontier import _mechanism

    table = esc_like()
    sizes = table.cell_sizes()
    mech = SaturatedSynthesizer(NBI(1.0), alpha=0.02)
    print(f"table: {table!r}; {sizes.size} distinct counts")
    rows = []

    # 1. tau1..tau4(0..3) and the expected squared error
    def apriori_tau_loss():
        cs = apriori.cell_sizes(sizes)
        return apriori.tau(cs, mech), apriori.expected_squared_error(cs, mech)

    t_a, (tau, loss) = best_time(apriori_tau_loss)

    def mc_tau_loss():
        [syn] = mech.sample(table, rng=1)
        return table_metrics(table, syn, k=[0, 1, 2, 3], p=[50])

    t_mc, emp = best_time(mc_tau_loss, repeat=1)
    rows.append(("tau(0..3) + expected loss", t_a, t_mc, 0.05))
    print(
        f"  tau4(1) a priori {tau.at[1, 'tau4']:.4f}, one implicate {emp.tau.at[1, 'tau4']:.4f}; "
        f"loss {loss.per_implicate:.4g} vs {emp.squared_error:.4g}"
    )

    # 2. one tuning solve: sigma with tau4(1) = 0.5
    t_a, res = best_time(lambda: tune(sizes, SaturatedSynthesizer(NBI(1.0)), "sigma", "tau4(1)=0.5"), repeat=1)

    def mc_check():
        [syn] = res.mechanism.sample(table, rng=2)
        return table_metrics(table, syn, k=[1], p=[50]).tau.at[1, "tau4"]

    t_mc, emp_t4 = best_time(mc_check, repeat=1)
    rows.append(("tune sigma for tau4(1)=0.5", t_a, t_mc, 1.0))
    print(f"  sigma = {res.value:.6g} ({res.n_evaluations} evaluations); one implicate gives tau4(1) = {emp_t4:.4f}")

    # 3. the default 100-point frontier; Monte Carlo timed on 5 of its settings, scaled to 100
    t_a, fr = best_time(lambda: frontier(sizes), repeat=1)
    grid = default_grid()
    picks = [grid[i] for i in np.linspace(0, len(grid) - 1, 5).astype(int)]

    def mc_frontier():
        out = []
        for p in picks:
            m = _mechanism(p)
            [syn] = m.sample(table, rng=3)
            out.append(table_metrics(table, syn, k=[1], p=[50]).tau.at[1, "tau4"])
        return out

    t_mc5, _ = best_time(mc_frontier, repeat=1)
    rows.append(("frontier, 100 settings", t_a, t_mc5 * len(grid) / len(picks), 10.0))
    by_family = fr.points.groupby("family").size().to_dict()
    print(f"  {len(fr.points)} settings {by_family}, {int(fr.points.efficient.sum())} efficient")

    print()
    print(f"{'computation':32s} {'a priori':>10s} {'Monte Carlo':>12s} {'MC / apriori':>13s} {'target':>8s}")
    for name, a, mc, target in rows:
        flag = "ok" if a < target else "SLOW"
        print(f"{name:32s} {a:9.3f}s {mc:11.3f}s {mc / a:12.1f}x {target:7.2f}s {flag}")


def _family(token: str):
    """'poisson', 'nbi', 'pig' (sigma 1) or 'nbi:0.1', 'pig:0.1': (label, distribution, CLI options)."""
    from cellsafe.distributions import NBI, PIG, Poisson

    name, _, sigma = token.partition(":")
    if name == "poisson":
        return "Poisson", Poisson(), ["--distribution", "poisson"]
    sig = float(sigma or 1.0)
    dist = {"nbi": NBI, "pig": PIG}[name](sig)
    return f"{name.upper()} sigma {sig:g}", dist, ["--distribution", name, "--sigma", f"{sig:g}"]


def assess_against_monte_carlo(m: int = 100, families: tuple = ("poisson", "nbi", "pig"), whole: tuple | None = None,
                               repeat: int = 3, batch: int | None = None) -> None:
    """Every metric of ``cellsafe assess`` against ``m`` Monte Carlo implicates, ESC-like, alpha 0.01 (issue 25).

    In the call: ``apriori.assess`` (tau, squared error, total, Hellinger, within p%) against ``m``
    draws each measured by ``table_metrics`` (CPU seconds; the Monte Carlo time is that of 5
    implicates times m / 5).  The a priori values are printed beside the mean of the 5 implicates
    and its standard error (from the 5 implicates measured one by one, outside the timing).  Whole
    process: ``cellsafe assess --json`` against ``cellsafe synthesize -m 100`` followed by
    ``cellsafe evaluate --json`` of the 100 files (CPU seconds, getrusage of the children), and the
    start-up floor: ``cellsafe assess --json`` with ``--no-hellinger --p 50 --k 1`` on the same file
    (reading and importing, almost no metric).  ``families`` picks the noise families (``poisson``,
    ``nbi``, ``pig``, or with a sigma: ``nbi:0.1``), ``whole`` those also timed as whole processes
    (default: all of ``families``; the whole-process Monte Carlo writes and reads m files of the
    table, about a minute of CPU per family), ``repeat`` the runs of ``cellsafe assess`` whose best
    CPU is kept.  ``batch`` evaluates the m files in processes of ``batch`` files each (one process of 100
    files of ESC-like holds about 4.5 GB): every process after the first is charged its CPU less that of
    ``cellsafe evaluate`` of the original and one file (start-up, reading the original, one file's metrics), so
    the Monte Carlo side is never counted above what one process would spend.
    """
    import os
    import shutil
    import sys
    import tempfile
    import time
    from pathlib import Path

    from _timing import Measured, measure_process

    from cellsafe import apriori
    from cellsafe.datasets import esc_like
    from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    from cellsafe.metrics import table_metrics

    table = esc_like()
    print(f"a priori against {m} Monte Carlo implicates, ESC-like, alpha 0.01, load {os.getloadavg()[0]:.1f}")
    whole = families if whole is None else whole
    for family in families:
        label, dist, cli = _family(family)
        mech = SaturatedSynthesizer(dist, alpha=0.01)
        apriori.assess(table, mech)
        t_a = min(_cpu(lambda: apriori.assess(table, mech)) for _ in range(repeat))
        a = apriori.assess(table, mech)
        t0 = time.process_time()
        emp = table_metrics(table, list(mech.implicates(table, 5, rng=1)))
        t_mc = (time.process_time() - t0) * m / 5
        each = [table_metrics(table, s) for s in mech.implicates(table, 5, rng=1)]

        def se(values):
            return float(np.std(values, ddof=1) / np.sqrt(len(values)))

        t4 = [e.tau.at[1, "tau4"] for e in each]
        hu = [e.hellinger_utility for e in each]
        w10 = [e.within.at[10.0, "nonzero"] for e in each]
        print(f"  {label}: in the call {t_a:.4f} s CPU against {t_mc:.2f} s for {m} implicates: {t_mc / t_a:.0f}x; "
              f"tau4(1) {a.tau.at[1, 'tau4']:.4f} vs {emp.tau.at[1, 'tau4']:.4f} (se {se(t4):.4f}), Hellinger utility "
              f"{a.hellinger.utility:.5f} vs {emp.hellinger_utility:.5f} (se {se(hu):.5f}), within 10% "
              f"{a.within.at[10.0, 'nonzero']:.4f} vs {emp.within.at[10.0, 'nonzero']:.4f} (se {se(w10):.4f}); "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
        if family not in whole:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            csv = Path(tmp) / "esc.csv"
            table.to_frame().to_csv(csv, index=False)
            names = ",".join(table.names)
            base = [sys.executable, "-m", "cellsafe.cli.main"]
            args = [csv, "--variables", names, "--count", "count", *cli, "--alpha", "0.01"]
            ours = measure_process([*base, "assess", *args, "--json"], repeat)
            floor = measure_process([*base, "assess", *args, "--json", "--no-hellinger", "--p", "50", "--k", "1"],
                                    repeat)
            syn = measure_process([*base, "synthesize", *args, "-m", m, "--seed", 1, "--output", Path(tmp) / "mc",
                                   "--quiet"], 1)
            files = sorted(str(p) for p in (Path(tmp) / "mc").glob("synthetic_*.csv"))
            evaluate = [*base, "evaluate", csv, "--variables", names, "--count", "count", "--synthetic-count",
                        "count", "--json", "--quiet"]
            step = batch or len(files)
            parts = [measure_process([*evaluate, *files[i:i + step]], 1) for i in range(0, len(files), step)]
            ev = parts[0]
            if len(parts) > 1:
                one = measure_process([*evaluate, files[0]], 1)
                ev = Measured(ev.wall + sum(p.wall - one.wall for p in parts[1:]),
                              ev.cpu + sum(p.cpu - one.cpu for p in parts[1:]), max(p.peak_mb for p in parts),
                              parts[-1].load, parts[-1].stderr, [r for p in parts for r in p.runs])
                print(f"    evaluate in {len(parts)} processes of {step} files: " + ", ".join(
                    f"{p.cpu:.2f}" for p in parts) + f" s CPU, less {len(parts) - 1} x {one.cpu:.2f} s (the original "
                    "and one file)", flush=True)
            shutil.rmtree(Path(tmp) / "mc", ignore_errors=True)
            mc = syn.cpu + ev.cpu
            print(f"    whole process: cellsafe assess {ours}; synthesize -m {m} {syn} + evaluate {ev} = {mc:.1f} s CPU: "
                  f"{mc / ours.cpu:.0f}x; start-up floor (assess, one metric) {floor}: at most {mc / floor.cpu:.0f}x; "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)


def _cpu(fn) -> float:
    import time

    t0 = time.process_time()
    fn()
    return time.process_time() - t0


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["mc"]:
        # mc [--whole F,F] [F ...]: the families (poisson, nbi, pig, nbi:0.1, ...; default poisson, nbi, pig),
        # those also run as whole processes
        rest = sys.argv[2:]
        chosen_whole = None
        if "--whole" in rest:
            i = rest.index("--whole")
            chosen_whole = tuple(filter(None, rest[i + 1].split(",")))
            rest = rest[:i] + rest[i + 2:]
        chosen_batch = None
        if "--batch" in rest:
            i = rest.index("--batch")
            chosen_batch = int(rest[i + 1])
            rest = rest[:i] + rest[i + 2:]
        assess_against_monte_carlo(families=tuple(rest) or ("poisson", "nbi", "pig"), whole=chosen_whole,
                                   batch=chosen_batch)
    else:
        main()
