"""One variable of the visit sequence: its model fitted on the confidential records, and its draw.

A step holds the target's model (and the model of its missing indicator), the rules that fix it
(records meeting their condition get the value; the model is fitted on the other records, as
synthpop's ``rules`` and ``rvalues``), the rules that restrict it, and its category pairs never
seen in the original (:mod:`~cellsafe.synthesis._constraints`).

Missing values (synthpop's way): a numeric target with missing values is drawn in two steps, its
missing indicator (a logistic regression for the regression methods, a classification tree for
``"cart"``) from the predictors, then its value where it is present; a categorical target's missing
value is a category of its own (``"polr"`` draws it first, as a number's, because it is not
ordered).  Regression designs drop columns that are constant or collinear on the records a model
is fitted on, as R's ``lm`` leaves aliased coefficients out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..exceptions import DataError
from ._columns import Column
from ._constraints import REDRAWS, PairTable, draw_categorical
from ._design import design_names, regression_design, tree_matrix
from ._rules import CompiledRule
from .cart import fit_cart
from .numeric import fit_normrank, fit_pmm
from .ordinal import fit_polr
from .regression import fit_logistic_model, fit_multinomial, fit_normal
from .sampling import KeptColumn, MarginalModel

__all__ = ["Step", "fit_step", "draw_step", "DESIGN"]

DESIGN = {
    "normal": "regression",
    "logistic": "regression",
    "multinomial": "regression",
    "polr": "regression",
    "pmm": "regression",
    "normrank": "regression",
    "cart": "tree",
}


class Reduced:
    """A model fitted on some columns of the design (the others constant or collinear)."""

    def __init__(self, model: Any, keep: np.ndarray) -> None:
        self.model, self.keep = model, keep

    def __getattr__(self, name: str) -> Any:
        model = self.__dict__.get("model")
        if model is None or name.startswith("__"):  # unpickling looks up hooks before the fields are set
            raise AttributeError(name)
        return getattr(model, name)

    def __repr__(self) -> str:
        return f"{self.model!r} on design columns {self.keep.tolist()}"

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        return self.model.draw(x[:, self.keep], gen)

    def proba(self, x: np.ndarray) -> np.ndarray:
        return self.model.proba(x[:, self.keep])


class MissingThen:
    """A missing indicator's model, then the value's model where the value is present."""

    def __init__(self, missing: Any, model: Any, missing_value: Any) -> None:
        self.missing, self.model, self.missing_value = missing, model, missing_value

    def __getattr__(self, name: str) -> Any:
        model = self.__dict__.get("model")
        if model is None or name.startswith("__"):  # unpickling looks up hooks before the fields are set
            raise AttributeError(name)
        return getattr(model, name)

    def __repr__(self) -> str:
        return f"{self.model!r} where present (missing: {self.missing!r})"

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        miss = self.missing.draw(x, gen).astype(bool)
        present = np.flatnonzero(~miss)
        value = self.model.draw(x[present], gen)
        y = np.full(x.shape[0], self.missing_value, dtype=np.result_type(value, type(self.missing_value)))
        y[present] = value
        return y

    def proba(self, x: np.ndarray) -> np.ndarray:
        pm = self.missing.proba(x)[:, 1]
        p = self.model.proba(x) * (1 - pm)[:, None]
        k = max(p.shape[1], int(self.missing_value) + 1)
        out = np.zeros((x.shape[0], k))
        out[:, : p.shape[1]] = p
        out[:, int(self.missing_value)] += pm
        return out


@dataclass(frozen=True)
class Step:
    """One variable of the visit sequence: method, predictors, fitted model(s), rules and pairs."""

    name: str
    method: str
    predictors: tuple[str, ...]
    model: Any = field(repr=False)
    fixed: tuple[CompiledRule, ...] = ()
    restrict: tuple[CompiledRule, ...] = ()
    pairs: tuple[PairTable, ...] = ()
    marginal: np.ndarray | None = field(default=None, repr=False)  # code shares (categorical)
    donors: np.ndarray | None = field(default=None, repr=False)  # confidential values (numeric fallback)


def independent_columns(x: np.ndarray) -> np.ndarray:
    """Columns of ``x`` kept so that none is constant-zero or a combination of the others (in order)."""
    from scipy.linalg import qr

    if x.shape[1] == 0:
        return np.arange(0)
    scale = np.sqrt(np.mean(x**2, axis=0))
    nonzero = scale > 0
    cols = np.flatnonzero(nonzero)
    if cols.size == 0:
        return cols
    xs = x[:, cols] / scale[cols]
    r, piv = qr(xs, mode="r", pivoting=True)
    d = np.abs(np.diag(r))
    rank = int(np.sum(d > d[0] * 1e-9 * max(xs.shape))) if d.size else 0
    return np.sort(cols[piv[:rank]])


def _matrix(design: str, columns: Mapping[str, Column], arrays: Mapping[str, np.ndarray], preds: Sequence[str], n: int) -> np.ndarray:
    if design == "regression":
        return regression_design(columns, arrays, preds, n)
    return tree_matrix(columns, arrays, preds, n)


def step_matrix(step: Step, columns: Mapping[str, Column], arrays: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    return _matrix(DESIGN[step.method], columns, arrays, step.predictors, n)


def _reduced(fit: Any, y: np.ndarray, x: np.ndarray, *args: Any, **kw: Any) -> Any:
    keep = independent_columns(x)
    model = fit(y, x[:, keep], *args, **kw)
    return model if keep.size == x.shape[1] else Reduced(model, keep)


def fit_step(
    name: str,
    method: str,
    preds: tuple[str, ...],
    columns: Mapping[str, Column],
    arrays: Mapping[str, np.ndarray],
    n: int,
    *,
    rules: Sequence[CompiledRule] = (),
    pairs: Sequence[PairTable] = (),
    min_leaf: int = 5,
    smoothing: str | None = None,
    bounded: bool = True,
    donors: int = 3,
) -> Step:
    """Fit the model of ``name`` on the confidential records (see the module notes)."""
    col, y_all = columns[name], arrays[name]
    fixed = tuple(r for r in rules if r.rule.fixed)
    restrict = tuple(r for r in rules if not r.rule.fixed)
    rows = np.ones(n, dtype=bool)
    for r in fixed:
        rows &= ~np.broadcast_to(r.condition(arrays), (n,))
    marginal = None
    if col.kind == "categorical":
        marginal = np.bincount(y_all[rows], minlength=col.missing_code + 1).astype(np.float64)
        marginal /= max(marginal.sum(), 1.0)
    donor_values = y_all[rows] if col.kind == "numeric" else None
    common: dict[str, Any] = dict(fixed=fixed, restrict=restrict, pairs=tuple(pairs), marginal=marginal,
                                  donors=donor_values)
    if method == "keep":
        return Step(name, method, preds, KeptColumn(name, y_all), **common)
    y = y_all[rows]
    if not rows.any():
        raise DataError(f"every record meets a rule that fixes {name!r}; there is nothing left to model it on.")
    if method == "sample" or (col.kind == "categorical" and np.unique(y).size < 2):
        return Step(name, method, (), MarginalModel(y), **common)
    design = DESIGN[method]
    x = _matrix(design, columns, arrays, preds, n)[rows]
    low, high = (col.low, col.high) if (bounded and col.kind == "numeric") else (-np.inf, np.inf)
    if method in ("multinomial", "polr") and col.kind == "categorical":  # fits whose work grows with the categories
        from .._work import check, multinomial_work

        seconds, memory = multinomial_work(int(rows.sum()), col.n_codes, x.shape[1])
        check(f"column {name!r} by {method}: {col.n_codes:,} categories x {x.shape[1]:,} design columns over "
              f"{int(rows.sum()):,} records", seconds, f"synthesize it by cart or sample (--method-for {name}=cart)", memory)
    try:
        if col.kind == "numeric":
            model = _fit_number(method, y, x, col, columns, preds, low, high, min_leaf, smoothing, donors)
        else:
            model = _fit_category(method, y, x, col, min_leaf)
    except DataError as exc:
        raise DataError(f"method {method!r} for column {name!r} with predictors {list(preds)}: {exc}") from None
    return Step(name, method, preds, model, **common)


def _fit_number(method, y, x, col, columns, preds, low, high, min_leaf, smoothing, donors):  # type: ignore[no-untyped-def]
    miss = np.isnan(y)
    present = np.flatnonzero(~miss)
    if present.size == 0:
        raise DataError("the records it is fitted on have no observed value")
    xp, yp = x[present], y[present]
    if method == "normal":
        keep = independent_columns(xp)
        names = tuple(np.asarray(design_names(columns, preds), dtype=object)[keep])
        model: Any = fit_normal(yp, xp[:, keep], low, high, names)
        if keep.size != x.shape[1]:
            model = Reduced(model, keep)
    elif method == "pmm":
        model = _reduced(fit_pmm, yp, xp, donors)
    elif method == "normrank":
        model = _reduced(fit_normrank, yp, xp)
    else:
        model = fit_cart(yp, xp, categorical=False, min_leaf=min_leaf, smoothing=smoothing, low=low, high=high)
    if not miss.any():
        return model
    m = miss.astype(np.int64)
    if method == "cart":
        missing = fit_cart(m, x, categorical=True, min_leaf=min_leaf)
    else:
        missing = _reduced(fit_logistic_model, m, x)
    return MissingThen(missing, model, np.nan)


def _fit_category(method, y, x, col, min_leaf):  # type: ignore[no-untyped-def]
    if method == "logistic":
        return _reduced(fit_logistic_model, y, x)
    if method == "multinomial":
        keep = independent_columns(x)
        model = fit_multinomial(y, col.n_codes, x[:, keep])
        return model if keep.size == x.shape[1] else Reduced(model, keep)
    if method == "polr":
        miss = y == col.missing_code
        present = np.flatnonzero(~miss)
        xr = x[:, 1:]  # the cut points take the intercept's place
        keep = independent_columns(xr[present])
        model = Reduced(fit_polr(y[present], len(col.labels), xr[present][:, keep]), keep + 1)
        if not miss.any():
            return model
        missing = _reduced(fit_logistic_model, miss.astype(np.int64), x)
        return MissingThen(missing, model, col.missing_code)
    return fit_cart(y, x, categorical=True, min_leaf=min_leaf)


def draw_step(
    step: Step, columns: Mapping[str, Column], syn: Mapping[str, np.ndarray], n: int, gen: np.random.Generator
) -> tuple[np.ndarray, int]:
    """The synthetic values of ``step``'s variable for ``n`` records; and the records whose pairs were relaxed."""
    col = columns[step.name]
    if step.method == "keep":
        return step.model.draw(n, gen), 0
    fixed_rows = np.zeros(n, dtype=bool)
    for r in step.fixed:
        fixed_rows |= np.broadcast_to(r.condition(syn), (n,))
    free = np.flatnonzero(~fixed_rows)
    sub = {k: v[free] for k, v in syn.items()}
    x = step_matrix(step, columns, sub, free.size) if not isinstance(step.model, (MarginalModel,)) else np.empty((free.size, 0))
    relaxed = 0
    if col.kind == "categorical":
        rules = [(np.broadcast_to(r.condition(sub), (free.size,)), r.allowed) for r in step.restrict]
        pairs = [(sub[p.other], p.seen) for p in step.pairs]
        k = col.missing_code + 1
        values, relaxed = draw_categorical(step.model, x, gen, k, step.marginal, rules, pairs)  # type: ignore[arg-type]
        y = np.full(n, col.missing_code, dtype=np.int64)
    else:
        values = _draw_number(step, x, sub, free.size, gen)
        y = np.full(n, np.nan)
    y[free] = values
    for r in step.fixed:  # the first rule that fixes a record wins
        cond = np.broadcast_to(r.condition(syn), (n,))
        y[cond & fixed_rows] = r.fixed_value
        fixed_rows &= ~cond
    return y, relaxed


