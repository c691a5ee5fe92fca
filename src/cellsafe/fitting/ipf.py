"""Iterative proportional fitting (IPF) of hierarchical log-linear models.

:func:`ipf` fits the model given by its generating margins (for example all two-way margins)
to a :class:`~cellsafe.table.CountTable`: it cycles over the margins, scaling the fitted cells so
that each fitted margin equals its target (Deming and Stephan).  The fitted values are the
Poisson (and multinomial) maximum-likelihood estimates of the model.  Targets may be the table's
own margins or any consistent set of (non-integer) margins, for example restored published
cells.  Structural zeros are zero weights and stay zero; cells whose target margin is zero become
zero at the first scaling.

Two paths compute the same iteration:

* dense, when the table's K cells fit in memory (``K <= max_dense``): the fitted table is a
  dense array and each margin is a reduction over the other axes;
* sparse, when ``start`` holds only some of the cells, or K is too large to densify: only the
  cells of the starting table are fitted, and margins are grouped sums over flat margin indices
  (``np.bincount``).  This is exact for models whose fitted table stays within that non-zero
  pattern (for instance a start that is positive on every cell whose margins are all positive).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .._blas import single_thread_blas
from .._results import Result
from .._validation import check_integer, check_real
from ..exceptions import CellsafeWarning, ConvergenceWarning, DataError, InvalidArgumentError, TableTooLargeError
from ..formula import Formula, parse_formula
from ..published import check_crossing
from ..table import CountTable, check_same_variables, check_table, ravel, unravel

__all__ = ["IPFResult", "ipf", "DEFAULT_MAX_DENSE"]

#: Largest number of cells fitted as a dense array (5e7 float64 cells: 400 MB).
DEFAULT_MAX_DENSE = 50_000_000


@dataclass(frozen=True)
class IPFResult(Result):
    """The result of :func:`ipf`.

    Attributes
    ----------
    fitted : CountTable
        Fitted values (float counts) on the input table's variables and structural zeros.
    converged : bool
        True when every fitted margin was within the tolerance of its target.
    n_iter : int
        Number of complete cycles over the margins.
    max_deviation : float
        Largest absolute difference between a fitted margin cell and its target, after the
        last cycle.
    margins : tuple of tuple of str
        The generating margins that were fitted.
    """

    fitted: CountTable
    converged: bool
    n_iter: int
    max_deviation: float
    margins: tuple[tuple[str, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The model, the fitted table's size and total, and the convergence (the cells: ``fitted``)."""
        return {
            "model": " + ".join(":".join(m) for m in self.margins),
            "n_cells": int(self.fitted.n_cells),
            "total": float(self.fitted.total),
            "converged": bool(self.converged),
            "n_iter": int(self.n_iter),
            "max_deviation": float(self.max_deviation),
        }

    def __repr__(self) -> str:
        model = " + ".join(":".join(m) for m in self.margins) or "?"
        return (
            f"IPFResult(model='{model}', n_cells={self.fitted.n_cells}, total={float(self.fitted.total):.6g}, "
            f"converged={self.converged}, n_iter={self.n_iter}, max_deviation={self.max_deviation:.3g})"
        )


def _generating_margins(table: CountTable, margins: Any) -> tuple[tuple[str, ...], ...]:
    names = table.names
    if isinstance(margins, (str, Formula)):
        gen = parse_formula(margins, names).generating_class()
        if not gen:
            raise InvalidArgumentError(
                f"the model {str(margins)!r} has no margins to fit; name at least one variable, for example 'a*b + c'."
            )
        return tuple(tuple(m) for m in gen)
    if not isinstance(margins, Sequence) or len(margins) == 0:
        raise InvalidArgumentError(
            "margins must be a formula such as 'a*b + b*c' or a non-empty list of lists of variable names. "
            f"Got {margins!r}."
        )
    out = tuple(check_crossing(m, names, "margin") for m in margins)
    if () in out:
        raise InvalidArgumentError("every margin must name at least one variable; got an empty margin.")
    return out


