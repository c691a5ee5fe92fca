"""Poisson-gamma DP synthesis on 004's setting: 3,109 counties, 11,364 events.

The exact synthesizer (negative binomials conditioned on their sum, by rejection) is timed per
implicate against the shortcut "posterior rates, then a multinomial" (a different mechanism with no
privacy claim, the cheapest possible draw on the same cells) measured in the same run; the
multinomial-Dirichlet synthesizer is shown too.  Target (issue 7): under 1 s per implicate.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dp_simulation import TOTAL, _tables, county_data  # noqa: E402

from cellsafe import CountTable  # noqa: E402
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
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exact = PoissonGammaSynthesizer.for_epsilon(eps, table, population=pop, prior=prior)
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


def _large(n_cells: int = 1_000_000, total: int = 1_000_000) -> None:
    """Scaling: a million cells with populations, a million events, epsilon 2."""
    from cellsafe import Variable

    rng = np.random.default_rng(3)
    v = [Variable("cell", tuple(range(n_cells)))]
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


if __name__ == "__main__":
    main()
