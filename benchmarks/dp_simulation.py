"""004's simulation study (section 3): utility of DP synthesizers when populations and rates differ.

County-like data stand in for 004's 1980 heart-disease deaths aged 35-44: 3,109 counties in 49
states with very unequal numbers of counties, log-normal population sizes and rates with state
and county effects, and 11,364 events in all.  Four scenarios cross equal/unequal populations
with equal/unequal rates (004 Figure 1).  For each scenario, L data sets y are drawn from the
multinomial with probabilities n_i lambda_i / sum_j n_j lambda_j, and each is synthesized by

- the multinomial-Dirichlet synthesizer (alpha from 004 eq. 5),
- the Poisson-gamma synthesizer smoothed to the national rate,
- the Poisson-gamma synthesizer smoothed to the state rates (computed from the data, as in 004;
  their own privacy cost is not counted here),

each calibrated by ``for_epsilon`` to the same epsilon.  Utility is the root mean square error of
the rates, sqrt(mean_i (zbar_i / n_i - lambda_i)^2) x 100,000, where zbar averages the synthetic
counts over M implicates (004 uses posterior parameter draws; the synthetic counts are what a user
sees).  The figure shows the mean rMSE over the L data sets with a 95% band.

Run ``python benchmarks/dp_simulation.py --help``; the default run is short (L = 4, M = 2).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from cellsafe import CountTable, Variable
from cellsafe.mechanisms.dirichlet import MultinomialDirichletSynthesizer
from cellsafe.mechanisms.poisson_gamma import PoissonGammaSynthesizer

N_COUNTIES = 3109
N_STATES = 49
TOTAL = 11_364
METHODS = ("multinomial-Dirichlet", "Poisson-gamma (national)", "Poisson-gamma (state)")


def county_data(seed: int = 2021) -> dict[str, np.ndarray]:
    """Populations, rates and states of 3,109 county-like areas (total expected events 11,364)."""
    rng = np.random.default_rng(seed)
    sizes = 1 + rng.multinomial(N_COUNTIES - N_STATES, rng.dirichlet(np.full(N_STATES, 1.5)))
    state = np.repeat(np.arange(N_STATES), sizes)
    pop = np.round(np.exp(rng.normal(np.log(4_000.0), 1.25, N_COUNTIES))) + 100.0
    pop *= 25_600_000 / pop.sum()
    log_rate = rng.normal(0.0, 0.3, N_STATES)[state] + rng.normal(0.0, 0.2, N_COUNTIES)
    rate = np.exp(log_rate)
    rate *= TOTAL / float(np.sum(pop * rate))
    return {"population": np.round(pop), "rate": rate, "state": state}


def _tables(state: np.ndarray) -> tuple[list[Variable], np.ndarray]:
    """Variables (state x county) and the flat index of each county.

    The Poisson-gamma synthesizers visit only cells with a population, so the state x county table
    needs no structural zeros; the multinomial-Dirichlet one visits every cell and is given the
    one-way county table instead (its result does not depend on the states).
    """
    variables = [
        Variable("state", tuple(range(N_STATES)), public=True),
        Variable("county", tuple(range(N_COUNTIES)), public=True),
    ]
    flat = state.astype(np.int64) * N_COUNTIES + np.arange(N_COUNTIES)
    return variables, flat


def state_rates(table: CountTable, pop: CountTable) -> np.ndarray:
    """Each cell's state rate (events over population), one per cell of the state x county table.

    As in 004 the rates come from the simulated data; the library takes them as given rates (a
    regional prior from confidential counts is refused there unless released with prior_epsilon).
    """
    state_of = np.arange(table.n_cells) // N_COUNTIES
    events = np.bincount(state_of[table.index], weights=table.counts, minlength=N_STATES)
    people = np.bincount(state_of[pop.index], weights=pop.counts, minlength=N_STATES)
    return (np.maximum(events, 0.5) / np.where(people > 0, people, 1.0))[state_of]


def scenario(data: dict[str, np.ndarray], same_n: bool, same_rate: bool) -> tuple[np.ndarray, np.ndarray]:
    n = np.full(N_COUNTIES, data["population"].sum() / N_COUNTIES) if same_n else data["population"]
    rate = np.full(N_COUNTIES, TOTAL / n.sum()) if same_rate else data["rate"] * (TOTAL / np.sum(n * data["rate"]))
    return n, rate


def run(epsilons, n_datasets: int, n_implicates: int, seed: int) -> dict:
    data = county_data()
    variables, flat = _tables(data["state"])
    county = [Variable("county", tuple(range(N_COUNTIES)), public=True)]
    county_cells = np.arange(N_COUNTIES)
    rng = np.random.default_rng(seed)
    results = {}
    for same_n in (True, False):
        for same_rate in (True, False):
            n, rate = scenario(data, same_n, same_rate)
            pop = CountTable(variables, flat, n)
            err = np.zeros((len(METHODS), len(epsilons), n_datasets))
            for ell in range(n_datasets):
                y = rng.multinomial(TOTAL, n * rate / np.sum(n * rate))
                table = CountTable(variables, flat, y)
                one_way = CountTable(county, county_cells, y)
                for e, eps in enumerate(epsilons):
                    rates = state_rates(table, pop)
                    jobs = (  # (synthesizer, table it synthesizes, flat index of each county there)
                        (MultinomialDirichletSynthesizer.for_epsilon(eps, TOTAL), one_way, county_cells),
                        (PoissonGammaSynthesizer.for_epsilon(eps, table, population=pop), table, flat),
                        (PoissonGammaSynthesizer.for_epsilon(eps, table, population=pop, prior=rates), table, flat),
                    )
                    for k, (s, t, cells) in enumerate(jobs):
                        zbar = np.mean([z.lookup(cells) for z in s.sample(t, m=n_implicates, rng=rng)], axis=0)
                        err[k, e, ell] = np.sqrt(np.mean((zbar / n - rate) ** 2)) * 1e5
            key = f"{'same' if same_n else 'different'} n_i, {'same' if same_rate else 'different'} lambda_i"
            results[key] = err
    return results


def plot(results: dict, epsilons, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 8), sharex=True)
    for ax, (title, err) in zip(axes.ravel(order="F"), results.items()):
        for k, name in enumerate(METHODS):
            mean = err[k].mean(axis=1)
            lo, hi = np.percentile(err[k], [2.5, 97.5], axis=1)
            ax.plot(epsilons, mean, marker="o", label=name)
            ax.fill_between(epsilons, lo, hi, alpha=0.2)
        ax.set_title(title)
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("rMSE of rates per 100,000")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("DP synthesis of county-like counts (after 004 Figure 1)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epsilons", default="1,2,4,7,10", help="comma-separated epsilons")
    parser.add_argument("--datasets", type=int, default=4, help="data sets per scenario (004: 200)")
    parser.add_argument("--implicates", type=int, default=2, help="implicates averaged per data set")
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument("--output", default="dp_simulation.png", help="figure (PNG)")
    args = parser.parse_args(argv)
    epsilons = [float(x) for x in args.epsilons.split(",")]
    t0 = time.perf_counter()
    results = run(epsilons, args.datasets, args.implicates, args.seed)
    print(f"rMSE of rates x 100,000 (mean over {args.datasets} data sets, {args.implicates} implicates each)")
    header = "scenario / method".ljust(52) + "".join(f"eps={e:<7g}" for e in epsilons)
    print(header)
    dominated = True
    for title, err in results.items():
        print(title)
        for k, name in enumerate(METHODS):
            print(f"  {name:50s}" + "".join(f"{v:<11.1f}" for v in err[k].mean(axis=1)))
        if title.startswith("different n_i"):
            dominated &= bool(np.all(err[1].mean(axis=1) < err[0].mean(axis=1)))
            dominated &= bool(np.all(err[2].mean(axis=1) < err[0].mean(axis=1)))
    plot(results, epsilons, Path(args.output))
    print(f"Poisson-gamma better than multinomial-Dirichlet at every epsilon when n_i differ: {dominated}")
    print(f"figure: {args.output}  ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
