"""Perturbation tables for magnitude tables: noise distributions on a grid, at a few reference rows.

A magnitude ptable (the R package ptable's ``table = "nums"``) holds, for each of a few reference
values i (``icat``, e.g. 1, 5 and 10), a distribution of noise values v on a grid of step 1/step: the
cell key method for magnitudes (:class:`~cellsafe.mechanisms.CellKeyMagnitude`) looks a noise value
up by a cell key in the row of the cell's value measured in units of its noise magnitude, and
interpolates linearly between the two reference rows around it.  Each row is the maximum-entropy
distribution of :meth:`PTable.generate <cellsafe.mechanisms.PTable.generate>` on the finer grid.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Sequence

import numpy as np

from .._frames import pd
from .._catalog import declared
from .._params import refuse_renamed
from .._validation import check_integer, check_real
from ..exceptions import CellsafeError, DataError, InvalidArgumentError
from .ptable import GeneratedTable, max_entropy_probabilities

__all__ = ["MagnitudePTable"]

#: ptable refuses D * step of 50 or more (the rows' grids would hold more than 100 values).
_MAX_GRID = 50


class MagnitudePTable(GeneratedTable):
    """A perturbation table for magnitudes: noise values and their probabilities at reference rows.

    Parameters
    ----------
    i, v, p : array_like
        One entry per (reference row, noise value): the row's reference value i (> 0), the noise value
        v and its probability p (the sdcTools layout ``i, v, p``).  Each row's probabilities sum to 1.
    params : dict, optional
        The parameters the table was generated with, for display and :meth:`with_params`.

    Notes
    -----
    A uniform key u in [0, 1) selects in a row the noise value whose interval of cumulative
    probabilities ``[lb, ub)`` holds u, the values taken in increasing order (the sdcTools columns
    ``p_int_lb``, ``p_int_ub``).  Enderle (2021), R package ptable, ``create_num_ptable``; cellKey's
    ``ck_params_nums`` (Meindl 2023) for how the rows are used.

    Examples
    --------
    >>> pt = MagnitudePTable.generate(D=10, V=3, step=2, icat=(1, 5, 10))
    >>> pt.rows.tolist(), pt.max_noise
    ([1.0, 5.0, 10.0], 10.0)
    >>> float(pt.noise([1.0], [0.0])[0])   # the smallest noise of row 1: the whole cell (released 0)
    -1.0
    """

    _params = declared("part", "magnitude-ptable")
    _renamed = {"epsilon": "min_probability"}

    def __init__(self, i: Any, v: Any, p: Any, *, params: dict | None = None) -> None:
        i = np.asarray(i, dtype=np.float64).reshape(-1)
        v = np.asarray(v, dtype=np.float64).reshape(-1)
        p = np.asarray(p, dtype=np.float64).reshape(-1)
        if not (i.shape == v.shape == p.shape) or i.size == 0:
            raise InvalidArgumentError(f"i, v and p must be non-empty arrays of one length. Got {i.size}, {v.size} and {p.size}.")
        if not (np.all(np.isfinite(i)) and np.all(np.isfinite(v)) and np.all(np.isfinite(p))):
            raise DataError("magnitude ptable: i, v and p must be finite numbers.")
        if np.any(p < 0):
            raise DataError("magnitude ptable: probabilities must be non-negative.")
        keep = i > 0  # row 0 (no contribution) is never looked up: such cells are released unchanged
        if not keep.any():
            raise DataError("magnitude ptable: it needs at least one row with i > 0 (e.g. i = 1).")
        i, v, p = i[keep], v[keep], p[keep]
        order = np.lexsort((v, i))
        i, v, p = i[order], v[order], p[order]
        start = np.flatnonzero(np.r_[True, i[1:] != i[:-1]])
        sums = np.add.reduceat(p, start)
        bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
        if bad.size:
            raise DataError(f"magnitude ptable row i={i[start[bad[0]]]:g} sums to {sums[bad[0]]:.8g}, not 1.")
        row = np.repeat(np.arange(start.size), np.diff(np.r_[start, i.size]))
        p = p / sums[row]
        cum = np.cumsum(p)
        cum = cum - np.repeat(np.r_[0.0, cum[start[1:] - 1]], np.diff(np.r_[start, i.size]))
        cum[np.r_[start[1:] - 1, i.size - 1]] = 1.0  # each row ends at exactly 1: every key finds a value
        for a in (i, v, p, cum, start, row):
            a.setflags(write=False)
        self._i, self._v, self._p, self._ub, self._start, self._row = i, v, p, cum, start, row
        self._generation = dict(params or {})
        for name in ("D", "V", "step", "icat", "mono", "min_probability"):
            setattr(self, name, self._generation.get(name))

    # ------------------------------------------------------------------ construction
    @classmethod
    def generate(
        cls,
        D: int,
        V: float,
        step: int = 2,
        icat: Sequence[float] | None = None,
        *,
        mono: bool = True,
        min_probability: float = 1e-7,
        **renamed: Any,
    ) -> "MagnitudePTable":
        """The maximum-entropy magnitude ptable of the R package ptable (``create_num_ptable``).

        Parameters
        ----------
        D : int
            Largest noise value; row i's noise values run from ``max(-i, -D)`` to ``D``.
        V : float
            Noise variance (an upper bound that binds wherever it can be reached).
        step : int, default 2
            Noise values on a grid of ``1 / step``; ``D * step`` must be below 50.
        icat : sequence of numbers, optional
            The reference rows, which must include 1 and D (default ``(1, D)``).
        mono, min_probability
            As for :meth:`PTable.generate <cellsafe.mechanisms.PTable.generate>`.

        Notes
        -----
        Row i maximizes the entropy of p over the noise values ``v = j - i``, j in ``max(0, i - D),
        max(0, i - D) + 1/step, ..., i + D``, subject to ``sum p = 1``, ``sum v p = 0``,
        ``sum v^2 p <= V`` and, with ``mono``, p non-decreasing up to v = 0 (Enderle 2021; the
        ``optim = 1`` variant of ptable's ``pt_optim_entropy``).
        """
        refuse_renamed("MagnitudePTable.generate", renamed, MagnitudePTable._renamed)
        D = check_integer(D, "D", "MagnitudePTable.generate", low=1)
        V = check_real(V, "V", "MagnitudePTable.generate", low=0.0, low_open=True)
        step = check_integer(step, "step", "MagnitudePTable.generate", low=1)
        if D * step >= _MAX_GRID:
            raise InvalidArgumentError(
                f"The 'D' and 'step' parameters of MagnitudePTable.generate must have D * step below {_MAX_GRID}. "
                f"Got D={D}, step={step} instead; lower D or step."
            )
        min_probability = check_real(
            min_probability, "min_probability", "MagnitudePTable.generate", low=0.0, high=0.01, low_open=True
        )
        rows = _check_icat(icat, D)
        ii, vv, pp = [], [], []
        for i in rows:
            j = np.arange(round(max(i - D, 0.0) * step), round((i + D) * step) + 1) / step
            v = j - i
            p = max_entropy_probabilities(v, V, bool(mono), min_probability)
            if p is None:
                raise CellsafeError(
                    f"the magnitude ptable row i={i:g} has no solution with D={D}, V={V:g}, step={step}: "
                    "the constraints cannot all hold; raise D or V."
                )
            ii.append(np.full(v.size, i))
            vv.append(v)
            pp.append(p)
        params = {"D": D, "V": V, "step": step, "icat": None if icat is None else tuple(rows.tolist()),
                  "mono": bool(mono), "min_probability": min_probability}
        return cls(np.concatenate(ii), np.concatenate(vv), np.concatenate(pp), params=params)

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> "MagnitudePTable":
        """A magnitude ptable from a frame in the sdcTools layout (``i, j, p, v, p_int_lb, p_int_ub, type``).

        ``v`` defaults to ``j - i``; with ``p_int_lb`` and ``p_int_ub`` the probabilities are their
        differences (the intervals the keys are looked up in).  Only one ``type`` (``all``) is handled.
        """
        cols = {str(c).strip().lower(): c for c in df.columns}
        if not {"i", "p"} <= set(cols) or not ({"v", "j"} & set(cols)):
            raise DataError(
                f"a magnitude ptable needs the columns i, p and v (or j), as ptable's create_num_ptable writes them. "
                f"Got columns {list(df.columns)}."
            )
        d = df
        if "type" in cols:
            types = set(d[cols["type"]].astype(str))
            if types - {"all"}:
                raise DataError(
                    f"this magnitude ptable has the types {sorted(types)}; only one table for all cells ('all') is "
                    "handled (no separate tables for even/odd contributors or small cells)."
                )
        try:
            i = d[cols["i"]].to_numpy(dtype=np.float64)
            v = d[cols["v"]].to_numpy(dtype=np.float64) if "v" in cols else d[cols["j"]].to_numpy(dtype=np.float64) - i
            if {"p_int_lb", "p_int_ub"} <= set(cols):
                p = d[cols["p_int_ub"]].to_numpy(dtype=np.float64) - d[cols["p_int_lb"]].to_numpy(dtype=np.float64)
            else:
                p = d[cols["p"]].to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(f"a magnitude ptable's columns must hold numbers ({exc}).") from None
        return cls(i, v, p, params={"source": "frame"})

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> "MagnitudePTable":
        """Read a magnitude ptable CSV in the sdcTools layout (see :meth:`from_frame`)."""
        try:
            df = pd.read_csv(path)
            if df.shape[1] == 1:
                df = pd.read_csv(path, sep=";")
        except (OSError, ValueError) as exc:
            raise DataError(f"cannot read magnitude ptable {os.fspath(path)!r}: {exc}") from None
        table = cls.from_frame(df)
        table._generation = {"file": os.fspath(path)}
        return table

    def to_frame(self) -> pd.DataFrame:
        """The table in the sdcTools layout: ``i, j, p, v, p_int_lb, p_int_ub, type``."""
        lb = self._ub - self._p
        return pd.DataFrame({"i": self._i, "j": self._i + self._v, "p": self._p, "v": self._v,
                             "p_int_lb": np.maximum(lb, 0.0), "p_int_ub": self._ub, "type": "all"})

    # ------------------------------------------------------------------ the parameter protocol
    def _regenerate(self, params: dict[str, Any]) -> "MagnitudePTable":
        D, V, step, icat = params.pop("D"), params.pop("V"), params.pop("step"), params.pop("icat")
        return MagnitudePTable.generate(D, V, step, icat, **params)

    @property
    def sha256(self) -> str:
        """The sha256 of what the table releases (its rows, noise values and probabilities)."""
        h = hashlib.sha256(b"cellsafe-magnitude-ptable/1")
        for a in (self._i, self._v, self._p):
            h.update(np.asarray(a.size, dtype=np.int64).tobytes() + np.ascontiguousarray(a).tobytes())
        return h.hexdigest()

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and np.array_equal(self._i, other._i) and np.array_equal(self._v, other._v)  # type: ignore[attr-defined]
                and np.array_equal(self._p, other._p))  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = {k: v for k, v in self._generation.items() if k in ("D", "V", "step", "icat", "file") and v is not None}
        extra = "".join(f", {k}={v!r}" if isinstance(v, str) else f", {k}={v}" for k, v in shown.items())
        return f"MagnitudePTable(rows={self.rows.tolist()}{extra})"

    # ------------------------------------------------------------------ properties and lookups
    @property
    def rows(self) -> np.ndarray:
        """The reference values i of the rows, increasing."""
        return self._i[self._start]

    @property
    def max_noise(self) -> float:
        """Largest |v| with positive probability."""
        return float(np.max(np.abs(self._v[self._p > 0])))

    def row_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of the noise in each row."""
        mean = np.add.reduceat(self._p * self._v, self._start)
        second = np.add.reduceat(self._p * self._v**2, self._start)
        return mean, np.maximum(second - mean**2, 0.0)

    def _lookup(self, row: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The noise value of row number ``row`` whose interval [lb, ub) holds the key u."""
        flat = self._row + self._ub  # increasing: row r's bounds lie in (r, r + 1]
        pos = np.searchsorted(flat, row + u, side="right")
        return self._v[np.minimum(pos, self._v.size - 1)]

    def noise(self, a: Any, keys: Any) -> np.ndarray:
        """Noise values for cells at ``a`` (value / noise magnitude) with uniform keys in [0, 1).

        ``a`` above the last row uses the last row, below the first the first; between two rows the
        noise is the linear interpolation of the two rows' values for the same key.
        """
        a = np.asarray(a, dtype=np.float64)
        u = np.asarray(keys, dtype=np.float64)
        if a.shape != u.shape:
            raise InvalidArgumentError(f"a and keys must have the same shape. Got {a.shape} and {u.shape}.")
        if u.size and (np.any(~np.isfinite(u)) or u.min() < 0 or u.max() >= 1):
            raise DataError("uniform cell keys must lie in [0, 1).")
        rows = self.rows
        x = np.clip(np.nan_to_num(a, nan=rows[0]), rows[0], rows[-1])
        hi = np.minimum(np.searchsorted(rows, x, side="left"), rows.size - 1)
        lo = np.where(rows[hi] == x, hi, np.maximum(hi - 1, 0))
        span = rows[hi] - rows[lo]
        lam = np.divide(x - rows[lo], span, out=np.zeros_like(x), where=span > 0)
        return (1.0 - lam) * self._lookup(lo, u) + lam * self._lookup(hi, u)


def _check_icat(icat: Sequence[float] | None, D: int) -> np.ndarray:
    if icat is None:
        return np.array([1.0, float(D)]) if D > 1 else np.array([1.0])
    try:
        rows = np.unique(np.asarray(icat, dtype=np.float64).reshape(-1))
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"The 'icat' parameter of MagnitudePTable.generate must be numbers. Got {icat!r} instead.") from None
    if rows.size == 0 or rows[0] != 1 or rows[-1] != D:
        raise InvalidArgumentError(
            f"The 'icat' parameter of MagnitudePTable.generate must hold 1 and D={D}, and nothing above D "
            f"(e.g. icat=(1, {D})). Got {icat!r} instead."
        )
    return rows
