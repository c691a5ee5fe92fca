"""Perturbation tables (ptables) for the cell key method.

A ptable gives, for each original count i = 0..ncat, the transition probabilities P(j | i) of the
released count j; counts above ``ncat`` use the last row (shifted: the noise ``j - i`` is what is
reused), or, in the ONS convention, cycle through the last rows.  A cell's released count is chosen
by its cell key: a uniform number in [0, 1) falls into one of the intervals of the cumulative
probabilities of its row (sdcTools layout ``i, j, p, v, p_int_lb, p_int_ub``), or an integer key
0..2^b - 1 indexes a column of noise values (ONS layout ``pcv, ckey, pvalue``).

:meth:`PTable.generate` builds the maximum-entropy ptable of the R package ptable (Enderle 2021,
used in 001 section 2 with D = 5, V = 3, js = 2): for each row the probabilities over the allowed
deviations maximize the entropy subject to zero mean, variance at most V (binding where it can be
reached), deviations within [-D, D], released values 1..js forbidden, and probabilities
non-decreasing up to "no change".
"""

from __future__ import annotations

import functools
import hashlib
import os
from typing import Any

import numpy as np

from .._frames import pd
from .._catalog import D_HINT as _D_HINT
from .._catalog import MAX_D, declared
from .._params import Configurable, Param, refuse_renamed
from .._validation import check_counts, check_in, check_integer, check_real
from ..exceptions import CellsafeError, DataError, InvalidArgumentError

__all__ = ["PTable"]



