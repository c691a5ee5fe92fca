"""MST and AIM on the risk-utility frontier beside the cell-wise DP mechanisms.

The privacy axis (epsilon or rho of one release under one neighbour relation) is defined for every DP
mechanism; 'marginal_tv(k)' for the marginal synthesizers only (apriori.marginal_error); the cell-wise
metrics (tau, MSE, Hellinger) for cell-wise mechanisms only.  A metric that does not apply is NaN with
the reason, never a number made up.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import cellsafe
from cellsafe import Domain
from cellsafe._privacy import cdp_rho
from cellsafe.apriori import marginal_error
from cellsafe.cli.main import main
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import make_mechanism
from cellsafe.tuning import frontier, tune

DOMAIN = {"sex": ["F", "M"], "region": ["N", "S", "E", "W"], "age": ["0-17", "18-64", "65+"], "job": list("abcde")}
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)


@pytest.fixture(scope="module")
def table() -> cellsafe.CountTable:
    rng = np.random.default_rng(0)
    n = 3000
    sex = rng.choice(["F", "M"], n)
    region = rng.choice(["N", "S", "E", "W"], n, p=[0.4, 0.3, 0.2, 0.1])
    age = np.where(rng.random(n) < 0.2, "0-17", np.where(rng.random(n) < 0.8, "18-64", "65+"))
    job = np.where(age == "0-17", "a", rng.choice(list("bcde"), n))
    t, _ = Domain(DOMAIN).table(pd.DataFrame({"sex": sex, "region": region, "age": age, "job": job}))
    return t


def _grid() -> list[str]:
    return [f"{m}:epsilon={e:g}" for m in ("mst", "aim", "geometric") for e in EPSILONS]


def test_mst_and_aim_on_the_epsilon_frontier_beside_geometric_noise(table):
    f = frontier(table, _grid(), risk="epsilon", utility="marginal_tv(2)")
    assert (f.risk, f.utility, f.relation) == ("epsilon", "marginal_tv(2)", "replace-one")
    pts = f.points.set_index("spec")
    for name in ("mst", "aim"):
        tv = []
        for e in EPSILONS:
            row = pts.loc[f"{name}:epsilon={e:g}"]
            expected = marginal_error(table, make_mechanism(f"{name}:epsilon={e:g}"), degrees=(2,)).tv(2)
            assert row["marginal_tv"] == expected  # the a priori error itself, at every point
            assert row["utility"] == 1.0 - expected and row["undefined"] == ""
            # the privacy axis: MST and AIM state (epsilon, 1e-9) and the CKS rho under replace-one
            assert row["risk"] == row["loss_epsilon"] == pytest.approx(e, rel=1e-9)
            assert (row["loss_delta"], row["loss_rho"]) == (1e-9, cdp_rho(e, 1e-9))
            tv.append(expected)
        assert all(b < a for a, b in zip(tv, tv[1:])), (name, tv)  # more budget, less error
    for e in EPSILONS:
        row = pts.loc[f"geometric:epsilon={e:g}"]
        # geometric noise is DP (epsilon doubled under replace-one), with no a priori marginal error
        assert row["loss_epsilon"] == row["risk"] == pytest.approx(2 * e) and row["loss_delta"] == 0
        assert math.isnan(row["utility"]) and math.isnan(row["marginal_tv"]) and not row["efficient"]
        assert "no a priori marginal error for the cell-wise geometric" in row["undefined"]
    eff = f.efficient
    assert len(eff) and set(eff["mechanism"]) <= {"mst", "aim"}
    assert list(f.undefined["mechanism"].unique()) == ["geometric"]


def test_the_relation_moves_the_privacy_columns(table):
    f = frontier(table, ["mst:epsilon=1,relation=add-remove", "geometric:epsilon=1"], risk="rho",
                 utility="marginal_tv(1)", relation="add-remove")
    pts = f.points.set_index("spec")
    assert pts.loc["geometric:epsilon=1", "loss_epsilon"] == 1.0 and f.relation == "add-remove"
    assert pts.loc["mst:epsilon=1,relation=add-remove", "risk"] == cdp_rho(1.0, 1e-9)
    # an add-remove release under replace-one neighbours: group privacy, four times rho
    f = frontier(table, ["mst:epsilon=1,relation=add-remove"], risk="rho", utility="marginal_tv(1)")
    assert f.points["risk"].iloc[0] == pytest.approx(4 * cdp_rho(1.0, 1e-9))


def test_cell_wise_metrics_of_a_marginal_synthesizer_are_undefined_not_invented(table):
    f = frontier(table, ["mst:epsilon=1", "aim:epsilon=1", "geometric:epsilon=1", "nbi:sigma=1"])
    pts = f.points.set_index("spec")
    for spec in ("mst:epsilon=1", "aim:epsilon=1"):
        row = pts.loc[spec]
        assert math.isnan(row["risk"]) and math.isnan(row["utility"]) and math.isnan(row["mse_per_cell"])
        assert not row["efficient"]
        assert row["undefined"].startswith("tau4(1) and mse are cell-wise metrics")
        assert "'marginal_tv(k)'" in row["undefined"] and row["loss_epsilon"] == 1.0  # the privacy loss is still there
    assert pts.loc["geometric:epsilon=1", "undefined"] == "" and np.isfinite(pts.loc["nbi:sigma=1", "risk"])
    assert math.isnan(pts.loc["nbi:sigma=1", "loss_epsilon"])  # saturated synthesis makes no DP statement
    f = frontier(table, ["mst:epsilon=1", "nbi:sigma=1"], risk="epsilon", utility="hellinger")
    assert "nbi makes no differential-privacy statement" in f.points.set_index("spec").loc["nbi:sigma=1", "undefined"]


def test_refusals(table):
    with pytest.raises(InvalidArgumentError, match="give the CountTable"):
        frontier(table.cell_sizes(), ["mst:epsilon=1"], risk="epsilon", utility="marginal_tv(2)")
    with pytest.raises(InvalidArgumentError, match="'epsilon' or 'rho'"):
        frontier(table, ["mst:epsilon=1"], risk="loss")
    with pytest.raises(InvalidArgumentError, match="marginal_tv"):
        frontier(table, ["mst:epsilon=1"], utility="tau4(1)")
    with pytest.raises(InvalidArgumentError, match="1-, 2- or 3-way"):
        frontier(table, ["mst:epsilon=1"], utility="marginal_tv(4)")


def test_the_plot_puts_settings_without_a_utility_at_its_foot(table):
    pytest.importorskip("matplotlib")
    from cellsafe.report import plot_frontier

    f = frontier(table, ["mst:epsilon=1", "aim:epsilon=1", "geometric:epsilon=1", "nbi:sigma=1"], risk="epsilon",
                 utility="marginal_tv(2)")
    ax = plot_frontier(f).axes[0]
    assert "utility undefined (foot)" in [c.get_label() for c in ax.collections]
    assert ax.get_xlabel().startswith("privacy loss: epsilon of one release, replace-one")
    assert "TV error of the 2-way marginals" in ax.get_ylabel()
    texts = [t.get_text() for t in ax.texts]
    assert "geometric:epsilon=1" in texts and any("not on these axes" in t and "nbi:sigma=1" in t for t in texts)


def test_the_command_line_frontier_takes_mst_and_aim(tmp_path, table, capsys):
    path = tmp_path / "t.csv"
    table.to_frame().to_csv(path, index=False)
    out, plot = tmp_path / "f.csv", tmp_path / "f.png"
    specs = ["mst:epsilon=0.3", "mst:epsilon=1", "aim:epsilon=0.3", "aim:epsilon=1", "geometric:epsilon=0.5"]
    assert main(["frontier", str(path), "--variables", "sex,region,age,job", "--count", "count", "--risk", "epsilon",
                 "--utility", "marginal_tv(2)", *(x for s in specs for x in ("--mechanism", s)), "--output", str(out),
                 "--plot", str(plot)]) == 0
    said = capsys.readouterr().out
    assert "5 settings" in said and "geometric:epsilon=0.5: marginal_tv(2) is the a priori error" in said
    pts = pd.read_csv(out).set_index("spec")
    assert pts.loc["mst:epsilon=1", "loss_epsilon"] == 1.0 and pts.loc["geometric:epsilon=0.5", "loss_epsilon"] == 1.0
    assert pts.loc["mst:epsilon=1", "marginal_tv"] < pts.loc["mst:epsilon=0.3", "marginal_tv"]
    assert plot.stat().st_size > 0


def test_tune_defaults_to_a_relative_tolerance_for_marginal_synthesizers(table):
    synth = cellsafe.MarginalSynthesizer(1.0)
    r = tune(table, synth, "epsilon", "marginal_tv(2)<=0.05")
    fine = tune(table, synth, "epsilon", "marginal_tv(2)<=0.05", xtol=1e-10)
    assert r.value == pytest.approx(fine.value, rel=2e-4) and r.n_evaluations <= fine.n_evaluations
