"""Sequential synthesis (fully conditional specification) of mixed microdata.

:class:`SequentialSynthesizer` synthesizes the variables of a visit sequence one after another.
Each variable's model is fitted on the confidential values of the target and of the variables
before it, once, in :meth:`~SequentialSynthesizer.fit`; :meth:`~SequentialSynthesizer.sample`
then draws each variable from the *synthetic* values of its predictors (course 002, section 2.4,
and the mistake of exercise 2.7).  Implicates are independent streams keyed by their number.
"""

from __future__ import annotations

import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .._catalog import SYNTHESIS_METHODS
from .._frames import as_pandas
from .._progress import progress_bar
from .._random import RNGLike, as_seed_sequence, stream
from .._validation import check_integer
from ..exceptions import CellsafeWarning, DataError, InvalidArgumentError
from ..io import read_records
from ._columns import MAX_LEVELS, Column, decode, encode, reorder
from ._constraints import pair_tables
from ._rules import CompiledRule, compile_rule, parse_rules
from ._steps import Step, draw_step, fit_step

__all__ = ["SequentialSynthesizer", "METHODS"]

METHODS: tuple[str, ...] = SYNTHESIS_METHODS  # one list, also read by the command line
_OWNER = "SequentialSynthesizer"
_PURPOSE = 0x5E0  # stream key of sequential synthesis: (purpose, implicate, position in the visit sequence)
_PURPOSE_STRATA = 0x5E1  # (purpose, stratum, implicate, position)
_PURPOSE_PROPER = 0x5E2  # bootstrap of proper synthesis: (purpose, implicate, group)
_SMOOTHING = (None, "density")
_NUMERIC_ONLY = ("normal", "pmm", "normrank")
_CATEGORICAL_ONLY = ("logistic", "multinomial", "polr")


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
        regression plus a normal draw with the residual standard error), ``"pmm"`` (predictive
        mean matching) and ``"normrank"`` (normal scores of ranks) for skewed numbers,
        ``"logistic"`` (a category with two values), ``"multinomial"`` (a category),
        ``"polr"`` (an ordered category: proportional odds), ``"cart"`` (a classification
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
    rules : dict, optional
        ``{column: "CONDITION -> CONSEQUENCE"}`` (or a list of rules per column) that every
        synthetic record obeys, e.g. ``{"marital": "age < 16 -> 'single'"}``; the language is
        described in :mod:`cellsafe.synthesis._rules` and the README.  Each rule is checked on the
        confidential records (``rule_checks_``; a rule they break gets a warning) and enforced in
        the synthesis: a bare value fixes the column where the condition holds (the model is
        fitted on the other records), a comparison restricts the draw.
    structural_zeros : bool
        Never draw together two categories that no confidential record has together (default
        True): pairs of a categorical variable and any categorical variable synthesized before it.
    allow : list of dict, optional
        Pairs drawn even though the original lacks them: ``[{"sex": "M", "pregnant": "yes"}]``.
    strata : str, optional
        A categorical column: each stratum (category) is synthesized on its own records, with
        its own models, and keeps its number of records; the stratum column is released as it is.
    min_stratum : int, optional
        Fewest records of a stratum synthesized on its own (default, as synthpop's
        ``minstratumsize``: 10 + 10 x the variables synthesized).  Smaller strata are
        synthesized together, with the stratum as their first variable, kept as it is and
        a predictor of every other: each keeps its size and trees can still split on it.
    n_jobs : int, optional
        Threads synthesizing strata at once (default 1; -1 for every core).  The records do not
        depend on it.
    donors : int
        Nearest confidential records ``"pmm"`` draws a value from (default 3, as synthpop).
    proper : bool
        Fit every implicate's models again on a bootstrap sample of the records (synthpop's
        ``proper = TRUE``), so that implicates carry the uncertainty of the models' parameters:
        the synthesis Raghunathan, Reiter and Rubin's combining rule assumes
        (:func:`cellsafe.metrics.combine_fully_synthetic` with ``rule="rrr"``).  Default False:
        the models fitted once in :meth:`fit` (Raab et al.'s rule, the default, is the one for it).

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
        ``LogisticModel``, ``MultinomialModel``, ``PolrModel``, ``CartModel``, ...); with
        ``strata``, ``{stratum: {column: model}}``.
    strata_ : dict
        With ``strata``: ``{stratum: number of records}``, and ``pooled_strata_`` the strata
        synthesized together because they are smaller than ``min_stratum``.
    rule_checks_ : list of dict
        Per rule: its text, how many confidential records meet its condition and how many break it.
    notices_ : list of str
        What was inferred about the columns (numbers read from text, categorical columns with
        many categories) and the rules the original breaks; each also raised as a
        :class:`~cellsafe.exceptions.CellsafeWarning`.
    n_records_ : int

    Notes
    -----
    Course 002, section 2.4 (sequential synthesis, visit sequence), exercise 2.7 (model on the
    confidential values, predict from the synthetic ones), 2.9 (partial synthesis), 4.1.1
    (sampling a category by its frequencies) and 4.1.3 ("method 2": regression prediction plus a
    normal draw with the residual standard error).  Models are fitted once and reused by every
    implicate; each implicate and each variable draws from its own stream
    ``stream(root, purpose, implicate, position)`` (``(purpose, stratum, implicate, position)``
    with strata), so the same ``rng`` gives the same records and implicates are independent.

    Missing values are modelled as synthpop does: a numeric variable with missing values is
    synthesized in two steps, its missing indicator (logistic regression for the regression
    methods, a classification tree for ``"cart"``), then its value for records drawn as
    observed; a missing category is a category of its own.  ``fit`` reads blanks, ``"NA"`` and
    empty strings as missing in numeric columns; other markers are declared with
    ``missing_values``.

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
        rules: Mapping[str, Any] | None = None,
        structural_zeros: bool = True,
        allow: Sequence[Mapping[str, Any]] | None = None,
        strata: str | None = None,
        min_stratum: int | None = None,
        n_jobs: int | None = None,
        donors: int = 3,
        proper: bool = False,
    ) -> None:
        self.methods = methods
        self.visit_sequence = visit_sequence
        self.predictors = predictors
        self.min_leaf = min_leaf
        self.smoothing = smoothing
        self.bounded = bounded
        self.rules = rules
        self.structural_zeros = structural_zeros
        self.allow = allow
        self.strata = strata
        self.min_stratum = min_stratum
        self.n_jobs = n_jobs
        self.donors = donors
        self.proper = proper
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
        check_integer(donors, "donors", _OWNER, low=1)
        smooth = smoothing.values() if isinstance(smoothing, Mapping) else [smoothing]
        for s in smooth:
            if s not in _SMOOTHING:
                raise InvalidArgumentError(
                    f"The 'smoothing' parameter of {_OWNER} must be None or 'density' (or a dict of them). Got {s!r} instead."
                )
        for name, flag in (("bounded", bounded), ("structural_zeros", structural_zeros), ("proper", proper)):
            if not isinstance(flag, (bool, np.bool_)):
                raise InvalidArgumentError(f"The {name!r} parameter of {_OWNER} must be True or False. Got {flag!r} instead.")
        self._rules = parse_rules(rules)
        if allow is not None:
            if isinstance(allow, Mapping) or not isinstance(allow, Sequence):
                raise InvalidArgumentError(f"The 'allow' parameter of {_OWNER} must be a list of pairs such as [{{'sex': 'M', 'pregnant': 'yes'}}].")
            for pair in allow:
                if not isinstance(pair, Mapping) or len(pair) != 2:
                    raise InvalidArgumentError(f"Each pair in 'allow' names two columns and a category of each, e.g. {{'sex': 'M', 'pregnant': 'yes'}}. Got {pair!r}.")
        if strata is not None and not isinstance(strata, str):
            raise InvalidArgumentError(f"The 'strata' parameter of {_OWNER} must be a column name. Got {strata!r} instead.")
        if min_stratum is not None:
            check_integer(min_stratum, "min_stratum", _OWNER, low=1)
        if n_jobs is not None and (not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1):
            raise InvalidArgumentError(f"The 'n_jobs' parameter of {_OWNER} must be a positive integer or -1. Got {n_jobs!r} instead.")

    def __repr__(self) -> str:
        args = []
        defaults = (
            ("methods", None), ("visit_sequence", None), ("predictors", None), ("min_leaf", 5), ("smoothing", None),
            ("bounded", True), ("rules", None), ("structural_zeros", True), ("allow", None), ("strata", None),
            ("min_stratum", None), ("n_jobs", None), ("donors", 3), ("proper", False),
        )
        for name, default in defaults:
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
        missing_values: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        levels: Mapping[str, Sequence[Any]] | None = None,
        max_levels: int = MAX_LEVELS,
        progress: bool = False,
    ) -> "SequentialSynthesizer":
        """Fit every variable's model on the confidential records.

        Parameters
        ----------
        data : DataFrame or path
            A pandas or polars DataFrame, a pyarrow Table, or a CSV / Parquet file (read by
            DuckDB; CSV columns are text exactly as written).
        numeric : list of str, optional
            Text columns to read as numbers (a value that is not a number is an error).  Text
            columns whose every value is a number and that have at least 10 distinct values are
            read as numbers without being listed, with a notice naming them.
        categorical : list of str, optional
            Numeric columns to treat as categories (integer-coded data).
        missing_values : list of str or dict, optional
            Markers of a missing value besides empty fields (and, in numeric columns, ``"NA"``):
            for every column (``["NA", "-9"]``) or per column (``{"income": ["-9"]}``).
        levels : dict, optional
            ``{column: [categories in order]}``: the order of an ordered category (``"polr"``)
            where it is not the natural one (numbers by value, text alphabetically).
        max_levels : int
            A categorical column with more categories than this gets a notice (default 60).
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
        strata = self.strata
        if strata is not None:
            _check_known([strata], cols, "strata")
            if strata in numeric:
                raise InvalidArgumentError(f"the stratum column {strata!r} is listed as numeric; strata are categories.")
            if strata not in categorical:
                categorical = categorical + [strata]
            visit = [v for v in visit if v != strata]
            if not visit:
                raise InvalidArgumentError("the visit sequence holds only the stratum column; name other columns to synthesize.")
        methods = self._resolve_methods(visit, cols)
        preds = self._resolve_predictors(visit, methods, cols)
        names = visit + ([strata] if strata is not None else [])
        columns, arrays, notices = encode(
            frame, names, numeric=numeric, categorical=categorical, missing_values=missing_values, max_levels=max_levels
        )
        for name, order in (levels or {}).items():
            _check_known([name], names, "levels")
            columns[name], arrays[name] = reorder(columns[name], arrays[name], order)
        for name in visit:
            _check_fits(methods[name], columns[name])
        rules = [compile_rule(r, columns) for r in self._rules]
        _check_rule_order(rules, visit, methods, strata)
        n = len(frame)
        self.rule_checks_ = _check_rules_on(rules, arrays, n)
        for check in self.rule_checks_:
            if check["broken"]:
                notices.append(
                    f"the original breaks the rule {check['rule']!r} in {check['broken']:,} of {check['meets_condition']:,} "
                    f"records meeting its condition (data rows {', '.join(map(str, check['rows']))}); the synthetic records will obey it."
                )
        for note in notices:
            warnings.warn(note, CellsafeWarning, stacklevel=2)
        allow = list(self.allow or [])
        pairs = {}
        for i, name in enumerate(visit):
            if self.structural_zeros and columns[name].kind == "categorical" and methods[name] != "keep":
                before = ([strata] if strata is not None else []) + visit[:i]
                pairs[name] = tuple(pair_tables(name, before, columns, arrays, slice(None), allow))
            else:
                pairs[name] = ()
        self.columns_ = columns
        self.visit_sequence_ = visit
        self.methods_ = methods
        self.predictors_ = {k: list(v) for k, v in preds.items()}
        self.n_records_ = n
        self.notices_ = notices
        self._output_order = [c for c in cols if c in set(names)]
        given = self.methods if isinstance(self.methods, Mapping) else ({} if self.methods is None else dict.fromkeys(visit))
        plan = _Plan(visit, methods, preds, rules, pairs, frozenset(v for v in visit if v not in given))
        if strata is None:
            self._groups = [_Group(None, np.arange(n), plan)]
            self._fit_groups(columns, arrays, progress)
            self.models_ = {s.name: s.model for s in self._groups[0].steps}
        else:
            self._strata_codes = arrays[strata]
            self._groups = self._strata_groups(columns, arrays, plan, n)
            self._fit_groups(columns, arrays, progress)
            self.models_ = {g.label: {s.name: s.model for s in g.steps} for g in self._groups}
        return self

    def _strata_groups(self, columns: dict[str, Column], arrays: dict[str, np.ndarray], plan: "_Plan", n: int) -> list["_Group"]:
        strata = str(self.strata)  # given: the groups are its categories
        col = columns[strata]
        codes = arrays[strata]
        counts = np.bincount(codes, minlength=col.missing_code + 1)
        labels = list(col.labels) + ([None] if col.has_missing else [])
        minimum = self.min_stratum if self.min_stratum is not None else 10 + 10 * len(plan.visit)
        groups, small = [], []
        for code, label in enumerate(labels):
            if counts[code] == 0:
                continue
            if counts[code] >= minimum:
                groups.append(_Group(_plain(label), np.flatnonzero(codes == code), plan))
            else:
                small.append(code)
        self.strata_ = {_plain(labels[c]): int(counts[c]) for c in range(len(labels)) if counts[c]}
        self.pooled_strata_ = [_plain(labels[c]) for c in small]
        if small:
            rows = np.flatnonzero(np.isin(codes, small))
            groups.append(_Group("(pooled)", rows, plan.with_first(strata)))
            note = (
                f"strata smaller than {minimum} records ({', '.join(f'{labels[c]!s} ({counts[c]})' for c in small)}) are "
                f"synthesized together, with {self.strata!r} kept as their first variable"
            )
            self.notices_.append(note)
            warnings.warn(note, CellsafeWarning, stacklevel=3)
        return groups

    def _fit_groups(self, columns: dict[str, Column], arrays: dict[str, np.ndarray], progress: bool) -> None:
        total = sum(len(g.plan.visit) for g in self._groups)
        bar = _bar(total, "fitting", progress)

        def fit_group(g: "_Group") -> list[Step]:
            return self._fit_steps(g, {k: v[g.rows] for k, v in arrays.items()}, bar)

        try:
            for g, steps in zip(self._groups, self._map(fit_group, self._groups)):
                g.steps = steps
        finally:
            bar.close()
        if self.proper:
            self._arrays = arrays  # refitted on a bootstrap sample for every implicate

    def _fit_steps(self, g: "_Group", sub: dict[str, np.ndarray], bar: Any = None, kept: list[Step] | None = None) -> list[Step]:
        settings: dict[str, Any] = dict(min_leaf=self.min_leaf, bounded=self.bounded, donors=self.donors)
        steps = []
        for j, name in enumerate(g.plan.visit):
            if kept is not None and kept[j].method == "keep":
                steps.append(kept[j])  # a kept column stays the records' own, in their order
                continue
            smooth = self.smoothing.get(name) if isinstance(self.smoothing, Mapping) else self.smoothing
            steps.append(
                fit_step(
                    name, g.plan.methods[name], g.plan.predictors[name], self.columns_, sub, g.rows.size,
                    rules=g.plan.rules_of(name), pairs=g.plan.pairs[name], smoothing=smooth, **settings,
                )
            )
            if bar is not None:
                bar.update(1)
        return steps

    def _proper_steps(self, g: "_Group", gen: np.random.Generator) -> list[Step]:
        """The group's models fitted again on a bootstrap sample of its records (proper synthesis)."""
        boot = g.rows[gen.integers(0, g.rows.size, size=g.rows.size)]
        return self._fit_steps(g, {k: v[boot] for k, v in self._arrays.items()}, kept=g.steps)

    def _map(self, fn: Any, items: list[Any]) -> list[Any]:
        jobs = self.n_jobs or 1
        if jobs == -1:
            jobs = os.cpu_count() or 1
        if jobs == 1 or len(items) < 2:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(max_workers=min(jobs, len(items))) as pool:
            return list(pool.map(fn, items))

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

    # ------------------------------------------------------------------ sampling

    def sample(self, n: int | None = None, m: int = 1, rng: RNGLike = None, *, progress: bool = False) -> list[pd.DataFrame]:
        """Draw ``m`` synthetic data sets (implicates) of ``n`` records.

        Parameters
        ----------
        n : int, optional
            Records per implicate (default: as many as the confidential data).  With ``strata``
            every stratum keeps its size, so ``n`` must be left unset.
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
            (numbers whole in the data are whole in the synthetic data).  With ``strata`` the
            records of each stratum take the places of its confidential records, so the stratum
            column is the original's.
        """
        if not hasattr(self, "_groups"):
            raise InvalidArgumentError(f"{_OWNER} is not fitted yet; call fit(data) before sample().")
        if self.strata is not None and n is not None and n != self.n_records_:
            raise InvalidArgumentError(
                f"with strata every stratum keeps its number of records, so the synthetic data have {self.n_records_} "
                f"records; leave n unset (got n={n})."
            )
        n = self.n_records_ if n is None else check_integer(n, "n", f"{_OWNER}.sample", low=1)
        m = check_integer(m, "m", f"{_OWNER}.sample", low=1)
        root = as_seed_sequence(rng)
        out = []
        relaxed = 0
        bar = _bar(m * sum(len(g.plan.visit) for g in self._groups), "synthesizing", progress)
        try:
            for i in range(m):
                if self.strata is None:
                    g = self._groups[0]
                    steps = self._proper_steps(g, stream(root, _PURPOSE_PROPER, i, 0)) if self.proper else None
                    syn, r = self._draw_group(g, n, lambda j, i=i: stream(root, _PURPOSE, i, j), bar, steps)
                    relaxed += r
                else:
                    syn = self._draw_strata(root, i, bar)
                out.append(decode(self.columns_, syn, self._output_order))
        finally:
            bar.close()
        if relaxed:
            warnings.warn(
                f"{relaxed} draws met a combination of earlier synthetic categories that no confidential record has, so no "
                "category of the next variable had been seen with all of them; those draws kept the rules and the pairs "
                "were relaxed.",
                CellsafeWarning,
                stacklevel=2,
            )
        return out

    def _draw_group(
        self, g: "_Group", n: int, gen_of: Any, bar: Any, steps: list[Step] | None = None
    ) -> tuple[dict[str, np.ndarray], int]:
        syn: dict[str, np.ndarray] = {} if self.strata is None else {self.strata: self._strata_codes[g.rows]}
        relaxed = 0
        for j, step in enumerate(g.steps if steps is None else steps):
            syn[step.name], r = draw_step(step, self.columns_, syn, n, gen_of(j))
            relaxed += r
            bar.update(1)
        return syn, relaxed

    def _draw_strata(self, root: Any, i: int, bar: Any) -> dict[str, np.ndarray]:
        n = self.n_records_

        def draw(item: tuple[int, "_Group"]) -> tuple[dict[str, np.ndarray], int]:
            k, g = item
            steps = self._proper_steps(g, stream(root, _PURPOSE_PROPER, i, k)) if self.proper else None
            return self._draw_group(g, g.rows.size, lambda j: stream(root, _PURPOSE_STRATA, k, i, j), bar, steps)

        syn: dict[str, np.ndarray] = {str(self.strata): self._strata_codes}
        for (_k, g), (part, _) in zip(enumerate(self._groups), self._map(draw, list(enumerate(self._groups)))):
            for name, values in part.items():
                if name == self.strata:
                    continue
                if name not in syn:
                    syn[name] = np.empty(n, dtype=values.dtype)
                syn[name][g.rows] = values
        return syn


