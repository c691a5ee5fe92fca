"""``cellsafe utility``: end to end on microdata and frequency tables, JSON, plot, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main
from cellsafe.metrics import specific_utility
from cellsafe.table import CountTable

REF = Path(__file__).resolve().parents[1] / "reference" / "loglinear"
MODEL = "(a + b + c + d)^2"


@pytest.fixture
def files(tmp_path):
    df = pd.read_csv(REF / "random4.csv")
    original = CountTable.from_frame(df, ["a", "b", "c", "d"], count="count")
    rng = np.random.default_rng(4)
    paths = []
    for i in range(2):
        syn = original.with_counts(original.index, rng.poisson(original.counts))
        p = tmp_path / f"synthetic_{i + 1}.csv"
        syn.to_frame().to_csv(p, index=False)
        paths.append(p)
    micro = tmp_path / "micro.csv"
    original.to_microdata(rng=1).to_csv(micro, index=False)
    freq = tmp_path / "freq.csv"
    df.rename(columns={"count": "n"}).to_csv(freq, index=False)
    return original, micro, freq, paths


def test_json_matches_the_api(files, capsys):
    original, micro, _, paths = files
    rc = main(
        [
            "utility",
            str(micro),
            *map(str, paths),
            "--variables",
            "a,b,c,d",
            "--synthetic-count",
            "count",
            "--model",
            MODEL,
            "--json",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    syn = [CountTable.from_frame(pd.read_csv(p), list(original.variables), count="count") for p in paths]
    res = specific_utility(original, syn, MODEL)
    assert out["overview"]["n_parameters"] == 46
    assert out["overview"]["m"] == 2
    assert out["overview"]["mean_overlap"] == pytest.approx(res.mean_overlap, rel=1e-12)
    assert [r["term"] for r in out["parameters"]] == list(res.to_frame().index)
    assert out["parameters"][0]["term"] == "(Intercept)"


def test_text_output_plot_and_csv(files, tmp_path, capsys):
    _, _, freq, paths = files
    png = tmp_path / "overlap.png"
    csv = tmp_path / "parameters.csv"
    rc = main(
        [
            "utility",
            str(freq),
            *map(str, paths),
            "--variables",
            "a,b,c,d",
            "--count",
            "n",
            "--synthetic-count",
            "count",
            "--model",
            MODEL,
            "--plot",
            str(png),
            "--output",
            str(csv),
            "--combining",
            "partially",
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "mean_overlap" in text and "smallest overlap" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    frame = pd.read_csv(csv)
    assert len(frame) == 46 and {"term", "overlap", "sso"} <= set(frame.columns)


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--model", "(a + b + e)^2"], "unknown variable 'e'"),
        (["--model", "a*"], "cannot parse formula"),
        (["--model", MODEL, "--combining", "partially", "--one"], "m >= 2"),
    ],
)
def test_bad_input(files, capsys, extra, match):
    _, micro, _, paths = files
    synth = [str(paths[0])] if "--one" in extra else [str(p) for p in paths]
    extra = [e for e in extra if e != "--one"]
    rc = main(["utility", str(micro), *synth, "--variables", "a,b,c,d", "--synthetic-count", "count", *extra])
    assert rc == 2
    assert match in capsys.readouterr().err


def test_synthetic_with_unknown_category(files, tmp_path, capsys):
    _, micro, _, paths = files
    df = pd.read_csv(paths[0])
    df.loc[0, "a"] = "a9"
    bad = tmp_path / "bad.csv"
    df.to_csv(bad, index=False)
    rc = main(
        ["utility", str(micro), str(bad), "--variables", "a,b,c,d", "--synthetic-count", "count", "--model", MODEL]
    )
    assert rc == 2
    assert "a9" in capsys.readouterr().err