def _target_array(
    table: CountTable, margin: tuple[str, ...], target: CountTable | None, codes: np.ndarray | None
) -> np.ndarray:
    """The target margin as a flat float array over ``margin``'s cells (row-major, margin order)."""
    shape = [table.variables[table.names.index(v)].size for v in margin]
    size = math.prod(shape)
    if target is None:
        assert codes is not None
        keys = ravel(codes[:, [table.names.index(v) for v in margin]], shape)
        return np.bincount(keys, weights=np.asarray(table.counts, dtype=np.float64), minlength=size)
    else:
        check_table(target, "ipf", f"targets[{tuple(margin)!r}]")
        if sorted(target.names) != sorted(margin):
            raise InvalidArgumentError(
                f"the target for margin {list(margin)} has variables {target.names}; "
                f"it must have exactly {list(margin)}."
            )
        for v in target.variables:
            own = table.variables[table.names.index(v.name)]
            if tuple(v.categories) != tuple(own.categories):
                raise InvalidArgumentError(
                    f"the target for margin {list(margin)} has categories {list(v.categories)} for variable "
                    f"{v.name!r}, but the table has {list(own.categories)}; build it on the table's categories."
                )
        m = target.margin(list(margin))
    out = np.zeros(size, dtype=np.float64)
    out[m.index] = m.counts
    return out


def _check_consistent(
    margins: tuple[tuple[str, ...], ...], targets: list[np.ndarray], shapes: list[tuple[int, ...]], tol: float
) -> None:
    """Targets must agree on their totals and on the margins they share."""
    totals = [float(t.sum()) for t in targets]
    scale = max(1.0, max(totals))
    limit = max(tol, 1e-7) * scale
    for i in range(1, len(margins)):
        if abs(totals[i] - totals[0]) > limit:
            raise DataError(
                f"the target margins are inconsistent: margin {list(margins[0])} sums to {totals[0]:.10g} but margin "
                f"{list(margins[i])} sums to {totals[i]:.10g}; every target must have the same grand total."
            )
    for i in range(len(margins)):
        for j in range(i + 1, len(margins)):
            common = [v for v in margins[i] if v in margins[j]]
            if not common:
                continue
            a = _sub_margin(targets[i], margins[i], shapes[i], common)
            b = _sub_margin(targets[j], margins[j], shapes[j], common)
            dev = np.abs(a - b)
            if dev.max() > limit:
                raise DataError(
                    f"the target margins are inconsistent: margins {list(margins[i])} and {list(margins[j])} give "
                    f"different sums over {common} (largest difference {dev.max():.6g}); targets must agree on "
                    "the margins they share."
                )


def _sub_margin(flat: np.ndarray, names: tuple[str, ...], shape: tuple[int, ...], common: list[str]) -> np.ndarray:
    arr = flat.reshape(shape)
    drop = tuple(k for k, v in enumerate(names) if v not in common)
    kept = [v for v in names if v in common]
    s = arr.sum(axis=drop) if drop else arr
    return np.transpose(s, [kept.index(v) for v in common]).reshape(-1)


