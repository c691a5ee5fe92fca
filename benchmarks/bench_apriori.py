"""A priori metrics, tuning and the frontier against Monte Carlo estimates of the same numbers.

Run: python benchmarks/bench_apriori.py

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


if __name__ == "__main__":
    main()
