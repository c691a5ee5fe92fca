"""The private steps of the marginal synthesizers: measuring marginals, and MST's and AIM's selections.

Every step spends zCDP (rho) under the synthesizer's neighbour relation, and its spending is
recorded as a :class:`PrivacyStep`: a measurement of one marginal with discrete Gaussian noise of
variance sigma^2 costs Delta_2^2 / (2 sigma^2) (Delta_2^2 = 1 when one record is added or removed, 2
when one is replaced: one cell loses a record and another gains it), an exponential-mechanism
choice with parameter epsilon costs epsilon^2 / 8.  Both are computed from the exact parameters the
samplers use (a discrete Gaussian's sigma^2 is never below the one asked for, the exponential
mechanism's rate never above), so the steps' rho add up to at most the budget.

MST (McKenna, Miklau and Sheldon 2021, "Winning the NIST contest"): the one-way marginals, then
the d - 1 pairs of a spanning tree chosen one edge at a time by the exponential mechanism (quality:
the L1 distance between a pair's counts and what the one-way estimates predict under independence,
sensitivity 1 add/remove), then those pairs measured.  The split is :data:`MST_SPLIT`: 20% of rho on
the one-way marginals, 10% on the choices and 70% on the pairs, where MST's authors split in thirds;
the pairs carry their one-way marginals too, and on Adult (8 and 14 columns, epsilon 0.3 to 3) this
split lowers the average TV error of the 1-, 2- and 3-way marginals by 1-4% against thirds.
Categories whose noisy one-way count is below 3 sigma are merged for the rest (MST's domain
compression) and drawn back in proportion to their noisy counts.

AIM (McKenna, Mullins, Sheldon and Miklau 2022): one-way marginals first, then rounds that each
spend 10% of their share choosing, among the workload's marginals whose addition keeps the model
within a size that grows with the budget spent, the one the current model fits worst (its L1
error, weighted by its overlap with the workload, minus the error its measurement would have), and
90% measuring it; the noise halves when a measurement changed the model by less than its expected
error, and the last round spends what is left.  Rare categories are merged after the one-way
marginals as in MST (AIM's authors recommend it for large domains).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..distributions import DiscreteGaussian
from ..fitting.graphical import GraphicalModel, Measurement, estimate_model, minimum_variance_total, model_size
from ._marginal_source import MarginalSource
from ._zcdp import SCORE_STEPS, exponential_mechanism, exponential_rate

__all__ = ["PrivacyStep", "Plan", "run_mst", "run_aim", "Compression", "MST_SPLIT"]

#: MST's shares of rho: the one-way marginals, the choices of the spanning tree's pairs, the pairs.
MST_SPLIT = (0.2, 0.1, 0.7)


@dataclass(frozen=True)
class PrivacyStep:
    """One step that reads the confidential data: a measurement or a selection.

    Attributes
    ----------
    kind : {"measure", "select"}
    attrs : tuple of int
        The marginal measured, or the marginal chosen by a selection.
    rho : float
        zCDP spent, under the synthesizer's neighbour relation.
    sigma : float
        The noise's sigma (measurements), 0 for selections.
    epsilon : float
        The exponential mechanism's epsilon (selections), 0 for measurements.
    """

    kind: str
    attrs: tuple[int, ...]
    rho: float
    sigma: float = 0.0
    epsilon: float = 0.0


@dataclass
class Plan:
    """What a run produced: the steps, the measurements, the fitted model and the compression."""

    steps: list[PrivacyStep]
    measurements: list[Measurement]
    model: GraphicalModel
    compression: "Compression"
    n_iter: int = 0


def _measure(x: np.ndarray, sigma: float, sens2: float, gen: Any) -> tuple[np.ndarray, float, float]:
    """x plus exact discrete Gaussian noise: (noisy counts, the noise's sigma, rho spent).

    Without a generator (the expected plan of the a priori assessment) the counts come back as
    they are, with the sigma the noise would have.
    """
    noise = DiscreteGaussian(sigma)
    if gen is None:
        return x.astype(np.float64), math.sqrt(noise.sigma2), sens2 / (2.0 * noise.sigma2)
    y = x.astype(np.float64) + noise.sample(x.size, rng=gen).reshape(x.shape)
    return y, math.sqrt(noise.sigma2), sens2 / (2.0 * noise.sigma2)


def _select(qualities: Sequence[float], epsilon: float, sensitivity: float, gen: Any) -> tuple[int, float, float]:
    """Exponential mechanism: (index, epsilon actually used, rho spent = epsilon^2 / 8); the best without a generator."""
    q = np.asarray(qualities, dtype=np.float64)
    idx = int(np.argmax(q)) if gen is None else exponential_mechanism(q, epsilon, sensitivity, gen)
    eps = float(exponential_rate(epsilon)) * 2 * SCORE_STEPS
    return idx, eps, eps * eps / 8.0


# ---------------------------------------------------------------------- compression of rare categories
class Compression:
    """Categories merged into one per attribute (MST): code maps, and how to draw them back."""

    def __init__(self, sizes: Sequence[int], kept: Sequence[np.ndarray] | None = None,
                 weights: Sequence[np.ndarray] | None = None) -> None:
        self.sizes = tuple(int(s) for s in sizes)
        self.kept = [np.ones(s, bool) for s in self.sizes] if kept is None else [np.asarray(k, bool) for k in kept]
        self.weights = weights
        self.maps = []
        sizes = []
        for k in self.kept:
            m = np.full(k.size, int(k.sum()), dtype=np.int64)
            m[k] = np.arange(int(k.sum()))
            self.maps.append(m)
            sizes.append(int(k.sum()) + (0 if k.all() else 1))
        self.new_sizes = tuple(sizes)

    def marginal(self, x: np.ndarray, attrs: Sequence[int]) -> np.ndarray:
        """A marginal on the original codes summed onto the merged ones."""
        out = x
        for axis, a in enumerate(attrs):
            if self.kept[a].all():
                continue
            out = np.moveaxis(out, axis, 0)
            merged = np.zeros((self.new_sizes[a],) + out.shape[1:], dtype=out.dtype)
            np.add.at(merged, self.maps[a], out)
            out = np.moveaxis(merged, 0, axis)
        return out

    def shares(self, a: int) -> np.ndarray:
        """Attribute ``a``'s merged categories: the share of the merged cell each gets back (what :meth:`expand` draws by)."""
        rare = np.flatnonzero(~self.kept[a])
        w = np.maximum(self.weights[a][rare], 0.0) if self.weights is not None else np.zeros(rare.size)
        return w / w.sum() if w.sum() > 0 else np.full(rare.size, 1.0 / rare.size)

    def spread(self, x: np.ndarray, attrs: Sequence[int]) -> np.ndarray:
        """A marginal on the merged codes back onto the original ones: each merged cell's count shared among
        its categories as :meth:`expand` draws them (the expected counts of the records drawn back)."""
        out = x
        for axis, a in enumerate(attrs):
            if self.kept[a].all():
                continue
            w = np.zeros((self.new_sizes[a], self.sizes[a]))
            w[self.maps[a][self.kept[a]], np.flatnonzero(self.kept[a])] = 1.0
            w[-1, np.flatnonzero(~self.kept[a])] = self.shares(a)
            out = np.moveaxis(np.tensordot(out, w, axes=([axis], [0])), -1, axis)
        return out

    def expand(self, codes: np.ndarray, gen: Any) -> np.ndarray:
        """Records on merged codes back to original codes (merged ones drawn by the noisy one-way weights)."""
        out = codes.copy()
        for a, k in enumerate(self.kept):
            if k.all():
                continue
            inv = np.flatnonzero(k)
            rare = np.flatnonzero(~k)
            col = codes[:, a]
            is_rare = col == inv.size
            out[~is_rare, a] = inv[col[~is_rare]]
            n_rare = int(is_rare.sum())
            if n_rare:
                cdf = np.cumsum(self.shares(a))
                cdf[-1] = 1.0
                out[is_rare, a] = rare[np.searchsorted(cdf, gen.random(n_rare), side="right").clip(0, rare.size - 1)]
        return out


def _project_simplex(y: np.ndarray, total: float) -> np.ndarray:
    """The closest (L2) non-negative vector to ``y`` summing to ``total``."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, y.size + 1)
    cond = u - css / k > 0
    r = k[cond][-1] if cond.any() else 1
    return np.maximum(y - css[r - 1] / r, 0.0)


# ---------------------------------------------------------------------- MST
def run_mst(source: MarginalSource, rho: float, sens2: float, sens_select: float, gens: dict[str, Any],
            *, compress: bool = True, max_iter: int = 1000, split: Sequence[float] = MST_SPLIT) -> Plan:
    """MST with total zCDP ``rho`` (see the module notes); ``split`` = the shares of rho (one-way marginals,
    choices, pairs; the pairs take what the others left)."""
    sizes = source.sizes
    d = len(sizes)
    steps: list[PrivacyStep] = []
    ones = source.marginals([(i,) for i in range(d)])
    # one-way marginals: split[0] of rho in all (each with squared sensitivity sens2); a single variable takes it all
    share1 = split[0] if d > 1 else 1.0 - 1e-9
    sigma1 = math.sqrt(d * sens2 / (2.0 * rho * share1))
    noisy1 = []
    for i, x in enumerate(ones):
        y, s, r = _measure(x, sigma1, sens2, gens["measure"])
        noisy1.append((y, s))
        steps.append(PrivacyStep("measure", (i,), r, sigma=s))
    comp = Compression(sizes, [y >= 3.0 * s for y, s in noisy1] if compress else None, [y for y, _ in noisy1])
    one_meas = []
    for i, (y, s) in enumerate(noisy1):
        yc = comp.marginal(y, (i,))
        k = np.ones(yc.shape)
        if not comp.kept[i].all():
            k[-1] = float((~comp.kept[i]).sum())
        one_meas.append(Measurement((i,), yc, s * np.sqrt(k)))
    csizes = comp.new_sizes
    if d == 1:
        fit = estimate_model(csizes, one_meas, max_iter=max_iter)
        return Plan(steps, one_meas, fit.model, comp, fit.n_iter)
    # selection: a spanning tree, one exponential-mechanism choice per edge
    total = minimum_variance_total(one_meas)
    p1 = [_project_simplex(m.values, total) / total for m in one_meas]
    pairs = list(itertools.combinations(range(d), 2))
    exact = source.marginals(pairs)
    quality = {}
    for (a, b), x in zip(pairs, exact):
        xc = comp.marginal(x, (a, b))
        quality[(a, b)] = float(np.abs(xc - total * np.outer(p1[a], p1[b])).sum())
    rho_select = rho * split[1]
    eps = math.sqrt(8.0 * rho_select / (d - 1))
    parent = list(range(d))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    tree = []
    for _ in range(d - 1):
        cands = [e for e in pairs if find(e[0]) != find(e[1])]
        idx, e_used, r = _select([quality[e] for e in cands], eps, sens_select, gens["select"])
        a, b = cands[idx]
        parent[find(a)] = find(b)
        tree.append((a, b))
        steps.append(PrivacyStep("select", (a, b), r, epsilon=e_used))
    # the pairs: what is left of rho
    rho_left = (rho - sum(s.rho for s in steps)) * (1.0 - 1e-9)  # floating-point sums stay within the budget
    sigma2 = math.sqrt(len(tree) * sens2 / (2.0 * rho_left))
    measurements = list(one_meas)
    for (a, b), x in zip(tree, source.marginals(tree)):
        y, s, r = _measure(comp.marginal(x, (a, b)), sigma2, sens2, gens["measure"])
        measurements.append(Measurement((a, b), y, s))
        steps.append(PrivacyStep("measure", (a, b), r, sigma=s))
    fit = estimate_model(csizes, measurements, max_iter=max_iter)
    return Plan(steps, measurements, fit.model, comp, fit.n_iter)


# ---------------------------------------------------------------------- AIM
def workload_candidates(d: int, degree: int) -> dict[tuple[int, ...], float]:
    """AIM's candidates for the workload of all ``degree``-way marginals: every set of at most
    ``degree`` attributes, weighted by its overlap with the workload (sum over workload sets W of
    |r & W|, which is |r| times C(d - 1, degree - 1); divided by that constant here)."""
    k = min(degree, d)
    return {c: float(len(c)) for r in range(1, k + 1) for c in itertools.combinations(range(d), r)}


def run_aim(source: MarginalSource, rho: float, sens2: float, sens_select: float, gens: dict[str, Any], *,
            degree: int = 3, rounds: int | None = None, max_cells: float = 1e5, max_iter: int = 300,
            round_iter: int = 40, compress: bool = False, progress: Callable[[float], None] | None = None) -> Plan:
    """AIM with total zCDP ``rho`` (see the module notes); ``max_cells`` bounds the model's size."""
    sizes = source.sizes
    d = len(sizes)
    T = int(rounds) if rounds is not None else 16 * d
    candidates = workload_candidates(d, degree)
    cand_list = list(candidates)
    answers = dict(zip(cand_list, source.marginals(cand_list)))
    n_cells = {c: math.prod(sizes[a] for a in c) for c in cand_list}
    sigma = math.sqrt(sens2 * T / (2.0 * 0.9 * rho))
    eps = math.sqrt(8.0 * 0.1 * rho / T)
    steps: list[PrivacyStep] = []
    measurements: list[Measurement] = []
    noisy1 = []
    for i in range(d):
        y, s, r = _measure(answers[(i,)], sigma, sens2, gens["measure"])
        noisy1.append((y, s))
        steps.append(PrivacyStep("measure", (i,), r, sigma=s))
    comp = Compression(sizes, [y >= 3.0 * s for y, s in noisy1] if compress else None, [y for y, _ in noisy1])
    for i, (y, s) in enumerate(noisy1):
        yc = comp.marginal(y, (i,))
        k = np.ones(yc.shape)
        if not comp.kept[i].all():
            k[-1] = float((~comp.kept[i]).sum())
        measurements.append(Measurement((i,), yc, s * np.sqrt(k)))
    if compress:
        sizes = comp.new_sizes
        answers = {c: comp.marginal(x, c) for c, x in answers.items()}
        n_cells = {c: math.prod(sizes[a] for a in c) for c in cand_list}
    fit = estimate_model(sizes, measurements, max_iter=round_iter)
    model = fit.model
    n_iter = fit.n_iter
    used = sum(s.rho for s in steps)
    terminate = False
    while not terminate:
        left = (rho - used) * (1.0 - 1e-9)
        if left < 2.0 * (sens2 / (2.0 * sigma**2) + eps**2 / 8.0):
            sigma = math.sqrt(sens2 / (2.0 * 0.9 * left))
            eps = math.sqrt(8.0 * 0.1 * left)
            terminate = True
        limit = max_cells * min(1.0, (used + sens2 / (2.0 * sigma**2) + eps**2 / 8.0) / rho)
        cliques = [m.attrs for m in measurements]
        held = model.tree
        ok = []
        for c in cand_list:
            if held.clique_of(c) >= 0:
                ok.append(c)  # already inside the model: free
            elif n_cells[c] <= limit and model_size(sizes, cliques + [c]) <= limit:
                ok.append(c)  # (a clique of the new model holds c, so c alone over the limit never fits)
        bias = math.sqrt(2.0 / math.pi) * sigma
        qual = [candidates[c] * (float(np.abs(answers[c] - model.marginal(c)).sum()) - bias * n_cells[c]) for c in ok]
        max_w = max(candidates[c] for c in ok)
        idx, e_used, r_sel = _select(qual, eps, sens_select * max_w, gens["select"])
        chosen = ok[idx]
        steps.append(PrivacyStep("select", chosen, r_sel, epsilon=e_used))
        y, s, r_meas = _measure(answers[chosen], sigma, sens2, gens["measure"])
        measurements.append(Measurement(chosen, y, s))
        steps.append(PrivacyStep("measure", chosen, r_meas, sigma=s))
        used = sum(st.rho for st in steps)
        before = model.marginal(chosen)
        fit = estimate_model(sizes, measurements, start=model, max_iter=round_iter)
        model = fit.model
        n_iter += fit.n_iter
        if progress is not None:
            progress(min(used / rho, 1.0))
        if float(np.abs(model.marginal(chosen) - before).sum()) <= bias * n_cells[chosen]:
            sigma /= 2.0
            eps *= 2.0
    fit = estimate_model(sizes, measurements, start=model, max_iter=max_iter)
    return Plan(steps, measurements, fit.model, comp, n_iter + fit.n_iter)
