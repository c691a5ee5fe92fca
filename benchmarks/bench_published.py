"""Benchmark: additivity restoration and expected inner frequencies on large published tables.

Restoration (sparse least squares with the zero-and-refit rule) and IPF for a publication with about
1e5 inner and 1e4 published cells, and, on a size both can handle, the same restoration against
scipy's dense bounded least squares (``scipy.optimize.lsq_linear``, y >= 0) in the same run.

Run: ``python benchmarks/bench_published.py``
"""

from __future__ import annotations

import numpy as np

from _timing import timed


def _problem(shape, formula, seed):
    from cellsafe.published import Publication
    from cellsafe.table import CountTable, Variable

    rng = np.random.default_rng(seed)
    vs = [Variable(n, list(range(s))) for n, s in zip("abc", shape)]
    counts = rng.poisson(rng.gamma(0.5, 4.0, shape))
    t = CountTable.from_dense(counts, vs)
    pub = Publication.from_formula(t, formula)
    z = pub.aggregate(t).astype(float)
    z = np.maximum(z + rng.integers(-2, 3, z.shape), 0)  # cell-key-like noise, not additive
    return t, pub, z


def main() -> None:
    from scipy.optimize import lsq_linear

    from cellsafe.fitting import expected_inner, restore_additivity

    formula = "a*b + a*c + b*c"
    # large: 80 x 50 x 25 = 100,000 inner cells, 7,406 published cells
    t, pub, z = _problem((80, 50, 25), formula, 1)
    res, t_restore = timed(restore_additivity, pub.X, z)
    fit, t_ipf = timed(expected_inner, pub, res.fitted)
    print(f"large: {pub.n_inner:,} inner x {pub.n_published:,} published cells")
    print(f"  restore_additivity: {t_restore:.2f} s ({res.n_iter} fits, converged={res.converged})")
    print(f"  expected_inner (IPF): {t_ipf:.2f} s ({fit.n_iter} cycles, max margin error {fit.max_margin_error:.2g})")

    # small count rounding of a sparse table of the same size (many small published cells)
    from cellsafe.mechanisms.rounding import SmallCountRounding
    from cellsafe.table import CountTable

    rng = np.random.default_rng(3)
    sparse = CountTable.from_dense(rng.poisson(rng.gamma(0.1, 0.6, (80, 50, 25))), list(t.variables))
    rounded, t_scr = timed(SmallCountRounding(formula, base=3).round, sparse, rng=1)
    print(f"  small count rounding of a sparse table: {t_scr:.2f} s ({rounded.n_iter} iterations, "
          f"{rounded.n_changed:,} inner cells changed)")

    # small enough for the dense baseline: 15 x 10 x 8 = 1,200 inner, 384 published
    t, pub, z = _problem((15, 10, 8), formula, 2)
    ours, t_ours = timed(restore_additivity, pub.X, z)
    A = pub.X.T.toarray()
    base, t_base = timed(lsq_linear, A, z, bounds=(0, np.inf))
    fitted_base = A @ base.x
    print(f"small: {pub.n_inner:,} inner x {pub.n_published:,} published cells")
    print(f"  restore_additivity: {t_ours:.3f} s; scipy lsq_linear (dense, y >= 0): {t_base:.3f} s")
    print(f"  ratio lsq_linear / restore_additivity = {t_base / t_ours:.1f}")
    rss_ours = float(np.sum((z - ours.fitted) ** 2))
    rss_base = float(np.sum((z - fitted_base) ** 2))
    print(f"  residual sum of squares: ours {rss_ours:.4f}, lsq_linear {rss_base:.4f} (NNLS optimum is a lower bound)")


if __name__ == "__main__":
    main()
