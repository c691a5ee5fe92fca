"""Poisson-gamma DP synthesis on 004's setting: 3,109 counties, 11,364 events.

The exact synthesizer (negative binomials conditioned on their sum, by rejection) is timed per
implicate against the shortcut "posterior rates, then a multinomial" (a different mechanism with no
privacy claim, the cheapest possible draw on the same cells) measured in the same run; the
multinomial-Dirichlet synthesizer is shown too.  Target (issue 7): under 1 s per implicate.

The exact integer noise samplers (discrete Laplace and discrete Gaussian, Canonne, Kamath and
Steinke 2020, in 64-bit integer arithmetic) are timed against the physical floor: numpy's
floating-point draws of the same size (two geometric draws for the two-sided geometric, one Laplace
or normal draw), which carry no exactness and no privacy claim.  ``python bench_dp.py noise``
runs only that part.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_time  # noqa: E402
from dp_simulation import TOTAL, _tables, county_data, state_rates  # noqa: E402

from cellsafe import CountTable  # noqa: E402
from cellsafe.distributions import DiscreteGaussian, DiscreteLaplace  # noqa: E402
from cellsafe.mechanisms.dirichlet import MultinomialDirichletSynthesizer  # noqa: E402
from cellsafe.mechanisms.poisson_gamma import (  # noqa: E402
    PoissonGammaMultinomialSynthesizer,
    PoissonGammaSynthesizer,
)


def _per_implicate(synth, table, m: int = 20, repeat: int = 3) -> float:
    best = np.inf
    for r in range(repeat):
        t0 = time.perf_counter()
        synth.sample(table, m=m, rng=r)
        best = min(best, (time.perf_counter() - t0) / m)
    return best


def main() -> None:
    data = county_data()
    variables, flat = _tables(data["state"])
    n, rate = data["population"], data["rate"]
    y = np.random.default_rng(1).multinomial(TOTAL, n * rate / np.sum(n * rate))
    table = CountTable(variables, flat, y)
    pop = CountTable(variables, flat, n)
    print(f"table: {table!r}, population in {pop.nnz:,} cells")
    print(
        f"{'epsilon':>8s} {'prior':>9s} {'exact s/implicate':>18s} {'shortcut s':>11s} "
        f"{'exact/shortcut':>15s} {'MD s':>8s}"
    )
    for eps in (1.0, 4.0, 10.0):
        for prior in ("national", "regional:state"):
            rates = "national" if prior == "national" else state_rates(table, pop)
            exact = PoissonGammaSynthesizer.for_epsilon(eps, table, population=pop, prior=rates)
            shortcut = PoissonGammaMultinomialSynthesizer(exact.a, exact.b, population=pop)
            t_exact = _per_implicate(exact, table)
            t_short = _per_implicate(shortcut, table)
            md = MultinomialDirichletSynthesizer.for_epsilon(eps, TOTAL)
            one_way = CountTable([variables[1]], np.arange(len(y)), y)
            t_md = _per_implicate(md, one_way)
            print(
                f"{eps:8g} {prior.split(':')[0]:>9s} {t_exact:18.4f} {t_short:11.4f} "
                f"{t_exact / t_short:15.2f} {t_md:8.4f}"
            )
    print("target: exact Poisson-gamma under 1 s per implicate")
    _large()
    noise()


def _large(n_cells: int = 1_000_000, total: int = 1_000_000) -> None:
    """Scaling: a million cells with populations, a million events, epsilon 2."""
    from cellsafe import Variable

    rng = np.random.default_rng(3)
    v = [Variable("cell", tuple(range(n_cells)), public=True)]
    n = np.round(np.exp(rng.normal(6.0, 1.5, n_cells))) + 1.0
    y = rng.multinomial(total, n / n.sum())
    nz = np.flatnonzero(y)
    table = CountTable(v, nz, y[nz])
    pop = CountTable(v, np.arange(n_cells), n)
    exact = PoissonGammaSynthesizer.for_epsilon(2.0, table, population=pop)
    shortcut = PoissonGammaMultinomialSynthesizer(exact.a, exact.b, population=pop)
    t_exact = _per_implicate(exact, table, m=2, repeat=2)
    t_short = _per_implicate(shortcut, table, m=2, repeat=2)
    print(
        f"{n_cells:,} cells, total {total:,}: exact {t_exact:.3f} s/implicate, shortcut {t_short:.3f} s, "
        f"ratio {t_exact / t_short:.2f}"
    )


def noise(n: int = 1_000_000) -> None:
    """Exact integer noise against numpy's floating-point draws of the same size (the physical floor)."""
    print(f"exact noise samplers, {n:,} draws (numpy {np.__version__}); floor = numpy floating-point draws")
    print(f"{'sampler':>30s} {'exact s':>8s} {'floor s':>8s} {'exact/floor':>12s}")
    gen = np.random.default_rng(0)
    for eps in (1e-10, 1e-3, 1.0, 50.0):
        d = DiscreteLaplace.for_epsilon(eps)
        p = -np.expm1(-eps)
        t_exact, _ = best_time(lambda d=d: d.sample(n, rng=gen))
        t_floor, _ = best_time(lambda p=p: gen.geometric(p, n) - gen.geometric(p, n))
        print(f"{'discrete Laplace eps=' + format(eps, 'g'):>30s} {t_exact:8.3f} {t_floor:8.3f} {t_exact / t_floor:12.1f}")
    t_lap, _ = best_time(lambda: gen.laplace(0.0, 1.0, n))
    print(f"{'(numpy laplace, for scale)':>30s} {'':>8s} {t_lap:8.3f}")
    for sigma in (0.5, 1.0, 10.0, 1e3, 1e9):
        d = DiscreteGaussian(sigma)
        t_exact, _ = best_time(lambda d=d: d.sample(n, rng=gen))
        t_floor, _ = best_time(lambda s=sigma: np.rint(gen.normal(0.0, s, n)).astype(np.int64))
        print(f"{'discrete Gaussian sigma=' + format(sigma, 'g'):>30s} {t_exact:8.3f} {t_floor:8.3f} {t_exact / t_floor:12.1f}")


if __name__ == "__main__":
    if sys.argv[1:] == ["noise"]:
        noise()
    else:
        main()