class _Plan:
    """What every group of records is synthesized with: visit sequence, methods, predictors, rules, pairs."""

    def __init__(self, visit, methods, predictors, rules, pairs, defaulted=frozenset()):  # type: ignore[no-untyped-def]
        self.visit, self.methods, self.predictors, self.rules, self.pairs = visit, methods, predictors, rules, pairs
        self.defaulted = defaulted  # variables whose method was not given (the first one's 'sample')

    def rules_of(self, name: str) -> list[CompiledRule]:
        return [r for r in self.rules if r.rule.target == name]

    def with_first(self, strata: str) -> "_Plan":
        """The plan of pooled small strata: the stratum kept first, a predictor of every variable."""
        visit = [strata] + self.visit
        methods = {strata: "keep"}
        preds: dict[str, tuple[str, ...]] = {strata: ()}
        for name in self.visit:
            method = self.methods[name]
            if method == "sample" and name in self.defaulted:
                method = "cart"  # the first variable now has a predictor: its stratum
            methods[name] = method
            p = self.predictors[name]
            preds[name] = p if method in ("sample", "keep") else (strata,) + tuple(p)
        return _Plan(visit, methods, preds, self.rules, {strata: (), **self.pairs})


class _Group:
    """Records synthesized together (all, one stratum, or the pooled small strata)."""

    def __init__(self, label: Any, rows: np.ndarray, plan: _Plan) -> None:
        self.label, self.rows, self.plan = label, rows, plan
        self.steps: list[Step] = []


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _check_rule_order(rules: list[CompiledRule], visit: list[str], methods: dict[str, str], strata: str | None = None) -> None:
    position = {name: i for i, name in enumerate(visit)}
    if strata is not None:
        position[strata] = -1  # known in every stratum before anything is drawn
    for r in rules:
        target = r.rule.target
        if target not in position:
            raise InvalidArgumentError(f"rule {str(r.rule)!r}: {target!r} is not in the visit sequence {visit}.")
        if methods[target] == "keep":
            raise InvalidArgumentError(f"rule {str(r.rule)!r}: {target!r} is kept as it is (partial synthesis); a rule needs a synthesized column.")
        for name in r.rule.condition_columns | (r.rule.consequence_columns - {target}):
            if name not in position or position[name] >= position[target]:
                raise InvalidArgumentError(
                    f"rule {str(r.rule)!r} names {name!r}, which is not synthesized before {target!r}; a rule's condition "
                    "can only use variables drawn earlier. Put it earlier in the visit sequence."
                )