def ipf(
    table: CountTable,
    margins: Any,
    *,
    targets: Mapping[tuple[str, ...], CountTable] | None = None,
    start: CountTable | None = None,
    tol: float = 1e-8,
    max_iter: int = 1000,
    max_dense: int = DEFAULT_MAX_DENSE,
    accelerate: bool = True,
) -> IPFResult:
    """Fit a hierarchical log-linear model by iterative proportional fitting.

    Parameters
    ----------
    table : CountTable
        The table whose margins are fitted (its variables, categories and structural zeros
        define the fitted table).
    margins : str or sequence of sequence of str
        A formula (``'a*b + b*c'``, ``'(a + b + c)^2'``; its generating class is used) or the
        generating margins themselves (``[['a', 'b'], ['b', 'c']]``).
    targets : mapping of tuple of str to CountTable, optional
        Target margins instead of the table's own: keys name a margin's variables (in any
        order), values are tables over exactly those variables, on the table's categories, with
        integer or float counts.  Margins without an entry take the table's margin.
    start : CountTable, optional
        Starting values on the table's variables.  By default 1 in every non-structural cell.
        A start holding only some cells fits only those cells (cells with a zero start stay zero).
    tol : float, default 1e-8
        Convergence tolerance, relative to the grand total: iteration stops when every fitted
        margin cell is within ``tol * max(1, n)`` of its target.
    max_iter : int, default 1000
        Cap on the number of cycles over the margins; reaching it gives a ConvergenceWarning.
    max_dense : int, default 5e7
        Tables with more cells than this are fitted on the cells of ``start`` (or of the table).
    accelerate : bool, default True
        Extrapolate when the deviation falls at a steady linear rate (dense path; see Notes).

    Returns
    -------
    IPFResult
        With ``fitted`` (a CountTable of float counts), ``converged``, ``n_iter``,
        ``max_deviation``.

    Raises
    ------
    InvalidArgumentError
        Unknown variables, a malformed margin, or a target on the wrong variables or categories.
    DataError
        Targets that disagree on their totals or shared margins, or a positive target margin cell
        whose cells are all structural zeros (or zero in ``start``).

    Notes
    -----
    Each cycle visits the margins in order; for margin M the fitted cells are multiplied by
    ``target_M / fitted_M`` (0 where the fitted margin is 0).  The fitted values are the
    maximum-likelihood estimates of the log-linear model whose generating class is the margins
    (methods.md section 5; used by 003 and 000 for smoothed synthesis and by 001 section 4 for
    expected inner frequencies).  The deviation of each margin is measured just before it is
    scaled, so convergence costs no extra pass; ``max_deviation`` is recomputed over all margins
    after the last cycle.

    IPF converges linearly.  When three successive cycles show the same rate r, the remaining
    updates form a geometric series in log space, and the dense path multiplies the table by the
    last cycle's ratios raised to ``r / (1 - r)`` (an Aitken-type extrapolation).  The table stays
    a product of margin functions times the start, so the limit is the same maximum-likelihood
    fit; if the next cycle deviates more than before, extrapolation is switched off.  On the
    all-two-way model of esc_like this halves the number of cycles.

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe.table import CountTable, Variable
    >>> v = [Variable("a", ["x", "y"]), Variable("b", ["u", "v"])]
    >>> t = CountTable.from_dense(np.array([[10, 20], [30, 40]]), v)
    >>> res = ipf(t, "a + b")
    >>> res.fitted.dense().round(6).tolist()
    [[12.0, 18.0], [28.0, 42.0]]
    >>> res.converged
    True
    """
    check_table(table, "ipf")
    check_real(tol, "tol", "ipf", low=0.0, low_open=True, high_open=True)
    check_integer(max_iter, "max_iter", "ipf", low=1)
    gen = _generating_margins(table, margins)
    names = table.names
    pos = [tuple(names.index(v) for v in m) for m in gen]
    shapes = [tuple(table.shape[p] for p in ps) for ps in pos]
    for m, shp in zip(gen, shapes):
        if math.prod(shp) > DEFAULT_MAX_DENSE:
            raise TableTooLargeError(
                f"margin {list(m)} has {float(math.prod(shp)):.3g} cells, more than {DEFAULT_MAX_DENSE:.3g}; "
                "IPF holds every margin as a dense array. Use smaller margins or merge categories."
            )

    given: dict[frozenset[str], CountTable] = {}
    for key, value in (targets or {}).items():
        key_t = (key,) if isinstance(key, str) else tuple(key)
        fs = frozenset(key_t)
        if fs not in {frozenset(m) for m in gen}:
            raise InvalidArgumentError(
                f"targets has an entry for margin {list(key_t)}, which is not one of the model's margins "
                f"{[list(m) for m in gen]}."
            )
        given[fs] = value
    codes = table.codes() if len(given) < len(gen) else None
    target = [_target_array(table, m, given.get(frozenset(m)), codes) for m in gen]
    del codes
    if given:
        _check_consistent(gen, target, shapes, tol)
    total = float(target[0].sum())
    threshold = tol * max(1.0, total)

    if start is not None:
        check_table(start, "ipf", "start")
        check_same_variables(start, table, "the start table", "the table")
    n_open = table.n_cells - table.n_structural_zeros
    sparse = table.n_cells > max_dense or (start is not None and start.nnz < n_open // 8)
    if sparse:
        if start is None:
            warnings.warn(
                f"the table has {table.n_cells:.3g} cells, more than max_dense={max_dense:.3g}; fitting only its "
                f"{table.nnz} non-zero cells, which is exact only when the fitted table stays within them. "
                "Pass a sparse start holding the cells that may be positive to choose them yourself.",
                CellsafeWarning,
                stacklevel=2,
            )
            index, x = table.index.copy(), np.ones(table.nnz)
        else:
            index, x = start.index.copy(), np.asarray(start.counts, dtype=np.float64).copy()
        if table.n_structural_zeros:
            keep = ~np.isin(index, table.structural_zeros)
            index, x = index[keep], x[keep]
        fitted_vals, n_iter, converged, dev = _ipf_sparse(
            table, index, x, gen, pos, shapes, target, threshold, max_iter
        )
        fitted = table.with_counts(index, fitted_vals)
    else:
        if start is None:
            x = np.ones(table.n_cells, dtype=np.float64)
        else:
            x = np.zeros(table.n_cells, dtype=np.float64)
            x[start.index] = start.counts
        if table.n_structural_zeros:
            x[table.structural_zeros] = 0.0
        x = x.reshape(table.shape)
        n_iter, converged, dev = _ipf_dense(table, x, gen, pos, shapes, target, threshold, max_iter, accelerate)
        flat = x.reshape(-1)
        nz = np.flatnonzero(flat)
        fitted = table.with_counts(nz, flat[nz])
    if not converged:
        warnings.warn(
            f"IPF did not converge in {max_iter} cycles: the largest margin deviation is {dev:.3g} "
            f"(tolerance {threshold:.3g}); raise max_iter or tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return IPFResult(fitted=fitted, converged=converged, n_iter=n_iter, max_deviation=dev, margins=gen)


def _impossible(table: CountTable, margin: tuple[str, ...], shape: tuple[int, ...], flat_pos: int) -> DataError:
    codes = np.unravel_index(flat_pos, shape)
    cell = ", ".join(f"{v}={table.variables[table.names.index(v)].categories[c]!r}" for v, c in zip(margin, codes))
    return DataError(
        f"margin cell ({cell}) of margin {list(margin)} has a positive target but every cell it sums is a "
        "structural zero (or zero in start); the model cannot fit it. Check the targets or the structural zeros."
    )


def _merge_runs(dims: list[int], kept: list[bool]) -> tuple[list[int], list[bool]]:
    out_d: list[int] = []
    out_k: list[bool] = []
    for d, k in zip(dims, kept):
        if out_k and out_k[-1] == k:
            out_d[-1] *= d
        else:
            out_d.append(d)
            out_k.append(k)
    return out_d, out_k


def _sum_plan(shape: tuple[int, ...], kept_axes: set[int]) -> list[tuple[int, int, int]]:
    """Steps (pre, r, post) that sum a row-major array over the axes not in ``kept_axes``.

    Consecutive axes of the same kind are merged (a free reshape); each step contracts one
    merged run of summed axes with a vector of ones (a matrix-vector product, one pass over
    the current array), largest run first so later steps touch little data.
    """
    dims, kept = _merge_runs(list(shape), [a in kept_axes for a in range(len(shape))])
    steps = []
    while not all(kept):
        i = max((j for j, k in enumerate(kept) if not k), key=lambda j: dims[j])
        steps.append((math.prod(dims[:i]), dims[i], math.prod(dims[i + 1 :])))
        del dims[i], kept[i]
        dims, kept = _merge_runs(dims, kept)
    return steps


def _apply_plan(x: np.ndarray, steps: list[tuple[int, int, int]]) -> np.ndarray:
    y = x
    for pre, r, post in steps:
        ones = np.ones(r)
        if post == 1:
            y = y.reshape(pre, r) @ ones
        elif pre == 1:
            y = ones @ y.reshape(r, post)
        else:
            y = ones @ y.reshape(pre, r, post)
    return y.reshape(-1)


def _scale_plan(shape: tuple[int, ...], kept_axes: tuple[int, ...]) -> tuple[Any, ...]:
    """How to multiply the dense table by a margin's ratios with long contiguous inner loops.

    ``('rows', P, S, expand)``: view the table as (P, S) rows and multiply every row by the ratios
    expanded over the trailing axes (S cells, small); ``('block', P, M, T, expand)``: view it as
    (P, M, T) and multiply by ratios expanded over M cells, constant along T; ``('broadcast',
    kshape)``: plain broadcasting.
    """
    p = len(shape)
    k = math.prod(shape)
    lo, hi = min(kept_axes), max(kept_axes)
    sub = [shape[i] if i in kept_axes else 1 for i in range(p)]
    rows = math.prod(shape[lo:])
    if lo > 0 and rows <= k // 8:
        return ("rows", k // rows, rows, (tuple(sub[lo:]), tuple(shape[lo:])))
    m = math.prod(shape[lo : hi + 1])
    t = math.prod(shape[hi + 1 :])
    if t >= 32 and m <= k // 8:
        return ("block", k // (m * t), m, t, (tuple(sub[lo : hi + 1]), tuple(shape[lo : hi + 1])))
    return ("broadcast", sub)


def _scale(x: np.ndarray, ratio: np.ndarray, plan: tuple[Any, ...]) -> None:
    """x *= ratio (a margin-shaped array in table-axis order), in place."""
    kind = plan[0]
    if kind == "broadcast":
        x *= ratio.reshape(plan[1])
        return
    sub, full = plan[-1]
    expanded = np.broadcast_to(ratio.reshape(sub), full).reshape(-1)
    if kind == "rows":
        x.reshape(plan[1], plan[2])[...] *= expanded
    else:
        x.reshape(plan[1], plan[2], plan[3])[...] *= expanded[:, None]


def _ipf_dense(table: Any, x: Any, gen: Any, pos: Any, shapes: Any, target: Any, threshold: Any, max_iter: int,
               accelerate: bool = True) -> Any:
    # Per margin: the summation steps, the scaling layout, and the target laid out in table-axis
    # order.
    plans = []
    for m, ps, shp, tgt in zip(gen, pos, shapes, target):
        order = sorted(range(len(ps)), key=lambda k: ps[k])
        t_sorted = np.ascontiguousarray(np.transpose(tgt.reshape(shp), order))
        plans.append(
            (_sum_plan(table.shape, set(ps)), _scale_plan(table.shape, tuple(ps)), t_sorted.reshape(-1), m, shp, order)
        )
    n_iter, converged, dev = 0, False, math.inf
    history: list[float] = []
    extrapolate = bool(accelerate)
    with single_thread_blas():
        while n_iter < max_iter:
            dev = 0.0
            ratios = []
            for steps, scale, t, m, shp, order in plans:
                cur = _apply_plan(x, steps) if steps else x.reshape(-1).copy()
                if n_iter == 0:
                    bad = np.flatnonzero((cur == 0) & (t > 0))
                    if bad.size:
                        sorted_shape = [shp[k] for k in order]
                        codes_sorted = np.unravel_index(int(bad[0]), sorted_shape)
                        codes = [0] * len(order)
                        for k, c in zip(order, codes_sorted):
                            codes[k] = int(c)
                        raise _impossible(table, m, shp, int(np.ravel_multi_index(codes, shp)))
                dev = max(dev, float(np.max(np.abs(cur - t))))
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(cur > 0, t / cur, 0.0)
                _scale(x, ratio, scale)
                ratios.append(ratio)
            n_iter += 1
            if dev <= threshold:
                converged = True
                break
            if history and history[-1] == -1.0:  # the cycle after an extrapolation
                if dev > history[-2]:
                    extrapolate = False  # it did not help: plain IPF from here
                history = []
            history.append(dev)
            if extrapolate and len(history) >= 3:
                rate = history[-1] / history[-2]
                if abs(rate - history[-2] / history[-3]) < 0.05 * rate and 0.2 < rate < 0.95:
                    # A steady linear rate: the remaining updates form a geometric series in log
                    # space, so apply the last cycle's ratios rate / (1 - rate) more times.
                    power = min(rate / (1.0 - rate), 10.0)
                    for (_, scale, *_rest), ratio in zip(plans, ratios):
                        _scale(x, np.where(ratio > 0, ratio**power, 1.0), scale)
                    history = [dev, -1.0]
        final = 0.0
        for steps, _, t, *_ in plans:
            cur = _apply_plan(x, steps) if steps else x.reshape(-1)
            final = max(final, float(np.max(np.abs(cur - t))))
    return n_iter, converged, final


def _ipf_sparse(table: Any, index: Any, x: Any, gen: Any, pos: Any, shapes: Any, target: Any, threshold: Any,
                max_iter: int) -> Any:
    codes = unravel(index, table.shape)
    keys = [ravel(codes[:, list(ps)], shp) for ps, shp in zip(pos, shapes)]
    sizes = [int(t.shape[0]) for t in target]
    n_iter, converged, dev = 0, False, math.inf
    first = True
    while n_iter < max_iter:
        dev = 0.0
        for k, m, shp, size, t in zip(keys, gen, shapes, sizes, target):
            cur = np.bincount(k, weights=x, minlength=size)
            if first:
                bad = np.flatnonzero((cur == 0) & (t > 0))
                if bad.size:
                    raise _impossible(table, m, shp, int(bad[0]))
            dev = max(dev, float(np.max(np.abs(cur - t))))
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(cur > 0, t / cur, 0.0)
            x *= ratio[k]
        first = False
        n_iter += 1
        if dev <= threshold:
            converged = True
            break
    final = 0.0
    for k, size, t in zip(keys, sizes, target):
        final = max(final, float(np.max(np.abs(np.bincount(k, weights=x, minlength=size) - t))))
    return x, n_iter, converged, final
