"""Sequential synthesis (fully conditional specification) of mixed microdata.

:class:`SequentialSynthesizer` synthesizes the variables of a visit sequence one after another.
Each variable's model is fitted on the confidential values of the target and of the variables
before it, once, in :meth:`~SequentialSynthesizer.fit`; :meth:`~SequentialSynthesizer.sample`
then draws each variable from the *synthetic* values of its predictors (course 002, section 2.4,
and the mistake of exercise 2.7).  Implicates are independent streams keyed by their number.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .._frames import as_pandas
from .._progress import progress_bar
from .._random import RNGLike, as_seed_sequence, stream
from .._validation import check_integer
from ..exceptions import DataError, InvalidArgumentError
from ..io import read_records
from ._columns import Column, decode, encode
from ._design import design_names, regression_design, tree_matrix
from .cart import fit_cart
from .regression import fit_logistic_model, fit_multinomial, fit_normal
from .sampling import KeptColumn, MarginalModel

__all__ = ["SequentialSynthesizer", "METHODS"]

METHODS: tuple[str, ...] = ("sample", "normal", "logistic", "multinomial", "cart", "keep")
_OWNER = "SequentialSynthesizer"
_PURPOSE = 0x5E0  # stream key of sequential synthesis: (purpose, implicate, position in the visit sequence)
_SMOOTHING = (None, "density")
_DESIGN = {"normal": "regression", "logistic": "regression", "multinomial": "regression", "cart": "tree"}


@dataclass(frozen=True)
class _Step:
    """One variable of the visit sequence: its method, predictors and fitted model(s)."""

    name: str
    method: str
    predictors: tuple[str, ...]
    model: Any = field(repr=False)
    missing: Any = field(default=None, repr=False)  # model of the missing indicator (numeric targets)


def _check_method(method: Any, where: str) -> str:
    if not isinstance(method, str) or method not in METHODS:
        raise InvalidArgumentError(
            f"The method {where} of {_OWNER} must be one of {', '.join(map(repr, METHODS))}. Got {method!r} instead."
        )
    return method


def _names(value: Any, what: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidArgumentError(f"The {what!r} parameter of {_OWNER} must be a list of column names. Got {value!r} instead.")
    names = list(value)
    seen: set[str] = set()
    for v in names:
        if v in seen:
            raise InvalidArgumentError(f"The {what!r} parameter of {_OWNER} names column {v!r} twice.")
        seen.add(v)
    return names


class SequentialSynthesizer:
    """Sequential synthesis of records with categorical and numeric variables.

    Parameters
    ----------
    methods : str or dict, optional
        One method for every variable, or ``{column: method}``; unlisted variables get the
        default, ``"sample"`` for the first variable of the visit sequence and ``"cart"`` after.
        Methods: ``"sample"`` (draw from the confidential marginal), ``"normal"`` (linear
        regression plus a normal draw with the residual standard error), ``"logistic"`` (a
        category with two values), ``"multinomial"`` (a category), ``"cart"`` (a classification
        or regression tree, donors drawn from the leaf) and ``"keep"`` (not synthesized:
        partial synthesis).  A model without predictors (the first variable) is fitted with an
        intercept only, or, for ``"cart"``, is the marginal.
    visit_sequence : list of str, optional
        The order in which variables are synthesized (default: the data's column order).
        Columns not in it are left out of the synthetic data.
    predictors : dict, optional
        ``{column: [predictors]}``; each predictor must come earlier in the visit sequence.
        Default: every variable before the column.
    min_leaf : int
        Fewest confidential records in a CART leaf (default 5).
    smoothing : {None, "density"} or dict
        Gaussian kernel smoothing of numeric values drawn by CART, for all or per column.
    bounded : bool
        Keep synthetic numbers within the observed range of each column (default True); normal
        draws outside it are drawn again.  False lets normal draws leave it, as in course 002.

    Attributes
    ----------
    visit_sequence_ : list of str
    methods_ : dict
        The method used for each variable.
    predictors_ : dict
        The predictors of each variable.
    columns_ : dict of Column
        How each variable was read (kind, categories, range).
    models_ : dict
        The fitted model of each variable (``NormalModel`` with ``coef``, ``se``, ``sigma``,
        ``LogisticModel``, ``MultinomialModel``, ``CartModel``, ...).
    n_records_ : int

    Notes
    -----
    Course 002, section 2.4 (sequential synthesis, visit sequence), exercise 2.7 (model on the
    confidential values, predict from the synthetic ones), 2.9 (partial synthesis), 4.1.1
    (sampling a category by its frequencies) and 4.1.3 ("method 2": regression prediction plus a
    normal draw with the residual standard error).  Models are fitted once and reused by every
    implicate; each implicate and each variable draws from its own stream
    ``stream(root, purpose, implicate, position)``, so the same ``rng`` gives the same records and
    implicates are independent.

    A numeric variable with missing values is synthesized in two steps: its missing indicator
    (logistic regression for ``"normal"``, a classification tree for ``"cart"``), then its
    value for records drawn as observed.  A missing category is a category of its own.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["female", "male"] * 50,
    ...                    "bill": [37.0 + (i % 2) * 3 + (i % 7) * 0.3 for i in range(100)]})
    >>> synth = SequentialSynthesizer(methods={"bill": "normal"}).fit(df)
    >>> synth.models_["bill"].coef.round(2)
    array([37.88,  3.01])
    >>> [s] = synth.sample(rng=1)
    >>> s.shape, sorted(s["sex"].unique())
    ((100, 2), ['female', 'male'])
    """

    def __init__(
        self,
        methods: str | Mapping[str, str] | None = None,
        visit_sequence: Sequence[str] | None = None,
        predictors: Mapping[str, Sequence[str]] | None = None,
        min_leaf: int = 5,
        smoothing: str | Mapping[str, str | None] | None = None,
        bounded: bool = True,
    ) -> None:
        self.methods = methods
        self.visit_sequence = visit_sequence
        self.predictors = predictors
        self.min_leaf = min_leaf
        self.smoothing = smoothing
        self.bounded = bounded
        # data-independent checks now, the rest against the data in fit
        if methods is not None and not isinstance(methods, str) and not isinstance(methods, Mapping):
            raise InvalidArgumentError(
                f"The 'methods' parameter of {_OWNER} must be a method name or a dict {{column: method}}. "
                f"Got {type(methods).__name__} instead."
            )
        if isinstance(methods, str):
            _check_method(methods, "'methods'")
        elif methods is not None:
            for col, meth in methods.items():
                _check_method(meth, f"for {col!r}")
        if visit_sequence is not None:
            _names(visit_sequence, "visit_sequence")
            if not visit_sequence:
                raise InvalidArgumentError(f"The 'visit_sequence' parameter of {_OWNER} is empty; name at least one column.")
        if predictors is not None:
            if not isinstance(predictors, Mapping):
                raise InvalidArgumentError(
                    f"The 'predictors' parameter of {_OWNER} must be a dict {{column: [predictors]}}. Got {predictors!r} instead."
                )
            for col, preds in predictors.items():
                _names(preds, f"predictors[{col!r}]")
        check_integer(min_leaf, "min_leaf", _OWNER, low=1)
        smooth = smoothing.values() if isinstance(smoothing, Mapping) else [smoothing]
        for s in smooth:
            if s not in _SMOOTHING:
                raise InvalidArgumentError(
                    f"The 'smoothing' parameter of {_OWNER} must be None or 'density' (or a dict of them). Got {s!r} instead."
                )
        if not isinstance(bounded, (bool, np.bool_)):
            raise InvalidArgumentError(f"The 'bounded' parameter of {_OWNER} must be True or False. Got {bounded!r} instead.")

    def __repr__(self) -> str:
        args = []
        for name, default in (("methods", None), ("visit_sequence", None), ("predictors", None), ("min_leaf", 5), ("smoothing", None), ("bounded", True)):
            value = getattr(self, name)
            if value is not default and value != default:
                args.append(f"{name}={value!r}")
        return f"{_OWNER}({', '.join(args)})"

    # ------------------------------------------------------------------ fitting

    def fit(
        self,
        data: Any,
        *,
        numeric: Sequence[str] | None = None,
        categorical: Sequence[str] | None = None,
        progress: bool = False,
    ) -> "SequentialSynthesizer":
        """Fit every variable's model on the confidential records.

        Parameters
        ----------
        data : DataFrame or path
            A pandas or polars DataFrame, a pyarrow Table, or a CSV / Parquet file (read by
            DuckDB; CSV columns are text exactly as written).
        numeric : list of str, optional
            Text columns to read as numbers (a value that is not a number is an error).
        categorical : list of str, optional
            Numeric columns to treat as categories (integer-coded data).
        progress : bool
            Show a progress bar on standard error.

        Returns
        -------
        SequentialSynthesizer
            ``self``, fitted.
        """
        frame = _read(data)
        if len(frame) == 0 or frame.shape[1] == 0:
            raise DataError("the data have no records (or no columns); sequential synthesis needs at least one record.")
        numeric = [] if numeric is None else _names(numeric, "numeric")
        categorical = [] if categorical is None else _names(categorical, "categorical")
        both = sorted(set(numeric) & set(categorical), key=str)
        if both:
            raise InvalidArgumentError(f"column {both[0]!r} is listed both as numeric and as categorical; choose one.")
        cols = list(frame.columns)
        visit = list(self.visit_sequence) if self.visit_sequence is not None else cols
        _check_known(visit, cols, "the visit sequence")
        _check_known([c for c in numeric + categorical], cols, "numeric / categorical")
        methods = self._resolve_methods(visit, cols)
        preds = self._resolve_predictors(visit, methods, cols)
        columns, arrays = encode(frame, visit, numeric=numeric, categorical=categorical)
        for name in visit:
            _check_fits(methods[name], columns[name])
        n = len(frame)
        steps = []
        bar = _bar(len(visit), "fitting", progress)
        try:
            for name in visit:
                steps.append(self._fit_step(name, methods[name], preds[name], columns, arrays, n))
                bar.update(1)
        finally:
            bar.close()
        self.visit_sequence_ = visit
        self.methods_ = methods
        self.predictors_ = {k: list(v) for k, v in preds.items()}
        self.columns_ = columns
        self.n_records_ = n
        self._steps = steps
        self._output_order = [c for c in cols if c in set(visit)]
        self.models_ = {s.name: s.model for s in steps}
        return self

    def _resolve_methods(self, visit: list[str], cols: list[str]) -> dict[str, str]:
        if isinstance(self.methods, str):
            return {name: self.methods for name in visit}
        given = dict(self.methods or {})
        _check_known(list(given), cols, "methods")
        stray = [c for c in given if c not in visit]
        if stray:
            raise InvalidArgumentError(f"a method is given for {stray[0]!r}, which is not in the visit sequence {visit}; add it or drop the method.")
        return {name: given.get(name, "sample" if i == 0 else "cart") for i, name in enumerate(visit)}

    def _resolve_predictors(self, visit: list[str], methods: dict[str, str], cols: list[str]) -> dict[str, tuple[str, ...]]:
        given = dict(self.predictors or {})
        _check_known(list(given), cols, "predictors")
        position = {name: i for i, name in enumerate(visit)}
        out: dict[str, tuple[str, ...]] = {}
        for i, name in enumerate(visit):
            if name in given:
                for p in given[name]:
                    if p not in position:
                        raise InvalidArgumentError(f"predictor {p!r} of {name!r} is not in the visit sequence {visit}.")
                    if position[p] >= i:
                        raise InvalidArgumentError(
                            f"predictor {p!r} of {name!r} comes at or after it in the visit sequence; a variable can "
                            "only be predicted from variables synthesized before it. Reorder the visit sequence."
                        )
                out[name] = tuple(given[name])
            else:
                out[name] = tuple(visit[:i])
            if methods[name] in ("sample", "keep"):
                out[name] = ()
        return out

    def _fit_step(
        self, name: str, method: str, preds: tuple[str, ...], columns: dict[str, Column], arrays: dict[str, np.ndarray], n: int
    ) -> _Step:
        col, y = columns[name], arrays[name]
        if method == "keep":
            return _Step(name, method, preds, KeptColumn(name, y))
        if method == "sample" or (col.kind == "categorical" and col.n_codes < 2):
            return _Step(name, method, (), MarginalModel(y))
        design = _DESIGN[method]
        x = _matrix(design, columns, arrays, preds, n)
        low, high = (col.low, col.high) if (self.bounded and col.kind == "numeric") else (-np.inf, np.inf)
        missing_model = None
        rows = slice(None)
        if col.kind == "numeric" and col.has_missing:
            miss = np.isnan(y).astype(np.int64)
            if method == "normal":
                missing_model = fit_logistic_model(miss, x)
            else:
                missing_model = fit_cart(miss, x, categorical=True, min_leaf=self.min_leaf)
            rows = np.flatnonzero(miss == 0)
        try:
            if method == "normal":
                model = fit_normal(y[rows], x[rows], low, high, tuple(design_names(columns, preds)))
            elif method == "logistic":
                model = fit_logistic_model(y, x)
            elif method == "multinomial":
                model = fit_multinomial(y, col.n_codes, x)
            else:
                smooth = self.smoothing.get(name) if isinstance(self.smoothing, Mapping) else self.smoothing
                model = fit_cart(
                    y[rows], x[rows], categorical=col.kind == "categorical", min_leaf=self.min_leaf, smoothing=smooth, low=low, high=high
                )
        except DataError as exc:
            raise DataError(f"method {method!r} for column {name!r} with predictors {list(preds)}: {exc}") from None
        return _Step(name, method, preds, model, missing_model)

    # ------------------------------------------------------------------ sampling

    def sample(self, n: int | None = None, m: int = 1, rng: RNGLike = None, *, progress: bool = False) -> list[pd.DataFrame]:
        """Draw ``m`` synthetic data sets (implicates) of ``n`` records.

        Parameters
        ----------
        n : int, optional
            Records per implicate (default: as many as the confidential data).
        m : int
            Number of implicates.
        rng : None, int, SeedSequence or Generator
            Randomness; the same value gives the same records.
        progress : bool
            Show a progress bar on standard error.

        Returns
        -------
        list of pandas.DataFrame
            The implicates, with the confidential columns' labels, category order and dtypes
            (numbers whole in the data are whole in the synthetic data).
        """
        if not hasattr(self, "_steps"):
            raise InvalidArgumentError(f"{_OWNER} is not fitted yet; call fit(data) before sample().")
        n = self.n_records_ if n is None else check_integer(n, "n", f"{_OWNER}.sample", low=1)
        m = check_integer(m, "m", f"{_OWNER}.sample", low=1)
        root = as_seed_sequence(rng)
        out = []
        bar = _bar(m * len(self._steps), "synthesizing", progress)
        try:
            for i in range(m):
                syn: dict[str, np.ndarray] = {}
                for j, step in enumerate(self._steps):
                    syn[step.name] = self._draw(step, syn, n, stream(root, _PURPOSE, i, j))
                    bar.update(1)
                out.append(decode(self.columns_, syn, self._output_order))
        finally:
            bar.close()
        return out

    def _draw(self, step: _Step, syn: dict[str, np.ndarray], n: int, gen: np.random.Generator) -> np.ndarray:
        if step.method in ("sample", "keep") or isinstance(step.model, MarginalModel):
            return step.model.draw(n, gen)
        x = _matrix(_DESIGN[step.method], self.columns_, syn, step.predictors, n)
        if step.missing is None:
            return step.model.draw(x, gen)
        miss = step.missing.draw(x, gen).astype(bool)
        y = np.full(n, np.nan)
        rows = np.flatnonzero(~miss)
        y[rows] = step.model.draw(x[rows], gen)
        return y


def _matrix(design: str, columns: dict[str, Column], arrays: Mapping[str, np.ndarray], preds: Sequence[str], n: int) -> np.ndarray:
    if design == "regression":
        return regression_design(columns, arrays, preds, n)
    return tree_matrix(columns, arrays, preds, n)


def _read(data: Any) -> pd.DataFrame:
    if isinstance(data, (str, os.PathLike)):
        return read_records(data)
    return as_pandas(data)


def _check_known(names: Sequence[str], cols: list[str], where: str) -> None:
    for name in names:
        if name not in cols:
            raise DataError(f"unknown column {name!r} in {where}: the data have columns {cols}. Check the spelling.")


def _check_fits(method: str, col: Column) -> None:
    """Refuse a method that does not fit a column's type, saying what would."""
    if method == "normal" and col.kind != "numeric":
        raise DataError(
            f"method 'normal' models a number, but column {col.name!r} is {col.describe()}; use 'logistic' "
            "(two categories), 'multinomial', 'cart' or 'sample', or declare the column numeric."
        )
    if method in ("logistic", "multinomial") and col.kind != "categorical":
        raise DataError(
            f"method {method!r} models a category, but column {col.name!r} is {col.describe()}; use 'normal', "
            "'cart' or 'sample', or declare the column categorical."
        )
    if method == "logistic" and col.n_codes > 2:
        what = f"{len(col.labels)} categories" + (" and missing values" if col.has_missing else "")
        raise DataError(
            f"method 'logistic' models a category with two values, but column {col.name!r} has {what}; "
            "use 'multinomial' or 'cart'."
        )


def _bar(total: int, desc: str, enabled: bool) -> Any:
    return progress_bar(total, enabled, desc, unit="variable")
