"""``cellsafe dp-synthesize`` and ``cellsafe budget`` end to end; implicates written as drawn (memory flat in -m)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main


@pytest.fixture
def deaths_csv(tmp_path):
    df = pd.DataFrame(
        {
            "state": ["N", "N", "N", "S", "S"],
            "county": ["a", "b", "c", "d", "e"],
            "deaths": [4, 0, 7, 1, 3],
            "pop": [1000, 300, 2500, 800, 1200],
        }
    )
    path = tmp_path / "deaths.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def pop_csv(tmp_path):
    """Public populations of the five (state, county) cells: the support of the state x county synthesis."""
    path = tmp_path / "population.csv"
    pd.DataFrame({"state": ["N", "N", "N", "S", "S"], "county": ["a", "b", "c", "d", "e"],
                  "pop": [1000, 300, 2500, 800, 1200]}).to_csv(path, index=False)
    return path


@pytest.fixture
def geo_json(tmp_path):
    path = tmp_path / "geo.json"
    path.write_text(json.dumps({"state": ["N", "S"], "county": ["a", "b", "c", "d", "e"]}))
    return path


def test_poisson_gamma_with_population(tmp_path, deaths_csv, geo_json, capsys):
    out = tmp_path / "out"
    rc = main(
        ["dp-synthesize", str(deaths_csv), "--variables", "county", "--count", "deaths", "--population", "pop",
         "--domain", str(geo_json), "--mechanism", "poisson-gamma", "--epsilon", "2", "-m", "2", "--seed", "1", "--output", str(out)]
    )
    assert rc == 0
    assert "epsilon 1 per implicate, 2 in total" in capsys.readouterr().out
    for i in (1, 2):
        df = pd.read_csv(out / f"synthetic_{i}.csv")
        assert df["count"].sum() == 15
    meta = json.loads((out / "dp_synthesis.json").read_text())
    assert meta["epsilon_total"] == pytest.approx(2.0)
    assert meta["epsilon_per_implicate"] == pytest.approx(1.0)


def test_same_seed_same_output(tmp_path, deaths_csv, pop_csv, geo_json):
    args = ["dp-synthesize", str(deaths_csv), "--variables", "state,county", "--count", "deaths", "--population",
            "pop", "--population-file", str(pop_csv), "--domain", str(geo_json), "--mechanism", "poisson-gamma",
            "--epsilon", "3", "--seed", "5", "--quiet"]
    assert main(args + ["--output", str(tmp_path / "a")]) == 0
    assert main(args + ["--output", str(tmp_path / "b")]) == 0
    a = pd.read_csv(tmp_path / "a" / "synthetic_1.csv")
    b = pd.read_csv(tmp_path / "b" / "synthetic_1.csv")
    assert a.equals(b)


def _ledger_view(log):
    from cellsafe.dp import PrivacyAccountant

    return PrivacyAccountant.load(log, attach=False).to_dict()


def test_regional_prior_with_budget(tmp_path, deaths_csv, pop_csv, geo_json, capsys):
    log = tmp_path / "budget.json"
    assert main(["budget", str(log), "--create", "--epsilon", "3"]) == 0
    args = ["dp-synthesize", str(deaths_csv), "--variables", "state,county", "--count", "deaths", "--population",
            "pop", "--population-file", str(pop_csv), "--domain", str(geo_json), "--mechanism", "poisson-gamma",
            "--epsilon", "2", "--prior", "regional:state", "--prior-epsilon", "0.5", "--seed", "2", "--budget-log",
            str(log), "--quiet"]
    assert main(args + ["--output", str(tmp_path / "o1")]) == 0
    data = _ledger_view(log)
    assert data["spent"]["epsilon"] == pytest.approx(2.5)
    # a second release would exceed the budget: refused before anything is written
    rc = main(args + ["--output", str(tmp_path / "o2")])
    assert rc == 2
    assert "beyond the budget" in capsys.readouterr().err
    assert not (tmp_path / "o2" / "synthetic_1.csv").exists()
    capsys.readouterr()
    assert main(["budget", str(log)]) == 0
    shown = capsys.readouterr().out
    assert "spent    epsilon 2.5" in shown and "releases 1" in shown
    assert main(["budget", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["spent"]["epsilon"] == pytest.approx(2.5)


def test_multinomial_dirichlet_on_microdata(tmp_path):
    rng = np.random.default_rng(0)
    micro = pd.DataFrame({"sex": rng.choice(["F", "M"], 50), "age": rng.choice(["y", "m", "o"], 50)})
    micro.to_csv(tmp_path / "m.csv", index=False)
    (tmp_path / "d.csv").write_text("variable,category\nsex,F\nsex,M\nage,y\nage,m\nage,o\n")
    out = tmp_path / "o"
    rc = main(["dp-synthesize", str(tmp_path / "m.csv"), "--variables", "sex,age", "--domain", str(tmp_path / "d.csv"), "--mechanism",
               "multinomial-dirichlet", "--epsilon", "1", "--seed", "3", "--output", str(out), "--quiet",
               "--format", "parquet"])
    assert rc == 0
    assert pd.read_parquet(out / "synthetic_1.parquet")["count"].sum() == 50
    meta = json.loads((out / "dp_synthesis.json").read_text())
    assert meta["parameters"]["alpha"] == pytest.approx(50 / np.expm1(1.0))


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--epsilon", "0"], "--epsilon must be a finite positive number"),
        (["--epsilon", "inf"], "--epsilon must be a finite positive number"),
        (["--epsilon", "1", "--prior", "state"], "--prior must be"),
        (["--epsilon", "1", "--population", "nope"], "column 'nope' is not in"),
        (["--epsilon", "1", "-m", "0"], "-m must be"),
        (["--epsilon", "1", "--prior-epsilon", "0.5"], "--prior-epsilon and --prior-file apply to --prior regional"),
        (["--epsilon", "1", "--population", "pop", "--prior", "regional:state"], "outside any budget"),
        (["--epsilon", "1", "--part", "state=N"], "is not public"),
        (["--epsilon", "1", "--outside", "drop"], "how many records were left out"),
        (["--epsilon", "1", "--total-epsilon", "0.1"], "proven for a public total only"),
        (["--epsilon", "1", "--relation", "add-remove"], "under add-remove neighbours the number of records"),
    ],
)
def test_bad_input(tmp_path, deaths_csv, geo_json, capsys, extra, message):
    rc = main(["dp-synthesize", str(deaths_csv), "--variables", "county", "--count", "deaths", "--domain", str(geo_json), "--mechanism",
               "poisson-gamma", "--output", str(tmp_path / "o")] + extra)
    assert rc == 2
    assert message in capsys.readouterr().err


def test_budget_bad_input(tmp_path, capsys):
    assert main(["budget", str(tmp_path / "missing.json")]) == 2
    assert "no privacy budget log" in capsys.readouterr().err
    assert main(["budget", str(tmp_path / "b.json"), "--create"]) == 2
    assert "--epsilon" in capsys.readouterr().err


# ---------------------------------------------------------------------- the public domain
def _two_files(tmp_path):
    """Four records; the second file has the same people but one with a category nobody else has."""
    a = pd.DataFrame({"sex": ["F", "M", "F", "M"], "region": ["N", "N", "S", "S"]})
    b = a.copy()
    b.loc[3, "region"] = "Atlantis"
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    (tmp_path / "domain.json").write_text(json.dumps({"sex": ["F", "M"], "region": ["N", "S", "W"]}))


@pytest.mark.parametrize("mechanism", ["multinomial-dirichlet", "poisson-gamma"])
def test_a_unique_category_changes_nothing_but_the_counts(tmp_path, mechanism, capsys):
    _two_files(tmp_path)
    metas = {}
    for name, inside in (("a", 4), ("b", 3)):
        # the total of the records left in the domain is released with noise, or declared public
        total = ["--total-epsilon", "0.5"] if mechanism == "multinomial-dirichlet" else ["--public-total", str(inside)]
        for seed in range(8):
            out = tmp_path / f"out_{name}_{seed}"
            rc = main(["dp-synthesize", str(tmp_path / f"{name}.csv"), "--variables", "sex,region", "--domain",
                       str(tmp_path / "domain.json"), "--outside", "drop", *total, "--mechanism", mechanism,
                       "--epsilon", "1", "-m", "2", "--seed", str(seed), "--quiet", "--output", str(out)])
            assert rc == 0
            for f in out.glob("synthetic_*.csv"):
                assert "Atlantis" not in f.read_text()
            assert "Atlantis" not in (out / "dp_synthesis.json").read_text()
            assert "Atlantis" not in (out / "manifest.json").read_text()
            metas[name] = json.loads((out / "dp_synthesis.json").read_text())
    a, b = metas["a"], metas["b"]
    assert a.keys() == b.keys()
    assert a["cells"] == b["cells"] == 6 and a["domain_sha256"] == b["domain_sha256"]
    # by default a record outside the domain is an error, never a new category
    rc = main(["dp-synthesize", str(tmp_path / "b.csv"), "--variables", "sex,region", "--domain",
               str(tmp_path / "domain.json"), "--mechanism", mechanism, "--epsilon", "1", "--output",
               str(tmp_path / "refused")])
    assert rc == 2 and "'Atlantis' outside the public domain" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()


def test_without_a_domain_dp_synthesize_refuses_and_says_why(tmp_path, capsys):
    _two_files(tmp_path)
    rc = main(["dp-synthesize", str(tmp_path / "a.csv"), "--variables", "sex,region", "--mechanism",
               "multinomial-dirichlet", "--epsilon", "1", "--output", str(tmp_path / "o")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "needs --domain FILE" in err and "would disclose which ones occur" in err
    rc = main(["dp-synthesize", str(tmp_path / "a.csv"), "--variables", "sex,age", "--domain",
               str(tmp_path / "domain.json"), "--mechanism", "multinomial-dirichlet", "--epsilon", "1",
               "--output", str(tmp_path / "o")])
    assert rc == 2 and "'age' is not in the domain" in capsys.readouterr().err


def test_secure_by_default_and_a_warning_with_a_seed(tmp_path, capsys):
    _two_files(tmp_path)
    args = ["dp-synthesize", str(tmp_path / "a.csv"), "--variables", "sex,region", "--domain",
            str(tmp_path / "domain.json"), "--mechanism", "multinomial-dirichlet", "--epsilon", "1", "--quiet"]
    assert main(args + ["--output", str(tmp_path / "s")]) == 0
    assert "--seed" not in capsys.readouterr().err
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert "seed" not in manifest  # the public manifest; the custodian's record says how the seed was drawn
    custodian = json.loads((tmp_path / "s.custodian.json").read_text())
    assert "drawn securely" in custodian["seed"]
    assert manifest["details"]["domain"]["sha256"] == json.loads((tmp_path / "s" / "dp_synthesis.json").read_text())["domain_sha256"]
    assert main(args + ["--seed", "3", "--output", str(tmp_path / "r")]) == 0
    assert "reproducible: anyone who knows or guesses the seed" in capsys.readouterr().err


def test_population_is_checked_against_the_counts(tmp_path, geo_json, capsys):
    pd.DataFrame({"county": ["a", "b"], "deaths": [5000, 3]}).to_csv(tmp_path / "d.csv", index=False)
    pd.DataFrame({"county": list("abcde"), "pop": [1000, 300, 5, 5, 5]}).to_csv(tmp_path / "p.csv", index=False)
    rc = main(["dp-synthesize", str(tmp_path / "d.csv"), "--variables", "county", "--count", "deaths", "--population",
               "pop", "--population-file", str(tmp_path / "p.csv"), "--domain", str(geo_json), "--mechanism",
               "poisson-gamma", "--epsilon", "1", "--output", str(tmp_path / "o")])
    assert rc == 2
    assert "cell (county='a') has 5,000 events but a population of 1,000" in capsys.readouterr().err


def test_a_prior_heavier_than_the_data_is_announced_and_the_log_reads_well(tmp_path, capsys):
    _two_files(tmp_path)
    log = tmp_path / "budget.json"
    assert main(["budget", str(log), "--create", "--epsilon", "5"]) == 0
    rc = main(["dp-synthesize", str(tmp_path / "a.csv"), "--variables", "sex,region", "--domain",
               str(tmp_path / "domain.json"), "--mechanism", "multinomial-dirichlet", "--epsilon", "0.5",
               "--budget-log", str(log), "--quiet", "--output", str(tmp_path / "o")])
    assert rc == 0
    err = capsys.readouterr().err
    assert "the prior weighs" in err and "Hellinger utility of the expected release" in err
    [release] = _ledger_view(log)["releases"]
    assert release["label"].endswith("(1 implicate)") and release["mechanism"] == "multinomial-dirichlet"
    meta = json.loads((tmp_path / "o" / "dp_synthesis.json").read_text())
    assert meta["prior"] is None  # no 'national' prior for a mechanism without that option
    assert meta["ledger"] == {"ledger": _ledger_view(log)["ledger"], "release": 1,
                              "head": _ledger_view(log)["releases"][0]["head"]}


def test_parts_compose_in_parallel_only_with_public_sizes(tmp_path, capsys):
    _two_files(tmp_path)
    log = tmp_path / "budget.json"
    assert main(["budget", str(log), "--create", "--epsilon", "1.1"]) == 0
    base = ["dp-synthesize", str(tmp_path / "a.csv"), "--variables", "sex", "--domain", str(tmp_path / "domain.json"),
            "--mechanism", "multinomial-dirichlet", "--epsilon", "1", "--budget-log", str(log), "--quiet"]
    # declared public sizes (every record stays in its region): parallel, and the exact part total
    (tmp_path / "sizes.json").write_text(json.dumps({"N": 2, "S": 2, "W": 0}))
    for region in ("N", "S"):
        assert main(base + ["--part", f"region={region}", "--part-sizes", str(tmp_path / "sizes.json"), "--output",
                            str(tmp_path / f"o_{region}")]) == 0
        assert pd.read_csv(tmp_path / f"o_{region}" / "synthetic_1.csv")["count"].sum() == 2
        meta = json.loads((tmp_path / f"o_{region}" / "dp_synthesis.json").read_text())
        assert meta["part"]["composition"] == "parallel" and meta["total_policy"].startswith("declared public")
    data = _ledger_view(log)
    assert data["spent"]["epsilon"] == pytest.approx(1.0)
    assert [(r["part"], r["composition"]) for r in data["releases"]] == [("N", "parallel"), ("S", "parallel")]
    # a declared size that is not the true one is refused
    (tmp_path / "wrong.json").write_text(json.dumps({"N": 3, "S": 1, "W": 0}))
    assert main(base + ["--part", "region=N", "--part-sizes", str(tmp_path / "wrong.json"), "--output",
                        str(tmp_path / "o_wrong")]) == 2
    assert "not the 3 declared public" in capsys.readouterr().err
    # a noisy part total: charged in full (sequential); its total's 0.2 alone is beyond what is left
    assert main(base + ["--part", "region=W", "--total-epsilon", "0.2", "--output", str(tmp_path / "o_W")]) == 2
    assert "beyond the budget" in capsys.readouterr().err


def _cli_release(argv, barrier, results):
    barrier.wait()
    results.put(main(argv))


def test_twenty_concurrent_dp_synthesize_runs_against_a_budget_of_one(tmp_path):
    import multiprocessing as mp

    _two_files(tmp_path)
    log = tmp_path / "budget.json"
    assert main(["budget", str(log), "--create", "--epsilon", "1"]) == 0
    ctx = mp.get_context("fork")
    barrier, results = ctx.Barrier(20), ctx.Queue()
    procs = [
        ctx.Process(target=_cli_release, args=(
            ["dp-synthesize", str(tmp_path / "a.csv"), "--variables", "sex,region", "--domain",
             str(tmp_path / "domain.json"), "--mechanism", "multinomial-dirichlet", "--epsilon", "0.1",
             "--budget-log", str(log), "--quiet", "--output", str(tmp_path / f"o{i}")], barrier, results))
        for i in range(20)
    ]
    for p in procs:
        p.start()
    codes = [results.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert codes.count(0) == 10 and codes.count(2) == 10
    data = _ledger_view(log)
    assert len(data["releases"]) == 10 and data["spent"]["epsilon"] == pytest.approx(1.0)
    assert sum((tmp_path / f"o{i}" / "synthetic_1.csv").exists() for i in range(20)) == 10


def test_implicates_are_written_as_drawn(tmp_path, deaths_csv, geo_json, monkeypatch):
    from cellsafe.io import OutputSet
    from cellsafe.mechanisms import PoissonGammaSynthesizer
    from cellsafe.mechanisms._fixed_total import FixedTotalMechanism

    events = []
    drawn, written = PoissonGammaSynthesizer.implicates, OutputSet.write_frame

    def draw(self, *a, **k):
        for z in drawn(self, *a, **k):
            events.append("draw")
            yield z

    def write(self, frame, path, *a, **k):
        events.append("write")
        return written(self, frame, path, *a, **k)

    def refuse(*a, **k):
        raise AssertionError("dp-synthesize must not draw every implicate before writing")

    args = ["dp-synthesize", str(deaths_csv), "--variables", "county", "--count", "deaths", "--population", "pop",
            "--domain", str(geo_json), "--mechanism", "poisson-gamma", "--epsilon", "3", "-m", "3", "--seed", "5",
            "--quiet"]
    assert main(args + ["--output", str(tmp_path / "before")]) == 0
    monkeypatch.setattr(FixedTotalMechanism, "sample", refuse)
    monkeypatch.setattr(PoissonGammaSynthesizer, "implicates", draw)
    monkeypatch.setattr(OutputSet, "write_frame", write)
    assert main(args + ["--output", str(tmp_path / "after")]) == 0
    assert events == ["draw", "write"] * 3
    for i in (1, 2, 3):  # the same tables as an unpatched run
        assert (tmp_path / "after" / f"synthetic_{i}.csv").read_text() == (tmp_path / "before" / f"synthetic_{i}.csv").read_text()


def test_budget_command_creates_verifies_and_refuses_a_rolled_back_ledger(tmp_path, capsys):
    _two_files(tmp_path)
    log = tmp_path / "budget.jsonl"
    assert main(["budget", str(log), "--create", "--epsilon", "1", "--delta", "1e-9", "--accounting", "zcdp"]) == 0
    assert "rho 0.014973" in capsys.readouterr().out
    plain = tmp_path / "plain.jsonl"
    assert main(["budget", str(plain), "--create", "--epsilon", "2"]) == 0
    out = tmp_path / "o"
    assert main(["dp-synthesize", str(tmp_path / "a.csv"), "--variables", "sex,region", "--domain",
                 str(tmp_path / "domain.json"), "--mechanism", "multinomial-dirichlet", "--epsilon", "0.5",
                 "--budget-log", str(plain), "--quiet", "--output", str(out)]) == 0
    capsys.readouterr()
    assert main(["budget", str(plain), "--verify", str(out)]) == 0
    assert "release 1 of ledger" in capsys.readouterr().out
    # the last release cut from the log: refused, naming the line
    lines = plain.read_text().splitlines()
    plain.write_text("\n".join(lines[:-1]) + "\n")
    assert main(["budget", str(plain)]) == 2
    assert "was truncated" in capsys.readouterr().err


def test_marginal_synthesis_is_charged_to_a_zcdp_ledger(tmp_path, capsys):
    # the marginal synthesizers plug into dp-synthesize as a plan; their rho adds up in a zCDP ledger
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.choice(list("xy"), 300), "b": rng.choice(list("uvw"), 300),
                  "c": rng.choice(list("pq"), 300)}).to_csv(tmp_path / "r.csv", index=False)
    (tmp_path / "dom.json").write_text(json.dumps({"a": ["x", "y"], "b": ["u", "v", "w"], "c": ["p", "q"]}))
    log = tmp_path / "z.jsonl"
    assert main(["budget", str(log), "--create", "--epsilon", "1.3", "--delta", "1e-9", "--accounting", "zcdp"]) == 0
    args = ["dp-synthesize", str(tmp_path / "r.csv"), "--variables", "a,b,c", "--domain", str(tmp_path / "dom.json"),
            "--mechanism", "mst", "--epsilon", "1", "--budget-log", str(log), "--quiet"]
    assert main(args + ["--output", str(tmp_path / "o1")]) == 0
    view = _ledger_view(log)
    assert view["releases"][0]["rho"] == pytest.approx(0.0149731, rel=1e-5)
    meta = json.loads((tmp_path / "o1" / "dp_synthesis.json").read_text())
    assert meta["ledger"]["release"] == 1 and meta["relation"] == "replace-one"
    # a second epsilon-1 release would bring rho to 0.0299, beyond the budget 0.0247 (epsilon 1.3 at delta 1e-9)
    assert main(args + ["--output", str(tmp_path / "o2")]) == 2
    assert "beyond the budget rho" in capsys.readouterr().err