def _draw_number(step: Step, x: np.ndarray, sub: Mapping[str, np.ndarray], n: int, gen: np.random.Generator) -> np.ndarray:
    y = step.model.draw(x, gen)
    if not step.restrict:
        return y

    def broken(idx: np.ndarray, vals: np.ndarray) -> np.ndarray:
        arrays = {k: v[idx] for k, v in sub.items()}
        arrays[step.name] = vals
        bad = np.zeros(idx.size, dtype=bool)
        for r in step.restrict:
            bad |= ~r.holds(arrays, idx.size)
        return bad

    bad = np.flatnonzero(broken(np.arange(n), y))
    for _ in range(REDRAWS):
        if bad.size == 0:
            return y
        y[bad] = step.model.draw(x[bad], gen)
        bad = bad[broken(bad, y[bad])]
    donors = step.donors if step.donors is not None and step.donors.size else np.array([np.nan])
    for _ in range(20 * REDRAWS):  # values of confidential records that meet the rule for this record
        if bad.size == 0:
            return y
        y[bad] = donors[gen.integers(0, donors.size, size=bad.size)]
        bad = bad[broken(bad, y[bad])]
    if bad.size:
        rules = "; ".join(str(r.rule) for r in step.restrict)
        raise DataError(
            f"{bad.size} synthetic records cannot meet the rules of {step.name!r} ({rules}): no model draw and no "
            "confidential value of it does; check the rules against the data."
        )
    return y
