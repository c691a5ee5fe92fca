"""The attackers of the optimal method: their linear programs for a pattern, the witnesses that spare most of them,
the cuts their duals give, and the programs that repair a pattern (:mod:`~cellsafe.mechanisms._optimal`).

For a pattern s (0/1 over the published cells, or fractional at the master's relaxation) an attacker's inner cells
y >= 0 meet, for every published cell j (X: inner x published cells, a: the true values)::

    a_j - (a_j - L_j) s_j  <=  x_j^T y  <=  a_j + M_j s_j

where L_j is the listing's lower bound of a withheld cell and M_j bounds its rise (module notes of ``_optimal``).  The
*outsider* knows this much; a contributor c alone in some cells (``sole``) also knows those cells (its *own*), whose
rows are then equations whatever s says.  In a magnitude table (``apart``), c's own cells that share an inner cell
with the protected primary are left free, as the protection levels of the dominance rules already allow for the
intruder's own contribution (supp's ``protect_intervals(..., apart=True)``).

Witnesses.  Every solution y of every program is kept by its deviations ``d = X^T y - a`` (over the published cells).
A witness is a solution for pattern s when each d_j lies within the bounds above, and for contributor c when
moreover d_j = 0 on c's own cells: a witness that reaches a primary's target settles that target for the outsider
and for every contributor whose cells it leaves alone, without a program.  Most checks of a pattern are settled so
(and so are the repair and the publication of cells again, which change a few rows at a time).

Cuts.  Where a program misses its target, its row duals pi give the Benders cut ``g . s >= rhs`` that every pattern
protecting the target meets and s does not (LP duality; rows that are equations for this attacker carry no term).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["Attacks", "Miss", "Targets", "highs"]

UPPER, LOWER, WIDTH = 0, 1, 2


def highs() -> Any:
    """A silent HiGHS solver (the bare one: the Python wrapper prints a banner on standard output)."""
    from ..exceptions import InvalidArgumentError

    try:
        import highspy
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise InvalidArgumentError(
            "the optimal secondary suppression needs highspy (HiGHS): pip install 'cellsafe[optimal]'."
        ) from e
    h = highspy._Highs() if hasattr(highspy, "_Highs") else highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


@dataclass
class Targets:
    """Every primary's targets: ``cell`` (published cell), ``kind`` (UPPER, LOWER, WIDTH), ``value``."""

    cell: np.ndarray
    kind: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return int(self.cell.size)

    def take(self, keep: np.ndarray) -> "Targets":
        return Targets(self.cell[keep], self.kind[keep], self.value[keep])


@dataclass
class Miss:
    """A target (index into Targets) an attacker (-1: the outsider, else a contributor's index) misses at a pattern,
    and the cut its program gives (``g . s >= rhs``; None when the program was not solved for a cut)."""

    target: int
    attacker: int
    g: np.ndarray | None = None
    rhs: float = 0.0