def _solve_row(i: int, D: int, V: float, js: int, mono: bool, min_probability: float) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-entropy transition probabilities of row i: (released values, probabilities)."""
    j = np.arange(max(i - D, 0), i + D + 1)
    j = j[~((j >= 1) & (j <= js))]
    p = max_entropy_probabilities((j - i).astype(np.float64), V, mono, min_probability)
    if p is None:
        raise CellsafeError(
            f"the ptable row for original count {i} has no solution with D={D}, V={V:g}, js={js}: "
            "the constraints cannot all hold; raise D or V, or lower js."
        )
    return j, p


def max_entropy_probabilities(v: np.ndarray, V: float, mono: bool, min_probability: float) -> np.ndarray | None:
    """The maximum-entropy distribution over the deviations ``v`` with mean 0 and variance at most V.

    With ``mono``, the probabilities do not decrease over the deviations up to 0.  Every probability is
    at least ``min_probability``.  Returns None when the constraints cannot all hold.  Solutions are kept for
    the process (the same row of the same table is asked for again whenever a table is generated
    again, e.g. by ``with_params`` while tuning another parameter).
    """
    v = np.ascontiguousarray(v, dtype=np.float64)
    p = _max_entropy_solution(v.tobytes(), float(V), bool(mono), float(min_probability))
    return None if p is None else p.copy()


@functools.lru_cache(maxsize=1024)
def _max_entropy_solution(v_bytes: bytes, V: float, mono: bool, min_probability: float) -> np.ndarray | None:
    from scipy.optimize import minimize

    v = np.frombuffer(v_bytes, dtype=np.float64)

    n = v.shape[0]
    v2 = v * v
    eq_jac = np.vstack([np.ones(n), v])
    cons = [
        {"type": "eq", "fun": lambda p: np.array([p.sum() - 1.0, v @ p]), "jac": lambda p: eq_jac},
        {"type": "ineq", "fun": lambda p: np.array([V - v2 @ p]), "jac": lambda p: -v2[None, :]},
    ]
    z = np.flatnonzero(v == 0)
    k = int(z[0]) if mono and z.size else 0  # with mono: p must not decrease over the first k + 1 values
    if k > 0:
        A = np.zeros((k, n))
        A[np.arange(k), np.arange(k)] = -1.0
        A[np.arange(k), np.arange(1, k + 1)] = 1.0
        cons.append({"type": "ineq", "fun": lambda p: A @ p, "jac": lambda p: A})
    res = minimize(
        lambda p: float(np.sum(p * np.log(p))),
        np.full(n, 1.0 / n),
        jac=lambda p: np.log(p) + 1.0,
        bounds=[(min_probability, 1.0)] * n,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 2000},
    )
    p = np.clip(res.x, 0.0, None)
    p = p / p.sum()
    if abs(v @ p) > 1e-7 or v2 @ p > V + 1e-7 or np.any(np.diff(p[: k + 1]) < -1e-7):
        return None
    p.setflags(write=False)  # kept by the cache: callers get copies
    return p


class GeneratedTable(Configurable):
    """The parameter protocol of a perturbation table generated from parameters, or read from a file.

    A generated table (``D`` and ``V`` among its generation parameters) reports them by
    :meth:`get_params` and is generated again by :meth:`with_params`; a read one has none to vary.
    Subclasses set ``_generation`` and implement ``_regenerate(params)``.
    """

    _generation: dict

    @property
    def params(self) -> dict:
        """The parameters the table was generated with, or where it was read from."""
        return dict(self._generation)

    @property
    def generated(self) -> bool:
        """True when the table was made by ``generate`` (its parameters can then be varied)."""
        return "D" in self._generation and "V" in self._generation

    def get_params(self) -> dict[str, Any]:
        """The generation parameters; empty for a table read from a file or built from arrays."""
        if not self.generated:
            return {}
        return {p.name: self._generation[p.name] for p in self._params}

    def with_params(self, **changes: Any) -> Any:
        """The table generated with some parameters changed (``ptable.with_params(V=4)``)."""
        kind = type(self).__name__
        if not self.generated:
            raise InvalidArgumentError(
                f"this {kind} was read or built from arrays, not generated; its parameters cannot be varied. "
                f"Generate one with {kind}.generate(D, V, ...)."
            )
        params = self.get_params()
        for name in changes:
            if name not in params:
                self._refuse_renamed(name)
                raise InvalidArgumentError(f"{kind} has no parameter {name!r}; its parameters are {', '.join(map(repr, params))}.")
        params.update(changes)
        return self._regenerate(params)

    def tunable_params(self) -> dict[str, Param]:
        return {"V": self._params[1]} if self.generated else {}

    def _regenerate(self, params: dict[str, Any]) -> Any:
        raise NotImplementedError


class PTable(GeneratedTable):
    """A perturbation table: transition probabilities P(released j | original i), i = 0..ncat.

    Parameters
    ----------
    probabilities : array_like, shape (ncat + 1, n_released)
        Row i holds P(j | i) for released counts j = 0..n_released - 1.  Row 0 must map 0 to 0.
    key_noise : array_like of int, shape (ncat + 1, n_keys), optional
        The ONS layout: the noise (released - original) for each integer cell key 0..n_keys - 1.
        When given, integer cell keys index it directly.
    cycle : int, optional
        How counts above ``ncat`` pick a row: None uses row ``ncat`` for all of them (sdcTools);
        an int c reuses the last c rows cyclically (ONS: c = 250, so a count n > 750 uses row
        ``((n - 1) mod 250) + 501``).
    params : dict, optional
        The parameters the table was generated with (D, V, js...), for display.

    Notes
    -----
    Build one with :meth:`generate`, :meth:`read` (either layout) or from arrays.  The released
    count of a cell with original count n (using row r) is ``n + (j - r)`` where j is drawn from
    row r, so counts above ``ncat`` get the noise of their row.

    Examples
    --------
    >>> pt = PTable.generate(D=5, V=3, js=2)
    >>> pt.ncat, pt.max_deviation
    (8, 5)
    >>> pt.transition_matrix()[1, :4].round(4).tolist()   # 1 -> 0 or 3 and more, never 1 or 2
    [0.7345, 0.0, 0.0, 0.1367]
    """

    # The parameters of :meth:`generate`, the ones a search may vary (V, the noise variance).
    _params = declared("part", "ptable")
    _renamed = {"epsilon": "min_probability"}

    def __init__(
        self,
        probabilities: Any,
        *,
        key_noise: Any = None,
        cycle: int | None = None,
        params: dict | None = None,
    ) -> None:
        P = np.array(probabilities, dtype=np.float64)  # copies: the caller's arrays stay theirs
        K = None if key_noise is None else np.array(key_noise, dtype=np.int64)
        self._set(P, K, cycle, params)

    def _set(self, P: np.ndarray, K: np.ndarray | None, cycle: int | None, params: dict | None) -> None:
        """Check and keep the table's own arrays (made for it, never shared: they become read-only)."""
        if P.ndim != 2 or P.shape[0] < 1 or P.shape[1] < 1:
            raise InvalidArgumentError(f"ptable probabilities must be a 2-d array (rows i = 0..ncat). Got shape {P.shape}.")
        sums = P.sum(axis=1)
        # a NaN fails the minimum's test; +inf (the minimum then finite) makes its row's sum infinite
        if not (P.min() >= 0) or not np.all(np.isfinite(sums)):
            raise DataError("ptable probabilities must be finite and non-negative.")
        bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
        if bad.size:
            raise DataError(f"ptable row i={bad[0]} sums to {sums[bad[0]]:.8g}, not 1.")
        if P[0, 0] < 1.0 - 1e-9:
            raise DataError("ptable row 0 must map an empty cell to 0 with probability 1.")
        if not np.all(sums == 1.0):  # rows of multiples of 1/256 (ONS) already sum to exactly 1
            P = P / sums[:, None]
        self._P = P
        self._P.setflags(write=False)
        ncat = P.shape[0] - 1
        if cycle is not None:
            cycle = check_integer(cycle, "cycle", "PTable", low=1, high=max(ncat, 1))
        self._cycle = cycle
        if K is not None:
            if K.ndim != 2 or K.shape[0] != P.shape[0]:
                raise InvalidArgumentError(
                    f"key_noise must have one row per original count 0..{ncat}. Got shape {K.shape}."
                )
            if (np.arange(K.shape[0])[:, None] + K).min() < 0:
                raise DataError("key_noise would release a negative count.")
            K.setflags(write=False)
        self._K = K
        self._generation = dict(params or {})
        self._frozen = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"PTable is immutable; build a new one instead of setting {name!r}.")
        object.__setattr__(self, name, value)

    def _regenerate(self, params: dict[str, Any]) -> "PTable":
        return PTable.generate(**params)

    def __eq__(self, other: object) -> bool:
        """Equal tables release alike: the same probabilities, key noise and rule for large counts."""
        if type(other) is not type(self):
            return False
        o: PTable = other  # type: ignore[assignment]
        same_keys = (self._K is None and o._K is None) or (
            self._K is not None and o._K is not None and np.array_equal(self._K, o._K)
        )
        return self._cycle == o._cycle and same_keys and np.array_equal(self._P, o._P)

    __hash__ = None  # type: ignore[assignment]

    # The rows' cumulative and tail sums, computed when first needed (uniform keys, the transition's sf): a
    # publication with the ONS table's integer keys uses neither, and the two passes over a 751 x 751 table
    # were most of reading it.
    @functools.cached_property
    def _cum(self) -> np.ndarray:
        cum = np.cumsum(self._P, axis=1)
        cum[:, -1] = 1.0
        cum.setflags(write=False)
        return cum

    @functools.cached_property
    def _sf(self) -> np.ndarray:
        P = self._P
        sf = np.concatenate([np.cumsum(P[:, ::-1], axis=1)[:, ::-1], np.zeros((P.shape[0], 1))], axis=1)
        sf.setflags(write=False)
        return sf

    @functools.cached_property
    def sha256(self) -> str:
        """The sha256 of what the table releases (probabilities, key noise, the rule for large counts).

        Two ptables with the same hash release alike, however they were made: manifests and
        reports record it, so a release can be matched with the table that was assessed.  (Computed
        once: the table is immutable.)
        """
        h = hashlib.sha256(b"cellsafe-ptable/1")
        for a in (self._P, self._K):
            if a is not None:  # the arrays' own bytes, read in place
                h.update(np.asarray(a.shape, dtype=np.int64).tobytes())
                h.update(np.ascontiguousarray(a).data.cast("B"))
        h.update(str(self._cycle).encode())
        return h.hexdigest()

    # ------------------------------------------------------------------ construction
    @classmethod
    def generate(
        cls,
        D: int,
        V: float,
        js: int = 0,
        *,
        ncat: int | None = None,
        mono: bool = True,
        min_probability: float = 1e-7,
        **renamed: Any,
    ) -> "PTable":
        """The maximum-entropy ptable of the R package ptable.

        Parameters
        ----------
        D : int
            Largest deviation |released - original|.
        V : float
            Noise variance (an upper bound that binds wherever it can be reached).
        js : int, default 0
            Released values 1..js are forbidden (small counts become 0 or at least js + 1).
        ncat : int, optional
            Last row (used for all larger counts); default ``D + js + 1`` when js > 0, else D.
        mono : bool, default True
            Probabilities non-decreasing up to "no change" (deviation 0).
        min_probability : float, default 1e-7
            Lower bound of every allowed transition probability (formerly ``epsilon``, a name
            cellsafe keeps for privacy losses).

        Notes
        -----
        Row i maximizes ``-sum p log p`` over the allowed deviations v (``max(0, i - D) <= i + v
        <= i + D``, ``i + v`` not in 1..js) subject to ``sum p = 1``, ``sum v p = 0``,
        ``sum v^2 p <= V`` and, with ``mono``, ``p(v) <= p(v')`` for ``v < v' <= 0``; solved with
        SLSQP.  Row 0 maps 0 to 0.  (Enderle 2021; Giessing 2016; 001 section 2.)
        """
        refuse_renamed("PTable.generate", renamed, PTable._renamed)
        try:
            D = check_integer(D, "D", "PTable.generate", low=1, high=MAX_D)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"{e} {_D_HINT}") from None
        V = check_real(V, "V", "PTable.generate", low=0.0, low_open=True)
        js = check_integer(js, "js", "PTable.generate", low=0)
        ncat_given = ncat
        if ncat is None:
            ncat = D + js + 1 if js > 0 else D
        ncat = check_integer(ncat, "ncat", "PTable.generate", low=max(1, js + 1))
        min_probability = check_real(min_probability, "min_probability", "PTable.generate", low=0.0, high=0.01, low_open=True)
        P = np.zeros((ncat + 1, ncat + D + 1))
        P[0, 0] = 1.0
        for i in range(1, ncat + 1):
            j, p = _solve_row(i, D, V, js, bool(mono), min_probability)
            P[i, j] = p
        return cls(P, params={"D": D, "V": V, "js": js, "ncat": ncat_given, "mono": bool(mono),
                           "min_probability": min_probability})

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> "PTable":
        """Read a ptable file (CSV), in the sdcTools layout (``i, j, p, ...``) or the ONS layout (``pcv, ckey, pvalue``).

        The ONS layout gets the ONS rule for large counts: counts above 750 (the last row) reuse
        rows 501..750 as ``((n - 1) mod 250) + 501``.
        """
        ons = _read_ons_csv(path)
        if ons is not None:  # the common ONS file, without building a frame
            return cls._from_ons(*ons)
        try:
            df = pd.read_csv(path)
            if df.shape[1] == 1:  # sdcTools files are sometimes written with ';'
                df = pd.read_csv(path, sep=";")
        except (OSError, ValueError) as exc:
            raise DataError(f"cannot read ptable {os.fspath(path)!r}: {exc}") from None
        return cls.from_frame(df)

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> "PTable":
        """A ptable from a frame in either layout (see :meth:`read`)."""
        cols = {str(c).strip().lower(): c for c in df.columns}
        if {"pcv", "ckey", "pvalue"} <= set(cols):
            return cls._from_ons(
                df[cols["pcv"]].to_numpy(dtype=np.int64),
                df[cols["ckey"]].to_numpy(dtype=np.int64),
                df[cols["pvalue"]].to_numpy(dtype=np.int64),
            )
        if {"i", "j", "p"} <= set(cols):
            d = df
            if "type" in cols:
                types = d[cols["type"]].astype(str)
                keep = types.isin(["all"]) if (types == "all").any() else np.ones(len(d), bool)
                d = d[np.asarray(keep)]
            i = d[cols["i"]].to_numpy(dtype=np.int64)
            j = d[cols["j"]].to_numpy(dtype=np.int64)
            p = d[cols["p"]].to_numpy(dtype=np.float64)
            if i.min() < 0 or j.min() < 0:
                raise DataError("sdcTools ptable: i and j must be non-negative.")
            P = np.zeros((int(i.max()) + 1, int(j.max()) + 1))
            np.add.at(P, (i, j), p)
            if P[0].sum() == 0:
                P[0, 0] = 1.0
            return cls(P, params={"layout": "sdc"})
        raise DataError(
            f"unknown ptable layout with columns {list(df.columns)}; expected 'i, j, p, v, p_int_lb, p_int_ub' "
            "(sdcTools) or 'pcv, ckey, pvalue' (ONS)."
        )

    @classmethod
    def _from_ons(cls, pcv: np.ndarray, ckey: np.ndarray, pval: np.ndarray) -> "PTable":
        """A ptable from the ONS layout's columns (pcv, ckey, pvalue)."""
        if pcv.min() < 0 or ckey.min() < 0:
            raise DataError("ONS ptable: pcv and ckey must be non-negative.")
        ncat, n_keys = int(pcv.max()), int(ckey.max()) + 1
        K = np.zeros((ncat + 1, n_keys), dtype=np.int64)
        seen = np.zeros((ncat + 1, n_keys), dtype=bool)
        K[pcv, ckey] = pval
        seen[pcv, ckey] = True
        if not seen[1:].all():
            r, k = np.argwhere(~seen[1:])[0]
            raise DataError(f"ONS ptable lacks the row pcv={r + 1}, ckey={k}; it must list every pcv 1..{ncat} with every ckey.")
        K[0] = 0
        rel = np.arange(ncat + 1)[:, None] + K
        if rel.min() < 0:
            raise DataError("ONS ptable: a pvalue would release a negative count.")
        width = int(rel.max()) + 1
        # each key adds 1 / n_keys to the column it releases, in row order (the sums of np.add.at, by bincount;
        # with n_keys a power of two every partial sum is exact, so the count of keys times 1 / n_keys is the same)
        rel += (np.arange(ncat + 1) * width)[:, None]
        flat = rel.reshape(-1)
        P: np.ndarray
        if n_keys & (n_keys - 1) == 0:
            P = np.bincount(flat, minlength=(ncat + 1) * width) * (1.0 / n_keys)
        else:
            P = np.bincount(flat, weights=np.full(flat.size, 1.0 / n_keys), minlength=(ncat + 1) * width)
        table = cls.__new__(cls)
        table._set(P.reshape(ncat + 1, width), K, min(250, ncat), {"layout": "ons", "n_keys": n_keys})
        return table

    def to_frame(self, layout: str = "sdc", n_keys: int = 256) -> pd.DataFrame:
        """The table as a frame in the sdcTools or the ONS layout.

        Writing a probability table in the ONS layout assigns integer key k the released value at
        ``(k + 0.5) / n_keys`` of its row's cumulative probabilities (probabilities become multiples
        of ``1 / n_keys``).
        """
        layout = check_in(layout, "layout", "PTable.to_frame", ("sdc", "ons"))
        if layout == "sdc":
            rows, cols = np.nonzero(self._P > 0)
            p = self._P[rows, cols]
            ub = self._cum[rows, cols]
            lb = ub - p
            return pd.DataFrame(
                {"i": rows, "j": cols, "p": p, "v": cols - rows, "p_int_lb": np.round(lb, 12), "p_int_ub": np.round(ub, 12)}
            )
        if self._K is not None:
            K = self._K
        else:
            n_keys = check_integer(n_keys, "n_keys", "PTable.to_frame", low=2)
            u = (np.arange(n_keys) + 0.5) / n_keys
            r = np.repeat(np.arange(self.ncat + 1), n_keys)
            K = (self._lookup_uniform(r, np.tile(u, self.ncat + 1)) - r).reshape(self.ncat + 1, n_keys)
        nk = K.shape[1]
        r = np.repeat(np.arange(1, self.ncat + 1), nk)
        return pd.DataFrame({"pcv": r, "ckey": np.tile(np.arange(nk), self.ncat), "pvalue": K[1:].reshape(-1)})

    def write(self, path: str | os.PathLike[str], layout: str = "sdc", n_keys: int = 256) -> None:
        """Write the table as CSV in the sdcTools (``'sdc'``) or ONS (``'ons'``) layout."""
        from ..io import write_frame

        write_frame(self.to_frame(layout, n_keys), path, "csv")

    # ------------------------------------------------------------------ properties
    @property
    def ncat(self) -> int:
        """The last row; larger counts reuse rows (see ``cycle``)."""
        return self._P.shape[0] - 1

    @property
    def cycle(self) -> int | None:
        return self._cycle

    @property
    def layout(self) -> str:
        """``'ons'`` when integer cell keys index noise values directly, else ``'sdc'``."""
        return "ons" if self._K is not None else "sdc"

    @property
    def n_keys(self) -> int | None:
        """Number of integer cell keys of an ONS-layout table (max ckey + 1)."""
        return None if self._K is None else int(self._K.shape[1])

    @property
    def max_deviation(self) -> int:
        """Largest |released - original| with positive probability."""
        r, c = np.nonzero(self._P > 0)
        return int(np.max(np.abs(c - r)))

    def transition_matrix(self) -> np.ndarray:
        """P(j | i): rows original counts 0..ncat, columns released counts 0..n_released - 1."""
        return self._P.copy()

    def __repr__(self) -> str:
        par = ", ".join(f"{k}={v}" for k, v in self.params.items() if k in ("D", "V", "js", "n_keys"))
        return f"PTable(ncat={self.ncat}, layout={self.layout!r}, max_deviation={self.max_deviation}{', ' + par if par else ''})"

    # ------------------------------------------------------------------ lookups
    def row_of(self, counts: Any) -> np.ndarray:
        """The row used by each original count."""
        n = np.asarray(counts, dtype=np.int64)
        ncat = self.ncat
        if self._cycle is None:
            return np.minimum(n, ncat)
        first = ncat - self._cycle + 1
        return np.where(n <= ncat, n, first + np.mod(n - first, self._cycle))

    def _lookup_uniform(self, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Released column of each row for uniform keys u in [0, 1) (intervals of the cumulative probabilities)."""
        ncol = self._cum.shape[1]
        flat = (np.arange(self._cum.shape[0])[:, None] + self._cum).reshape(-1)
        pos = np.searchsorted(flat, rows + u, side="right") - rows * ncol
        return np.clip(pos, 0, ncol - 1)

    def released(self, counts: Any, cell_keys: Any) -> np.ndarray:
        """Released counts for original ``counts`` and their cell keys.

        Float keys in [0, 1) select an interval of the row's cumulative probabilities (j with
        ``p_int_lb <= key < p_int_ub``); integer keys 0..n_keys - 1 index the noise columns of an
        ONS-layout table.
        """
        n = np.asarray(counts, dtype=np.int64)
        keys = np.asarray(cell_keys)
        if n.shape != keys.shape:
            raise InvalidArgumentError(f"counts and cell keys must have the same shape. Got {n.shape} and {keys.shape}.")
        if n.size and n.min() < 0:
            raise DataError("original counts must be non-negative.")
        r = self.row_of(n)
        if np.issubdtype(keys.dtype, np.integer):
            if self._K is None:
                raise InvalidArgumentError(
                    "integer cell keys need an ONS-layout ptable (pcv, ckey, pvalue); use uniform keys in [0, 1) "
                    "with this table."
                )
            nk = self._K.shape[1]
            if keys.size and (keys.min() < 0 or keys.max() >= nk):
                raise DataError(f"integer cell keys must lie in 0..{nk - 1} for this ptable.")
            return n + self._K[r, keys]
        u = keys.astype(np.float64)
        if u.size and (np.any(~np.isfinite(u)) or u.min() < 0 or u.max() >= 1):
            raise DataError("uniform cell keys must lie in [0, 1).")
        return n + (self._lookup_uniform(r, u) - r)

    def noise_pmf(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(deviations, probabilities) for an original count."""
        r = int(self.row_of(np.array([count]))[0])
        cols = np.flatnonzero(self._P[r] > 0)
        return cols - r, self._P[r, cols]

    def transition_pmf(self, k: Any, j: Any) -> np.ndarray:
        """P(released = k | original = j), broadcasting (whole numbers; original counts >= 0)."""
        k, j = _counts(k, j, "transition_pmf")
        r = self.row_of(j)
        col = r + (k - j)
        ok = (col >= 0) & (col < self._P.shape[1])
        out = np.where(ok, self._P[r, np.clip(col, 0, self._P.shape[1] - 1)], 0.0)
        return out

    def _row_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of the deviation (released - original) in each row."""
        dev = (np.arange(self._P.shape[1])[None, :] - np.arange(self._P.shape[0])[:, None]).astype(np.float64)
        mean = (self._P * dev).sum(axis=1)
        return mean, np.maximum((self._P * dev**2).sum(axis=1) - mean**2, 0.0)

    def transition_mean(self, j: Any) -> np.ndarray:
        """E[released | original = j]: j plus the mean deviation of j's row.

        The rows hold every deviation, so this equals the sum over the support without building a
        row of P(k | j) per original count (the a priori metrics call it for every distinct count).
        """
        j = check_counts(j, "the original counts j", "PTable.transition_mean")
        return j + self._row_moments()[0][self.row_of(j)]

    def transition_var(self, j: Any) -> np.ndarray:
        """Var[released | original = j]: the variance of the deviation in j's row."""
        j = check_counts(j, "the original counts j", "PTable.transition_var")
        return self._row_moments()[1][self.row_of(j)]

    def transition_sf(self, k: Any, j: Any) -> np.ndarray:
        """P(released > k | original = j), from the tail sums of the row."""
        k, j = _counts(k, j, "transition_sf")
        r = self.row_of(j)
        col = np.clip(r + (k - j) + 1, 0, self._P.shape[1])
        return self._sf[r, col]



