"""``cellsafe synthesize``: end to end, bad input, atomic output."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from cellsafe import CountTable
from cellsafe.cli.main import main


@pytest.fixture
def freq_csv(tmp_path):
    df = pd.DataFrame(
        {"area": ["A", "A", "B", "B", "C"], "sex": ["F", "M", "F", "M", "F"], "n": [5, 1, 0, 12, 3]}
    )
    path = tmp_path / "table.csv"
    df.to_csv(path, index=False)
    return path


def test_synthesize_writes_m_tables(tmp_path, freq_csv, capsys):
    out = tmp_path / "out"
    rc = main(
        [
            "synthesize", str(freq_csv), "--variables", "area,sex", "--count", "n", "--distribution", "nbi",
            "--sigma", "0.5", "-m", "3", "--seed", "1", "--output", str(out), "--quiet",
        ]
    )
    assert rc == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == ["manifest.json", "synthetic_1.csv", "synthetic_2.csv", "synthetic_3.csv"]
    df = pd.read_csv(out / "synthetic_1.csv")
    assert list(df.columns) == ["area", "sex", "count"]
    assert (df["count"] > 0).all()


def test_same_seed_same_files_and_parquet(tmp_path, freq_csv):
    args = ["synthesize", str(freq_csv), "--variables", "area,sex", "--count", "n", "--distribution", "poisson",
            "--alpha", "0.5", "--seed", "4", "--quiet"]
    assert main(args + ["--output", str(tmp_path / "a")]) == 0
    assert main(args + ["--output", str(tmp_path / "b"), "--format", "parquet"]) == 0
    a = pd.read_csv(tmp_path / "a" / "synthetic_1.csv")
    b = pd.read_parquet(tmp_path / "b" / "synthetic_1.parquet")
    assert a["count"].tolist() == b["count"].tolist()


def test_microdata_input_and_structural_zeros(tmp_path):
    micro = pd.DataFrame({"a": ["x", "x", "y", "z"], "b": ["p", "q", "p", "q"]})
    micro.to_csv(tmp_path / "m.csv", index=False)
    pd.DataFrame({"a": ["y"], "b": ["q"]}).to_csv(tmp_path / "sz.csv", index=False)
    out = tmp_path / "o"
    rc = main(["synthesize", str(tmp_path / "m.csv"), "--variables", "a,b", "--distribution", "poisson",
               "--alpha", "5", "--structural-zeros", str(tmp_path / "sz.csv"), "--seed", "2", "--output", str(out),
               "--quiet", "-m", "5"])
    assert rc == 0
    for i in range(1, 6):
        df = pd.read_csv(out / f"synthetic_{i}.csv")
        assert not ((df.a == "y") & (df.b == "q")).any()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--variables", "area,age", "--distribution", "poisson"], "unknown variable 'age'"),
        (["--variables", "area,sex", "--distribution", "nbi"], "needs --sigma"),
        (["--variables", "area,sex", "--distribution", "nbi", "--sigma", "-1"], "'sigma' parameter"),
        (["--variables", "area,sex", "--distribution", "poisson", "--alpha", "-2"], "'alpha' parameter"),
        (["--variables", "area,sex", "--distribution", "poisson", "--zeros-to-ones", "2"], "'zeros_to_ones'"),
        (["--variables", "area,sex", "--distribution", "poisson", "-m", "0"], "'m' parameter"),
    ],
)
def test_bad_input_exits_2_with_message(tmp_path, freq_csv, capsys, extra, message):
    out = tmp_path / "out"
    rc = main(["synthesize", str(freq_csv), "--count", "n", "--output", str(out), "--quiet", *extra])
    assert rc == 2
    assert message in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def test_unknown_distribution_is_an_argparse_error(freq_csv, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["synthesize", str(freq_csv), "--variables", "area", "--distribution", "zip", "--output", str(tmp_path)])
    assert exc.value.code == 2


def test_bad_counts_and_empty_input(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,n\nx,3\ny,-1\n")
    assert main(["synthesize", str(bad), "--variables", "a", "--count", "n", "--distribution", "poisson",
                 "--output", str(tmp_path / "o")]) == 2
    assert "invalid value" in capsys.readouterr().err
    empty = tmp_path / "empty.csv"
    empty.write_text("a,n\n")
    assert main(["synthesize", str(empty), "--variables", "a", "--count", "n", "--distribution", "poisson",
                 "--output", str(tmp_path / "o")]) == 2
    assert "no rows" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output(tmp_path, freq_csv, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    rc = main(["synthesize", str(freq_csv), "--variables", "area", "--count", "n", "--distribution", "poisson",
               "--output", str(locked / "sub")])
    assert rc == 2


def test_output_that_is_a_file(tmp_path, freq_csv, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    rc = main(["synthesize", str(freq_csv), "--variables", "area", "--count", "n", "--distribution", "poisson",
               "--output", str(f)])
    assert rc == 2
    err = capsys.readouterr().err
    assert "not a folder" in err or "cannot create" in err


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["synthesize", "--help"])
    assert exc.value.code == 0
    assert "examples:" in capsys.readouterr().out


def test_input_file_is_not_modified(tmp_path, freq_csv):
    before = freq_csv.read_bytes()
    main(["synthesize", str(freq_csv), "--variables", "area,sex", "--count", "n", "--distribution", "poisson",
          "--output", str(tmp_path / "o"), "--quiet"])
    assert freq_csv.read_bytes() == before
    assert CountTable.from_microdata(freq_csv, ["area", "sex"], count="n").total == 21


@pytest.mark.parametrize("escape", [False, True])
def test_csv_written_from_coded_cells_is_the_frames_csv(tmp_path, escape):
    """Categories as text, integers and formulas: the bytes to_frame().to_csv writes (neutralised with --escape-formulas)."""
    from cellsafe.io import neutralise_formulas
    from cellsafe.mechanisms import SaturatedSynthesizer
    from cellsafe.distributions import Poisson

    df = pd.DataFrame({"t": ["=1+1", "a,b", 'say "x"', "-3", "x"] * 4, "n": [1, 2, 3, 4] * 5, "c": range(20)})
    df.to_parquet(tmp_path / "m.parquet", index=False)
    out = tmp_path / "o"
    argv = ["synthesize", str(tmp_path / "m.parquet"), "--variables", "t,n", "--count", "c", "--distribution",
            "poisson", "--seed", "3", "-m", "2", "--output", str(out), "--quiet"]
    assert main(argv + (["--escape-formulas"] if escape else [])) == 0
    table = CountTable.from_microdata(tmp_path / "m.parquet", ["t", "n"], count="c")
    for i, syn in enumerate(SaturatedSynthesizer(Poisson()).implicates(table, 2, rng=3), start=1):
        frame = syn.to_frame()
        expected = tmp_path / f"e{i}.csv"
        (neutralise_formulas(frame) if escape else frame).to_csv(expected, index=False)
        assert (out / f"synthetic_{i}.csv").read_bytes() == expected.read_bytes()
