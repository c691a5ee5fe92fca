"""Count distributions: sampling and pmf speed on the ESC substitute's 333,660 non-zero cells.

Run: python benchmarks/bench_distributions.py

Means are the non-zero cell counts of the ESC substitute (methods.md section 1, 003 Table 2:
counts 1..10 with their published frequencies, 67,512 cells >= 11 with mean about 110.6).  Ratios,
each against a baseline timed in the same process:

- PIG / NBI sampling: the mixture sampler (Wald draw, then Poisson) against NBI's gamma-Poisson.
  003 reports 162 s against 0.3 s (ratio 540) for gamlss.dist's rPIG, which inverts the cdf.
- cdf inversion / mixture for PIG: a vectorized cdf-inversion sampler (the rPIG approach: draw
  u, add pmf terms by the three-term recursion until they pass u) against the mixture sampler.
- PIG / NBI pmf on k = 0..60 for every distinct mean.
"""

from __future__ import annotations

import numpy as np

from _timing import best_time

N_CELLS = 333_660
COUNTS_1_10 = [119_917, 51_412, 25_952, 19_450, 13_076, 10_345, 7_947, 7_077, 5_809, 5_163]


def esc_means(seed: int = 1) -> np.ndarray:
    """Cell means shaped like 003 Table 2 (the >= 11 cells: 11 + geometric with mean 99.6)."""
    rng = np.random.default_rng(seed)
    small = np.repeat(np.arange(1, 11), COUNTS_1_10)
    n_big = N_CELLS - small.size
    big = 11 + rng.geometric(1.0 / 100.6, size=n_big) - 1
    return np.concatenate([small, big]).astype(np.float64)


def pig_by_inversion(mu: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Baseline: invert the PIG cdf per cell by adding pmf terms (recursion) until they pass u."""
    u = rng.random(mu.size)
    a = 2.0 * sigma * mu / (1.0 + 2.0 * sigma * mu)
    b = mu * mu / (1.0 + 2.0 * sigma * mu)
    p_prev = np.exp(-2.0 * mu / (1.0 + np.sqrt(1.0 + 2.0 * sigma * mu)))  # P(0)
    p_cur = p_prev * mu / np.sqrt(1.0 + 2.0 * sigma * mu)  # P(1)
    cum = p_prev.copy()
    out = np.zeros(mu.size, dtype=np.int64)
    active = np.flatnonzero(cum < u)
    y = 1
    while active.size:
        cum[active] += p_cur[active]
        out[active] = y
        active = active[cum[active] < u[active]]
        y += 1
        nxt = a * (1.0 - 1.5 / y) * p_cur + b * p_prev / (y * (y - 1.0))
        p_prev, p_cur = p_cur, nxt
    return out


def main() -> None:
    from cellsafe.distributions import GAF, NBI, PIG, Poisson

    mu = esc_means()
    print(f"{mu.size:,} cells, mean count {mu.mean():.1f}")
    rows = []
    for sigma in (0.1, 1.0, 10.0):
        t_nbi = best_time(lambda: NBI(sigma).sample(mu, rng=1))[0]
        t_pig = best_time(lambda: PIG(sigma).sample(mu, rng=1))[0]
        rows.append((f"sample PIG / NBI, sigma={sigma:g}", t_pig, t_nbi))
    t_nbi = best_time(lambda: NBI(1.0).sample(mu, rng=1))[0]
    rows.append(("sample Poisson / NBI", best_time(lambda: Poisson().sample(mu, rng=1))[0], t_nbi))
    rows.append(("sample GAF(1, -0.5) / NBI", best_time(lambda: GAF(1.0, -0.5).sample(mu, rng=1))[0], t_nbi))
    for sigma in (0.1, 1.0):
        t_inv = best_time(lambda: pig_by_inversion(mu, sigma, np.random.default_rng(1)), repeat=1)[0]
        t_mix = best_time(lambda: PIG(sigma).sample(mu, rng=1))[0]
        rows.append((f"PIG cdf inversion / mixture, sigma={sigma:g}", t_inv, t_mix))
    distinct = np.unique(mu)
    k = np.arange(61)[:, None]
    t_pmf_nbi = best_time(lambda: NBI(1.0).pmf(k, distinct))[0]
    t_pmf_pig = best_time(lambda: PIG(1.0).pmf(k, distinct))[0]
    rows.append((f"pmf PIG / NBI, k=0..60 x {distinct.size} means", t_pmf_pig, t_pmf_nbi))
    width = max(len(r[0]) for r in rows)
    for name, t, base in rows:
        print(f"{name:<{width}}  {t * 1e3:9.1f} ms vs {base * 1e3:9.1f} ms  ratio {t / base:7.2f}")


if __name__ == "__main__":
    main()
