"""A priori accuracy of a marginal synthesizer: the error of every measured and released marginal.

Before anything is drawn, the data holder can know what a marginal release will cost in accuracy:

- **every measured marginal** (:attr:`MarginalAccuracy.measurements`): its noise's sigma is fixed by
  the budget and the schedule, so the expected total-variation error of the noisy marginal is known:
  raw, n_cells E|Z| / (2 N) with Z the discrete Gaussian noise, and after the negative counts are
  set to zero, sum over cells of E|max(x + Z, 0) - x| / (2 N) = sum of sigma (sqrt(2/pi) - phi(x/sigma))
  + x Phi(-x/sigma), over 2 N (Gaussian approximation of Z, exact to O(1/sigma^2));
- **every released k-way marginal** (:attr:`MarginalAccuracy.released`, per degree k): the error of the
  model's structure (the total-variation distance between the data's marginal and the maximum-entropy
  model fitted to the exact marginals of the structure the mechanism would choose without noise: MST's
  spanning tree of the best pairs, AIM's rounds with the best choice each time), plus the noise carried
  into it: for a marginal inside a measured one, the clipped noise of the measured marginals summed onto
  it (inverse-variance combination of every measurement holding it); otherwise the sum of that noise
  over the cliques of the model that join its variables (an upper bound by the triangle inequality).
  Where rare categories are merged (their noisy one-way counts below 3 sigma), the structure is taken on
  the original categories, the merged cell shared back among them as the release draws them, and the
  noise part adds, for each merged variable, the expected error of those shares (taken from noisy counts).

The noise part ignores what estimation gains by making the marginals consistent, and the structure
part assumes the noise-free choice; ``benchmarks/bench_marginal_apriori.py`` compares the prediction
with releases.  The assessment reads the confidential table: it is for the data holder, never released.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._frames import pd
from .._results import Result
from ..exceptions import InvalidArgumentError

__all__ = ["MarginalAccuracy", "marginal_error"]

_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def _clipped_error(x: np.ndarray, var: np.ndarray | float) -> float:
    """sum over cells of E|max(x + Z, 0) - x|, Z ~ N(0, var)."""
    from scipy import special  # imported here: cellsafe.apriori's other metrics need no scipy

    s = np.sqrt(np.broadcast_to(var, x.shape)).astype(np.float64)
    t = x / s
    phi = np.exp(-0.5 * t * t) / math.sqrt(2.0 * math.pi)
    return float((s * (_SQRT_2_PI - phi) + x * special.ndtr(-t)).sum())


@dataclass(frozen=True)
class MarginalAccuracy(Result):
    """Expected errors of a marginal release, known before any draw.

    Attributes
    ----------
    measurements : DataFrame
        One row per planned measurement: ``marginal`` (variables), ``cells``, ``sigma``, ``rho``,
        ``tv_raw`` (expected TV of the noisy counts) and ``tv`` (negative counts set to zero).
    released : DataFrame
        One row per degree k: the expected average TV over all k-way marginals (``tv``), its
        ``structure`` and ``noise`` parts, and the number of marginals.
    structure : tuple of tuple of str
        The cliques of the model the mechanism would fit without noise.
    total : int
        The records (the denominators of the TV errors).
    """

    measurements: Any = field(repr=False)
    released: Any = field(repr=False)
    structure: tuple[tuple[str, ...], ...] = ()
    total: int = 0

    def tv(self, k: int) -> float:
        """The expected average total-variation error of the released k-way marginals."""
        row = self.released[self.released["k"] == int(k)]
        if row.empty:
            raise InvalidArgumentError(f"no released {k}-way marginals were assessed (degrees {list(self.released['k'])}).")
        return float(row["tv"].iloc[0])

    def to_frame(self) -> Any:
        return self.released

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": int(self.total),
            "structure": [list(c) for c in self.structure],
            "released": self.released.to_dict(orient="records"),
            "measurements": self.measurements.assign(marginal=self.measurements["marginal"].map(list)).to_dict(orient="records"),
        }


def marginal_error(data: Any, synthesizer: Any, domain: Any = None, *, degrees: Sequence[int] = (1, 2, 3),
                   names: Sequence[str] | None = None) -> MarginalAccuracy:
    """The expected errors of a :class:`~cellsafe.MarginalSynthesizer` on ``data``, before any draw.

    Parameters
    ----------
    data : CountTable, path, DataFrame or MarginalSource
        The confidential table or records (with ``domain`` for records).
    synthesizer : MarginalSynthesizer
    domain : Domain, optional
    degrees : sequence of int
        The released marginals assessed: all marginals of each of these numbers of variables.

    Returns
    -------
    MarginalAccuracy

    Examples
    --------
    >>> import cellsafe
    >>> d = cellsafe.Domain({"a": ["x", "y"], "b": ["u", "v", "w"], "c": ["p", "q"]})
    >>> t = cellsafe.CountTable(list(d.variables), [0, 4, 7, 11], [400, 300, 200, 100])
    >>> acc = cellsafe.apriori.marginal_error(t, cellsafe.MarginalSynthesizer(1.0))
    >>> 0 < acc.tv(2) < acc.tv(3) < 1
    True
    """
    from ..mechanisms import MarginalSynthesizer, marginal_source

    if not isinstance(synthesizer, MarginalSynthesizer):
        raise InvalidArgumentError(f"marginal_error assesses a MarginalSynthesizer. Got {type(synthesizer).__name__}.")
    source = marginal_source(data, domain, names)
    plan = synthesizer.expected_plan(source)
    comp, model = plan.compression, plan.model
    sizes = source.sizes
    d = len(sizes)
    wanted = [r for k in degrees if 1 <= int(k) <= d for r in itertools.combinations(range(d), int(k))]
    wanted += [(a,) for a in range(d) if (a,) not in wanted]  # the one-way counts share merged categories back
    exact = dict(zip(wanted, source.marginals(wanted)))  # one pass over the records
    n_total = int(source.marginals([(0,)])[0].sum()) if d else 0
    n = max(n_total, 1)
    # measurements: variance per cell on the merged categories
    rows = []
    meas_var: list[tuple[tuple[int, ...], np.ndarray]] = []
    for m in plan.measurements:
        var = np.broadcast_to(np.square(m.sigma), m.values.shape).astype(np.float64)
        meas_var.append((m.attrs, var))
        sig = float(np.min(m.sigma))
        rows.append({"marginal": tuple(source.names[a] for a in m.attrs), "cells": int(m.values.size), "sigma": sig,
                     "tv_raw": float(np.sqrt(var).sum() * _SQRT_2_PI / (2 * n)),
                     "tv": _clipped_error(np.maximum(m.values, 0.0), var) / (2 * n)})
    rho = [s.rho for s in plan.steps if s.kind == "measure"]
    measurements = pd.DataFrame(rows).assign(rho=rho[: len(rows)])
    released = []
    cliques = model.cliques
    shares = _share_noise(plan, exact, d, n)
    for k in degrees:
        if not 1 <= int(k) <= d:
            continue
        structure, noise = [], []
        for r in itertools.combinations(range(d), int(k)):
            xo = exact[r].astype(np.float64)
            x = comp.marginal(xo, r)
            fitted = comp.spread(model.marginal(r), r)  # on the original categories, merged ones shared back
            structure.append(0.5 * float(np.abs(xo / max(xo.sum(), 1.0) - fitted / max(fitted.sum(), 1e-300)).sum()))
            noise.append(_noise_part(r, x, meas_var, cliques, comp.new_sizes, n) + sum(shares[a] for a in r))
        released.append({"k": int(k), "marginals": len(structure), "structure": float(np.mean(structure)),
                         "noise": float(np.mean(noise)), "tv": float(np.mean(structure) + np.mean(noise))})
    return MarginalAccuracy(measurements, pd.DataFrame(released),
                            tuple(tuple(source.names[a] for a in c) for c in cliques), n_total)


def _share_noise(plan: Any, exact: dict, d: int, n: int) -> list[float]:
    """Per attribute, the expected TV error of sharing its merged cell back among its rare categories by their
    noisy one-way counts clipped at zero (0 when nothing was merged).

    The expectation over the Gaussian approximation of the noise is taken on 512 fixed normal draws (the same
    every call), a numerical integral: the shares are a ratio of clipped sums, with no closed form.
    """
    comp = plan.compression
    out = [0.0] * d
    z = None
    for a in range(d):
        if comp.kept[a].all():
            continue
        rare = ~comp.kept[a]
        one = next(m for m in plan.measurements if m.attrs == (a,))
        sigma = float(np.atleast_1d(one.sigma)[-1]) / math.sqrt(int(rare.sum()))  # the merged cell's is sqrt(k) times
        x = np.asarray(exact[(a,)], dtype=np.float64)[rare]
        if z is None or z.shape[1] < x.size:
            z = np.random.default_rng(0x5348).standard_normal((512, max(x.size, 16)))
        w = np.maximum(x + sigma * z[:, : x.size], 0.0)
        tot = w.sum(axis=1, keepdims=True)
        p = np.where(tot > 0, w / np.where(tot > 0, tot, 1.0), 1.0 / x.size)
        out[a] = float(np.abs(x.sum() * p - x).sum(axis=1).mean()) / (2 * n)
    return out


def _projected_var(r: tuple[int, ...], meas_var: list[tuple[tuple[int, ...], np.ndarray]],
                   sizes: Sequence[int]) -> np.ndarray | None:
    """Per-cell noise variance of marginal r from every measurement holding it (inverse-variance combined)."""
    inv = None
    for attrs, var in meas_var:
        if not set(r) <= set(attrs):
            continue
        axes = tuple(i for i, a in enumerate(attrs) if a not in r)
        v = var.sum(axis=axes) if axes else var
        inv = 1.0 / v if inv is None else inv + 1.0 / v
    return None if inv is None else 1.0 / inv


def _noise_part(r: tuple[int, ...], x: np.ndarray, meas_var: list, cliques: Sequence[tuple[int, ...]],
                sizes: Sequence[int], n: int) -> float:
    var = _projected_var(r, meas_var, sizes)
    if var is not None:
        return _clipped_error(x, var) / (2 * n)
    # not inside a measured marginal: the noise of the parts of r each clique holds, added
    total = 0.0
    left = set(r)
    for c in sorted(cliques, key=lambda c: -len(set(c) & set(r))):
        part = tuple(sorted(set(c) & left | (set(c) & set(r) if set(c) & left else set())))
        if not part or not (set(c) & left):
            continue
        v = _projected_var(part, meas_var, sizes)
        if v is None:
            continue
        axes = tuple(i for i, a in enumerate(r) if a not in part)
        xp = x.sum(axis=axes) if axes else x
        total += _clipped_error(xp, v) / (2 * n)
        left -= set(c)
        if not left:
            break
    return total