def _check_rules_on(rules: list[CompiledRule], arrays: Mapping[str, np.ndarray], n: int) -> list[dict[str, Any]]:
    """For each rule: records meeting its condition and records breaking it in ``arrays``."""
    out = []
    for r in rules:
        cond = np.broadcast_to(r.condition(arrays), (n,))
        broken = np.flatnonzero(~r.holds(arrays, n))
        out.append(
            {
                "rule": str(r.rule),
                "meets_condition": int(cond.sum()),
                "broken": int(broken.size),
                "rows": [int(i) + 1 for i in broken[:5]],
            }
        )
    return out


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
    if method in _NUMERIC_ONLY and col.kind != "numeric":
        raise DataError(
            f"method {method!r} models a number, but column {col.name!r} is {col.describe()}; use 'logistic' "
            "(two categories), 'multinomial', 'polr' (ordered), 'cart' or 'sample', or declare the column numeric."
        )
    if method in _CATEGORICAL_ONLY and col.kind != "categorical":
        raise DataError(
            f"method {method!r} models a category, but column {col.name!r} is {col.describe()}; use 'normal', "
            "'pmm', 'normrank', 'cart' or 'sample', or declare the column categorical."
        )
    if method == "logistic" and col.n_codes > 2:
        what = f"{len(col.labels)} categories" + (" and missing values" if col.has_missing else "")
        raise DataError(
            f"method 'logistic' models a category with two values, but column {col.name!r} has {what}; "
            "use 'multinomial' or 'cart'."
        )


def _bar(total: int, desc: str, enabled: bool) -> Any:
    return progress_bar(total, enabled, desc, unit="variable")
