"""The result protocol: every result object has to_dict() (JSON-ready), summary() (text),
_repr_html_() (an HTML table) and, where tabular, to_frame() (a DataFrame).

One table-driven test builds a small instance of every result class; another walks every module
of cellsafe and checks, without instances, that each class that looks like a result carries the
whole protocol.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil

import numpy as np
import pandas as pd
import pytest

import cellsafe
from cellsafe import apriori, dp, fitting, metrics, table, tuning
from cellsafe._results import Result
from cellsafe.distributions import NBI, Poisson
from cellsafe.mechanisms import CellKeyMethod, CellSuppression, PTable, SmallCountRounding
from cellsafe.mechanisms.dirichlet import MultinomialDirichletSynthesizer
from cellsafe.mechanisms.saturated import SaturatedSynthesizer
from cellsafe.metrics import microdata as md
from cellsafe.published import Publication
from cellsafe.table import CountTable, Variable

SIZES = {0: 90, 1: 6, 2: 4, 7: 2}
VARIABLES = [Variable("a", ["x", "y"]), Variable("b", ["u", "v", "w"]), Variable("c", ["p", "q"])]


def _table() -> CountTable:
    counts = np.array([[[10, 2], [0, 5], [7, 1]], [[3, 0], [12, 4], [1, 6]]])
    return CountTable.from_dense(counts, VARIABLES)


def _synthetic() -> CountTable:
    return SaturatedSynthesizer(Poisson()).sample(_table(), m=1, rng=7)[0]


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(11)

    def frame(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(18, 80, n).astype(float),
                "income": rng.gamma(2.0, 1000.0, n),
                "sex": rng.choice(["f", "m"], n),
                "region": rng.choice(["n", "s", "e"], n),
            }
        )

    return frame(80), frame(80), frame(40)


def _publication() -> Publication:
    return Publication.from_formula(_table(), "a*b + a*c")


def _assessment():
    return apriori.assess(SIZES, SaturatedSynthesizer(NBI(sigma=0.5)), d=(2,))


CASES = {
    # a priori
    "SquaredError": lambda: apriori.expected_squared_error(SIZES, SaturatedSynthesizer(Poisson()), m=2),
    "TotalDistribution": lambda: apriori.total_distribution(SIZES, SaturatedSynthesizer(Poisson())),
    "ExpectedHellinger": lambda: apriori.expected_hellinger(SIZES, SaturatedSynthesizer(Poisson())),
    "Assessment": _assessment,
    # tuning
    "TuningResult": lambda: tuning.tune(SIZES, SaturatedSynthesizer(NBI(sigma=1.0)), "sigma", "tau4(1)=0.6"),
    "Frontier": lambda: tuning.frontier(SIZES, families=["poisson", "nbi"], n=4),
    # empirical metrics of tables
    "SpecificUtility": lambda: metrics.specific_utility(_table(), [_synthetic()], "a*b + c"),
    "TableMetrics": lambda: metrics.table_metrics(_table(), [_synthetic(), _table()]),
    "DisclosureProbabilities": lambda: metrics.disclosure_probabilities(_table(), "c", ["a", "b"]),
    "DisclosureRisk": lambda: metrics.disclosure_risk(_table(), _synthetic(), "c", ["a", "b"]),
    "CombinedEstimate": lambda: metrics.combine_fully_synthetic(
        np.array([[1.0, 2.0], [1.2, 1.8]]), np.array([[0.1, 0.2], [0.1, 0.3]]), 100, [100, 100]
    ),
    "PublishedComparison": lambda: metrics.compare_published(
        _table(), _publication().aggregate(_table()), "c", ["a", "b"], publication=_publication()
    ),
    # published tables
    "PublishedTable (ckm)": lambda: CellKeyMethod(PTable.generate(D=3, V=1.5), _publication()).sample(_table(), rng=2)[0],
    "PublishedTable (scr)": lambda: SmallCountRounding(_publication(), base=3).sample(_table(), rng=4)[0],
    "SuppressionAudit": lambda: metrics.audit_suppression(
        CellSuppression(Publication.from_formula(_table(), "a*b"), rules=["freq<=2"]).sample(_table())[0]
    ),
    # tables and engines
    "TableDescription": lambda: table.describe(_table()),
    # microdata
    "KeyMatches": lambda: md.key_matches(_frames()[0], _frames()[1], ["sex", "region"]),
    "MatchRates": lambda: md.match_rates(_frames()[0], _frames()[1], ["sex", "region"]),
    "PropensityResult": lambda: md.propensity_metrics(*_frames()[:2], n_permutations=2, rng=1),
    "UnivariateComparison": lambda: md.compare_univariate(*_frames()[:2]),
    "DistanceToClosestRecord": lambda: md.distance_to_closest_record(*_frames(), rng=1),
    "MembershipInference": lambda: md.membership_inference(*_frames(), rng=1),
    "MatrixDifference": lambda: md.compare_bivariate(*_frames()[:2]).correlation,
    "BivariateComparison": lambda: md.compare_bivariate(*_frames()[:2]),
    "TableUtility": lambda: md.table_utility(*_frames()[:2], ["sex", "region"]),
    "AttributeDisclosure": lambda: md.attribute_disclosure(*_frames()[:2], ["sex", "region"], "age"),
    "RegressionUtility": lambda: md.regression_utility(*_frames()[:2], "income ~ age + sex"),
    "MicrodataEvaluation": lambda: md.evaluate_microdata(
        _frames()[0], [_frames()[1]], keys=["sex", "region"], target="age", holdout=_frames()[2],
        tables=(1, 2), formula="income ~ age + sex", rng=1,
    ),
    # differential privacy
    "Release": lambda: _accountant().releases[0],
    "BudgetSummary": lambda: _accountant().budget(),
    "PrivacyLoss": lambda: dp.PrivacyLoss.zcdp(0.01, "replace-one", delta=1e-9),
    "DPSynthesis": lambda: dp.plan_synthesis(
        pd.DataFrame({"a": ["x", "y", "x"]}), cellsafe.Domain({"a": ["x", "y"]}), epsilon=1.0
    ),
    "EpsilonVerification": lambda: dp.verify_epsilon(
        MultinomialDirichletSynthesizer.for_epsilon(1.0, 3), CountTable([VARIABLES[1]], [0], [3])
    ),
    # fitting
    "LogLinearFit": lambda: fitting.fit_loglinear(_table(), "a*b + c"),
    "IPFResult": lambda: fitting.ipf(_table(), "a*b + b*c"),
    "GLMFit": lambda: fitting.fit_ols(np.c_[np.ones(6), np.arange(6.0)], np.array([1.0, 2.9, 5.2, 7.1, 8.8, 11.0])),
    "AdditivityResult": lambda: fitting.restore_additivity(_publication().X, _publication().aggregate(_table()) + 1.0),
    "ExpectedInnerResult": lambda: fitting.expected_inner(_publication(), _publication().aggregate(_table())),
    "TreeEstimate": lambda: fitting.tree_least_squares([[10.0], [4.0, 5.0]], [1.0, 1.0], [[0, 0]]),
}


def _accountant() -> dp.PrivacyAccountant:
    acc = dp.PrivacyAccountant(epsilon=2.0)
    acc.spend(0.5, label="counts by region", partition="region", part="n")
    acc.spend(0.25, label="national total")
    return acc


@pytest.mark.parametrize("name", list(CASES))
def test_result_protocol(name):
    res = CASES[name]()
    assert type(res).__name__ == name.split(" ")[0]
    d = res.to_dict()
    assert isinstance(d, dict) and d
    json.dumps(d)  # JSON-ready: numbers, strings, lists and dicts only
    text = res.summary()
    assert isinstance(text, str) and text.strip()
    page = res._repr_html_()
    assert isinstance(page, str) and "<table" in page
    if hasattr(res, "to_frame"):
        assert isinstance(res.to_frame(), pd.DataFrame)


def test_summary_is_text_and_frames_moved():
    """Where summary() gave a frame or a dict, to_frame() / to_dict() gives it now."""
    fit = fitting.fit_loglinear(_table(), "a*b + c")
    coefs = fit.to_frame()
    assert list(coefs.index) == list(fit.params.index)
    assert {"estimate", "se", "z", "p_value", "lower", "upper", "aliased", "infinite"} <= set(coefs.columns)
    assert "(Intercept)" in fit.summary()
    assert [c["term"] for c in fit.to_dict()["coefficients"]] == list(fit.params.index)

    res = metrics.specific_utility(_table(), [_synthetic()], "a*b + c")
    assert res.to_frame().equals(res.parameters)
    assert res.to_dict()["mean_overlap"] == pytest.approx(res.mean_overlap)
    assert "mean_overlap" in res.summary()

    pr = md.propensity_metrics(*_frames()[:2], n_permutations=2, rng=1)
    assert set(pr.to_dict()) == {"pmse", "pmse_null", "pmse_ratio", "standardized_pmse", "specks", "auc", "n_params"}

    acc = _accountant()
    assert acc.budget().epsilon_spent == pytest.approx(0.75)
    assert acc.summary().splitlines()[0].startswith("budget")


def test_assessment_frame_is_the_tau_table():
    a = _assessment()
    assert a.to_frame().equals(a.tau)
    assert a.to_dict()["tau"]["1"]["tau4"] == pytest.approx(float(a.tau.at[1, "tau4"]))


# ---------------------------------------------------------------------- every result class, by walking the package
_RESULT_NAMES = ("Result", "Fit", "Evaluation", "Verification", "Comparison", "Assessment", "Summary")


def _is_frozen_dataclass(cls: type) -> bool:
    params = getattr(cls, "__dataclass_params__", None)
    return dataclasses.is_dataclass(cls) and params is not None and params.frozen


def _looks_like_result(cls: type) -> bool:
    if issubclass(cls, Result) and cls is not Result:
        return True
    if not _is_frozen_dataclass(cls):
        return False
    return hasattr(cls, "to_dict") or hasattr(cls, "summary") or cls.__name__.endswith(_RESULT_NAMES)


def _result_classes() -> dict[str, type]:
    found = {}
    for info in pkgutil.walk_packages(cellsafe.__path__, "cellsafe."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and _looks_like_result(cls):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def _protocol_gaps(cls: type) -> list[str]:
    gaps = [name for name in ("to_dict", "summary", "_repr_html_") if not callable(getattr(cls, name, None))]
    summary = getattr(cls, "summary", None)
    if callable(summary):
        returns = inspect.signature(summary).return_annotation
        if returns not in (str, "str"):
            gaps.append(f"summary() -> {returns!r} (must return str)")
    return gaps


def test_every_result_class_has_the_protocol():
    classes = _result_classes()
    # the walk finds what the table above builds
    assert {"cellsafe.fitting.glm.LogLinearFit", "cellsafe.metrics.specific.SpecificUtility"} <= set(classes)
    gaps = {name: g for name, cls in classes.items() if (g := _protocol_gaps(cls))}
    assert not gaps, f"result classes lacking part of the protocol: {gaps}"


def test_the_walk_catches_a_class_without_the_protocol():
    @dataclasses.dataclass(frozen=True)
    class BrokenResult:
        value: float

        def to_dict(self) -> dict:
            return {"value": self.value}

        def summary(self) -> dict:
            return self.to_dict()

    assert _looks_like_result(BrokenResult)
    gaps = _protocol_gaps(BrokenResult)
    assert "_repr_html_" in gaps and any("must return str" in g for g in gaps)


def test_json_ready_turns_numpy_into_python_and_infinities_into_none_on_request():
    from cellsafe._results import json_ready

    value = {"a": np.float64(np.inf), "b": [np.int64(3), float("nan"), -np.inf], 4: np.array([1.5, np.inf])}
    assert json_ready(value) == {"a": np.inf, "b": [3, None, -np.inf], "4": [1.5, np.inf]}
    assert json_ready(value, finite=True) == {"a": None, "b": [3, None, None], "4": [1.5, None]}
    assert type(json_ready(value)["b"][0]) is int