class Attacks:
    """The attackers' programs of one table (module notes).

    Parameters
    ----------
    X : sparse matrix, inner x published cells
    a : true published values
    floor : the listing's lower bound of each cell when withheld
    big_m : the largest rise of each withheld cell the programs allow
    targets : Targets
    sole : int array, optional
        Each cell's single contributor (-1: none or several); given, each primary is protected against every
        contributor alone in cells that may be withheld (``movable``), except its own.
    apart : bool
        Own cells sharing an inner cell with the protected primary are left free (magnitude tables).
    """

    def __init__(self, X: Any, a: np.ndarray, floor: np.ndarray, big_m: np.ndarray, targets: Targets, *,
                 sole: np.ndarray | None = None, movable: np.ndarray | None = None, apart: bool = False,
                 tol: float = 1e-7) -> None:
        self.X = sp.csc_matrix(X, dtype=np.float64)
        self.A = self.X.T.tocsr()
        self.a = np.asarray(a, dtype=np.float64)
        self.L = np.asarray(floor, dtype=np.float64)
        self.M = np.asarray(big_m, dtype=np.float64)
        self.n_inner, self.n = self.X.shape
        self.tol = tol
        self.row_tol = 1e-7 * np.maximum(1.0, np.abs(self.a))
        self.targets = targets
        self.apart = apart
        self._contributors(sole, movable)
        self._model()
        # the witnesses: deviations from the true values over the published cells, and what each one reaches
        self.cap = int(min(4096, max(256, 40_000_000 // (8 * max(self.n, 1)))))
        self.D = np.zeros((self.cap, self.n))  # one row per witness
        self.k = 0
        self.epoch = 0  # how often the pool forgot its older half (validity masks are then recomputed)
        self.R = np.zeros((len(targets), self.cap), dtype=bool)  # witness reaches target
        self.moved = np.zeros((self.cap, self.n), dtype=bool)
        self.movedf = np.zeros((self.cap, self.n), dtype=np.float32)
        self.broken = np.zeros((self.n_att, self.cap), dtype=bool)  # witness moves a contributor's own cell
        self.n_lp = 0

    # ------------------------------------------------------------------ set-up
    def _contributors(self, sole: np.ndarray | None, movable: np.ndarray | None) -> None:
        n = self.n
        self.owner = np.full(n, -1, dtype=np.int64)  # attacker index of each cell's single contributor
        self.n_att = 0
        self.S = sp.csr_matrix((n, 0))
        if sole is None:
            return
        sole = np.asarray(sole, dtype=np.int64)
        may = np.ones(n, dtype=bool) if movable is None else np.asarray(movable, dtype=bool)
        ids = np.unique(sole[(sole >= 0) & may])
        if not ids.size:
            return
        pos = np.searchsorted(ids, sole)
        has = (sole >= 0) & (pos < ids.size)
        has[has] = ids[pos[has]] == sole[has]
        self.owner[has] = pos[has]
        self.n_att = int(ids.size)
        cells = np.flatnonzero(has)
        self.S = sp.csr_matrix((np.ones(cells.size), (cells, self.owner[cells])), shape=(n, self.n_att))
        self.own_cells = [cells[self.owner[cells] == c] for c in range(self.n_att)]
        if self.apart:
            self.overlap = ((self.A @ self.X) > 0).tocsr()

    def _model(self) -> None:
        h = highs()
        # primal simplex from the last basis, no presolve (it would drop the basis): a new objective or new bounds
        # then take a few iterations instead of thousands
        h.setOptionValue("presolve", "off")
        h.setOptionValue("simplex_strategy", 4)
        inf = h.getInfinity()
        n_inner, A = self.n_inner, self.A
        h.addCols(n_inner, np.zeros(n_inner), np.zeros(n_inner), np.full(n_inner, inf), 0,
                  np.zeros(n_inner + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.addRows(self.n, self.a, self.a, A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data)
        self.h = h
        self.cost_idx = np.zeros(0, dtype=np.int32)
        self.s = np.zeros(self.n)
        self._repair_h: Any = None
        self._repair_target = -1

    def known(self, t: int, c: int) -> np.ndarray:
        """The rows attacker c (>= 0) knows as equations when attacking target t's primary."""
        cells = self.own_cells[c]
        if self.apart and cells.size:
            p = self.targets.cell[t]
            near = np.asarray(self.overlap[p].toarray()).ravel() > 0
            cells = cells[~near[cells]]
        return cells

    def attackers_of(self, t: int) -> np.ndarray:
        """The contributors target t must hold against: all but the primary's own."""
        own = self.owner[self.targets.cell[t]]
        out = np.arange(self.n_att)
        return out[out != own] if own >= 0 else out

    # ------------------------------------------------------------------ patterns and witnesses
    def bounds(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows' deviation bounds of pattern s (0/1 or fractional)."""
        s = np.asarray(s, dtype=np.float64)
        return -(self.a - self.L) * s, self.M * s

    def set_pattern(self, s: np.ndarray) -> None:
        s = np.asarray(s, dtype=np.float64)
        if np.array_equal(s, self.s):
            return
        lo, hi = self.bounds(s)
        idx = np.flatnonzero(s != self.s).astype(np.int32)
        self.h.changeRowsBounds(idx.size, idx, self.a[idx] + lo[idx], self.a[idx] + hi[idx])
        self.s = s.copy()

    def valid(self, s: np.ndarray) -> np.ndarray:
        """Which witnesses are solutions for pattern s (for the outsider).

        Every witness keeps each row within the bounds of a withheld cell (it was found at a pattern no wider), so
        at a 0/1 pattern it is a solution when it moves no published cell."""
        s = np.asarray(s, dtype=np.float64)
        if np.all((s == 0) | (s == 1)):
            shown = (s == 0).astype(np.float32)
            return np.asarray((self.movedf[: self.k] @ shown) == 0)
        lo, hi = self.bounds(s)
        D = self.D[: self.k]
        ok = (D >= (lo - self.row_tol)[None, :]) & (D <= (hi + self.row_tol)[None, :])
        return np.asarray(ok.all(axis=1))

    def _add_witness(self, dev: np.ndarray) -> None:
        if self.k == self.cap:  # forget the older half
            half = self.cap // 2
            rest = self.cap - half
            for arr in (self.D, self.moved, self.movedf):
                arr[:rest] = arr[half:]
            for arr in (self.R, self.broken):
                arr[:, :rest] = arr[:, half:]
            self.k = rest
            self.epoch += 1
        k = self.k
        self.D[k] = dev
        moved = np.abs(dev) > self.row_tol
        self.moved[k] = moved
        self.movedf[k] = moved
        if self.n_att:
            self.broken[:, k] = (self.S.T @ moved.astype(np.float64)) > 0
        v = self.a[self.targets.cell] + dev[self.targets.cell]
        t = self.targets
        miss = self.tol * np.maximum(1.0, np.abs(t.value))
        self.R[:, k] = np.where(t.kind == UPPER, v >= t.value - miss, np.where(t.kind == LOWER, v <= t.value + miss, False))
        self.k += 1

    def coverage(self, t: int, valid: np.ndarray) -> tuple[bool, np.ndarray]:
        """Whether target t is settled by a witness for the outsider, and the contributors it leaves open."""
        kind = self.targets.kind[t]
        atts = self.attackers_of(t)
        if kind == WIDTH:
            return self._width_coverage(t, valid, atts)
        ks = np.flatnonzero(valid & self.R[t, : self.k])
        if not ks.size:
            return False, atts
        if not atts.size:
            return True, atts
        if self.apart:
            broken = self._broken_apart(t, ks)
        else:
            broken = self.broken[:, ks]
        return True, atts[np.all(broken[atts], axis=1)]

    def _broken_apart(self, t: int, ks: np.ndarray) -> np.ndarray:
        p = self.targets.cell[t]
        near = np.asarray(self.overlap[p].toarray()).ravel() > 0
        far = ~near
        return (self.S[far].T @ self.moved[ks][:, far].T.astype(np.float64)) > 0

    def _width_coverage(self, t: int, valid: np.ndarray, atts: np.ndarray) -> tuple[bool, np.ndarray]:
        p, w = self.targets.cell[t], self.targets.value[t]
        ks = np.flatnonzero(valid)
        v = self.a[p] + self.D[ks, p]
        miss = self.tol * max(1.0, abs(w))

        def wide(sel: np.ndarray) -> bool:
            return bool(sel.any()) and float(v[sel].max() - v[sel].min()) >= w - miss

        if not wide(np.ones(ks.size, dtype=bool)):
            return False, atts
        broken = self._broken_apart(t, ks) if self.apart else self.broken[:, ks]
        return True, np.array([c for c in atts if not wide(~broken[c])], dtype=np.int64)

    # ------------------------------------------------------------------ programs
    def solve(self, p: int, sense: float, known: np.ndarray | None = None) -> tuple[float, float, np.ndarray]:
        """``m = min sense * x_p^T y`` for the current pattern (with ``known`` rows as equations) and the cut it gives:
        ``m(s) >= B0 - g . s`` for every pattern s (equality at this one).  The solution is kept as a witness."""
        h = self.h
        col = self.X[:, p]
        idx = col.indices.astype(np.int32)
        f = np.zeros(self.n_inner)
        f[idx] = sense * col.data
        if self.cost_idx.size:
            h.changeColsCost(self.cost_idx.size, self.cost_idx, np.zeros(self.cost_idx.size))
        h.changeColsCost(idx.size, idx, f[idx])
        self.cost_idx = idx
        kn = np.zeros(0, dtype=np.int32) if known is None else np.asarray(known, dtype=np.int32)
        kn = kn[self.s[kn] != 0]  # published rows are equations already
        if kn.size:
            h.changeRowsBounds(kn.size, kn, self.a[kn], self.a[kn])
        try:
            pi, y, m = self._run()
        finally:
            if kn.size:
                lo, hi = self.bounds(self.s)
                h.changeRowsBounds(kn.size, kn, self.a[kn] + lo[kn], self.a[kn] + hi[kn])
        d = f - np.asarray(self.X @ pi).reshape(-1)
        if d.min(initial=0.0) < -1e-6 * max(1.0, np.abs(f).max()):  # the other sign convention
            pi = -pi
        self._add_witness(np.asarray(self.A @ y).reshape(-1) - self.a)
        # sense * x_p^T y = d.y + pi.(X^T y) >= sum_j pi_j bound_j(s) (d >= 0, y >= 0): the lower bound of row j where
        # pi_j > 0, its upper bound where pi_j < 0
        B0 = float(pi @ self.a)
        g = np.where(pi > 0, pi * (self.a - self.L), -pi * self.M)
        if kn.size:
            g[kn] = 0.0
        return m, B0, g

    def _run(self) -> tuple[np.ndarray, np.ndarray, float]:
        h = self.h
        h.run()
        self.n_lp += 1
        status = h.modelStatusToString(h.getModelStatus())
        if status != "Optimal":  # rarely, primal simplex from the last basis stalls: solve afresh, presolved
            h.clearSolver()
            h.setOptionValue("presolve", "on")
            h.setOptionValue("simplex_strategy", 1)
            h.run()
            h.setOptionValue("presolve", "off")
            h.setOptionValue("simplex_strategy", 4)
            status = h.modelStatusToString(h.getModelStatus())
        if status != "Optimal":
            raise RuntimeError(f"an attacker's program ended with status {status!r}")
        sol = h.getSolution()
        return (np.asarray(sol.row_dual, dtype=np.float64), np.asarray(sol.col_value, dtype=np.float64),
                float(h.getInfo().objective_function_value))

    def check(self, t: int, c: int, cut: bool = True) -> Miss | None:
        """Attacker c (-1: the outsider) against target t by its programs at the current pattern: None when met."""
        p, kind, v = int(self.targets.cell[t]), self.targets.kind[t], float(self.targets.value[t])
        known = None if c < 0 else self.known(t, c)
        miss = self.tol * max(1.0, abs(v))
        if kind == UPPER:
            m, B0, g = self.solve(p, -1.0, known)  # max x_p^T y = -m <= -B0 + g.s
            return None if -m >= v - miss else Miss(t, c, g, v - miss + B0)
        if kind == LOWER:
            m, B0, g = self.solve(p, 1.0, known)  # min x_p^T y = m >= B0 - g.s
            return None if m <= v + miss else Miss(t, c, g, B0 - v - miss)
        mu, B0u, gu = self.solve(p, -1.0, known)
        ml, B0l, gl = self.solve(p, 1.0, known)
        return None if -mu - ml >= v - miss else Miss(t, c, gu + gl, v - miss + B0u + B0l)

    def evaluate(self, s: np.ndarray, which: Any = None, *, every: bool = True, valid: np.ndarray | None = None) -> list[Miss]:
        """The targets pattern s misses, each with its cut: witnesses first, then the outsider's program, then one
        program for all open contributors at once, then one per contributor still open.  ``every=False`` stops at
        the first miss (a yes/no check)."""
        self.set_pattern(s)
        valid = self.valid(s) if valid is None else valid
        epoch = self.epoch
        out: list[Miss] = []
        for t in range(len(self.targets)) if which is None else which:
            t = int(t)
            ok, open_ = self.coverage(t, valid)
            if not ok:
                m = self.check(t, -1)
                valid, epoch = self.grow(valid, epoch)
                if m is not None:
                    out.append(m)
                    if not every:
                        return out
                    continue
                ok, open_ = self.coverage(t, valid)
            if not open_.size:
                continue
            if open_.size > 1:  # one program for all of them: a solution meeting all their cells serves each
                known = np.unique(np.concatenate([self.known(t, int(c)) for c in open_]))
                p, kind = int(self.targets.cell[t]), self.targets.kind[t]
                if kind != WIDTH:
                    self.solve(p, -1.0 if kind == UPPER else 1.0, known)
                    valid, epoch = self.grow(valid, epoch)
                    _, open_ = self.coverage(t, valid)
            for c in open_:
                _, still = self.coverage(t, valid)
                if c not in still:
                    continue
                m = self.check(t, int(c))
                valid, epoch = self.grow(valid, epoch)
                if m is not None:
                    out.append(m)
                    if not every:
                        return out
        return out

    def grow(self, valid: np.ndarray, epoch: int) -> tuple[np.ndarray, int]:
        """The validity mask extended by the witnesses the programs just added (solutions at the current pattern);
        recomputed if the pool forgot its older half since ``epoch``."""
        if epoch != self.epoch:
            return self.valid(self.s), self.epoch
        return np.r_[valid, np.ones(self.k - valid.size, dtype=bool)], epoch

    # ------------------------------------------------------------------ repair programs
    def give_way(self, t: int, c: int, w: np.ndarray, free: np.ndarray, unit_cost: np.ndarray) -> np.ndarray | None:
        """The published cells whose equations must give way for attacker c to reach target t at pattern w, least
        costly first (one program: deviations of the free published cells priced by ``unit_cost`` per unit; the
        protection levels of tau-Argus's and :func:`~cellsafe.mechanisms.protect_intervals`).  None: impossible."""
        h = self._repair_model()
        n, a = self.n, self.a
        p, kind, v = int(self.targets.cell[t]), self.targets.kind[t], float(self.targets.value[t])
        lo, hi = self.bounds(w.astype(np.float64))
        row_lo, row_hi = a + lo, a + hi
        give = free & ~w
        if c >= 0:
            kn = self.known(t, c)
            row_lo[kn], row_hi[kn] = a[kn], a[kn]
            give[kn] = False
        idx = np.arange(n, dtype=np.int32)
        h.changeRowsBounds(n, idx, row_lo, row_hi)
        up_hi = np.where(give, self.M, 0.0)
        dn_hi = np.where(give, a - self.L, 0.0)
        cols = np.arange(self.n_inner, self.n_inner + 2 * n, dtype=np.int32)
        h.changeColsBounds(2 * n, cols, np.zeros(2 * n), np.r_[up_hi, dn_hi])
        h.changeColsCost(2 * n, cols, np.r_[unit_cost, unit_cost])
        inf = h.getInfinity()
        if kind == UPPER:
            lo_t, hi_t = v, inf
        elif kind == LOWER:
            lo_t, hi_t = -inf, v
        else:  # a width: the upper side that far above the value (the lower bound is at most the value)
            lo_t, hi_t = a[p] + v, inf
        col = self.X[:, p]
        h.changeRowBounds(n, lo_t, hi_t)
        if self._repair_target != p:  # the target row holds x_p
            if self._repair_target >= 0:
                for i in self.X[:, self._repair_target].indices:
                    h.changeCoeff(n, int(i), 0.0)
            for i, x in zip(col.indices, col.data):
                h.changeCoeff(n, int(i), float(x))
            self._repair_target = p
        h.run()
        self.n_lp += 1
        if h.modelStatusToString(h.getModelStatus()) != "Optimal":
            return None
        x = np.asarray(h.getSolution().col_value, dtype=np.float64)
        e = x[self.n_inner : self.n_inner + n] + x[self.n_inner + n :]
        return give & (e > 1e-7 * np.maximum(1.0, np.abs(a)))

    def _repair_model(self) -> Any:
        if self._repair_h is not None:
            return self._repair_h
        h = highs()
        h.setOptionValue("presolve", "off")
        n, n_inner, A = self.n, self.n_inner, self.A
        inf = h.getInfinity()
        h.addCols(n_inner, np.zeros(n_inner), np.zeros(n_inner), np.full(n_inner, inf), 0,
                  np.zeros(n_inner + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.addRows(n, self.a, self.a, A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data)
        h.addRow(-inf, inf, 0, np.zeros(0, dtype=np.int32), np.zeros(0))  # the target row
        # x_j^T y - up_j + down_j within the row's bounds: the deviations let published equations give way
        eye = np.arange(n, dtype=np.int32)
        h.addCols(n, np.zeros(n), np.zeros(n), np.zeros(n), n, eye, eye, -np.ones(n))
        h.addCols(n, np.zeros(n), np.zeros(n), np.zeros(n), n, eye, eye, np.ones(n))
        self._repair_h = h
        return h