def _counts(k: Any, j: Any, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Released counts k (whole numbers) and original counts j (whole numbers >= 0), checked."""
    owner = f"PTable.{method}"
    return (check_counts(k, "the released counts k", owner, negative_ok=True),
            check_counts(j, "the original counts j", owner))


def _read_ons_csv(path: "str | os.PathLike[str]") -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The pcv, ckey and pvalue columns of a comma-separated ONS ptable, or None for any other file.

    An ONS ptable is some 200,000 rows of integers: Arrow's CSV reader takes a few milliseconds and
    no pandas import.  Anything unusual (another layout, a column that is not all integers, a
    missing value) goes to ``pandas.read_csv`` instead, with its messages.
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv

        table = pacsv.read_csv(path, read_options=pacsv.ReadOptions(use_threads=False))  # a few MB: one thread
    except Exception:  # noqa: BLE001  pyarrow absent, or a file it cannot read: pandas decides
        return None
    names = [str(c).strip().lower() for c in table.column_names]
    if not {"pcv", "ckey", "pvalue"} <= set(names) or len(set(names)) != len(names) or table.num_rows == 0:
        return None
    out = []
    for name in ("pcv", "ckey", "pvalue"):
        column = table.column(names.index(name))
        if not pa.types.is_int64(column.type) or column.null_count:  # Arrow infers int64 for integers
            return None
        column = column.combine_chunks()  # (a cast would import pyarrow.compute, a tenth of a second)
        # a read-only view of Arrow's buffer (kept alive by it): the columns are only read
        out.append(np.frombuffer(column.buffers()[1], dtype=np.int64, count=len(column), offset=column.offset * 8))
    return out[0], out[1], out[2]
