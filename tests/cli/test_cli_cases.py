"""The command line as a careless or hostile user meets it: one row per case.

Each row: a command line ({d} is the case's folder), the exit status, a fragment of what it prints
(standard output or error), files that must exist afterwards and files that must not.  The inputs
are small files written fresh for each case.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from cellsafe.cli.main import main

PEOPLE = "sex,age,answer\n" + "".join(
    f"{s},{a},{y}\n" for s, a, y in [("F", "10", "yes"), ("M", "2", "no"), ("F", "2", "yes"), ("M", "10", "no"),
                                     ("F", "10", "no"), ("M", "30", "yes"), ("F", "30", "yes"), ("M", "2", "yes")] * 4
)
FREQ = "sex,age,count\nF,10,5\nM,2,3\nF,2,1\nM,10,4\nF,30,2\nM,30,7\n"


def _files(d: Path) -> None:
    w = lambda name, text: (d / name).write_text(text)  # noqa: E731
    w("people.csv", PEOPLE)
    w("freq.csv", FREQ)
    w("dom.json", '{"sex": ["F", "M"], "age": ["2", "10", "30"]}')
    w("freqn.csv", FREQ.replace("count", "n"))
    w("tf.csv", "flag,x\nT,a\nF,b\nyes,a\nno,b\nTrue,a\n")
    w("nums.csv", "v,x\n1E1,a\n10,a\n0.5,b\n0.50,b\n2,a\n")
    w("nums2.csv", "v,x\n10,a\n10,a\n0.5,b\n0.5,b\n2,a\n")  # nums.csv with 1E1 -> 10 and 0.50 -> 0.5
    w("tf2.csv", "flag,x\nTrue,a\nFalse,b\nyes,a\nno,b\nTrue,a\n")  # tf.csv with T -> True and F -> False
    w("countvar.csv", "sex,count\nF,1\nM,2\nF,2\nM,3\n")
    w("data[1].csv", "sex,n\nF,1\n")
    w("data1.csv", "sex,n\nM,100\n")
    w("good1.csv", "sex,n\nF,1\n")
    w("good2.csv", "sex,n\nM,2\n")
    for name, value in [("nan", "nan"), ("inf", "inf"), ("big", str(2**63)), ("frac", "1.5"), ("neg", "-1"),
                        ("text", "many"), ("sci", "1e3"), ("empty", "")]:
        w(f"{name}.csv", f"sex,n\nF,1\nM,{value}\n")
    w("max.csv", f"sex,n\nF,{2**63 - 1}\n")
    w("over.csv", f"sex,n\nF,{2**63 - 1}\nM,1\n")
    w("exact.csv", f"sex,n\nF,{2**53 + 1}\nM,1\n")
    w("ragged.csv", "sex,age\n" + "F,1\n" * 25000 + "M,2,3\n")
    (d / "badbytes.csv").write_bytes(b"sex,age\n" + b"F,1\n" * 25000 + b"\xff\xfe,2\n")
    w("formula.csv", 'name,n\n"=HYPERLINK(""http://x"")",3\n+1,2\n@SUM,1\nplain,4\n')
    w("sz.csv", "sex\nF\n")
    w("nocols.csv", "")
    w("missing.csv", "sex,age\nF,\nM,2\n")
    w("sexnum.csv", "sex,age,count\nF,1,2\nM,1,3\n")
    pd.DataFrame({"sex": ["F", "M"], "age": [1, 2], "count": [3, 4]}).to_parquet(d / "freq.parquet")
    (d / "notparquet.parquet").write_text("this is not parquet")
    (d / "synth").mkdir()
    (d / "synth" / "synthetic_1.csv").write_text(FREQ)
    (d / "synth" / "synthetic_2.csv").write_text(FREQ.replace("5", "6"))
    (d / "full").mkdir()
    (d / "full" / "old.csv").write_text("x\n1\n")
    (d / "exists.csv").write_text("x\n1\n")
    w("domain.json", '{"sex": ["F", "M"], "age": ["2", "10", "30"]}')


SYN = "synthesize {d}/freq.csv --variables sex,age --distribution poisson --seed 1 --quiet"
PUB = "publish {d}/people.csv --variables sex,age --formula sex*age --seed 1 --quiet"

CASES = [
    # --- count columns: one rule across commands --------------------------------------------------
    ("count-taken-with-note", SYN + " --output {d}/o", 0, "reading it as a frequency table", ["o/synthetic_1.csv"], []),
    ("count-explicit-silent", SYN + " --count count --output {d}/o", 0, "", ["o/manifest.json"], []),
    ("count-among-variables", "synthesize {d}/freq.csv --variables sex,count --count count --distribution poisson --output {d}/o", 2, "either a variable or the count", [], ["o"]),
    ("count-missing-column", "synthesize {d}/freq.csv --variables sex --count n --distribution poisson --output {d}/o", 2, "not in", [], ["o"]),
    ("count-variable-named-count", "synthesize {d}/countvar.csv --variables sex,count --distribution poisson --seed 1 --output {d}/o", 0, "counts of the outputs are in the column 'n'", ["o/synthetic_1.csv"], []),
    ("assess-count-note", "assess {d}/freq.csv --variables sex,age --distribution poisson", 0, "reading it as a frequency table", [], []),
    ("assess-microdata", "assess {d}/people.csv --variables sex,age --distribution nbi --sigma 1", 0, "tau", [], []),
    ("evaluate-synthetic-count-default", "evaluate {d}/people.csv {d}/synth/synthetic_1.csv --variables sex,age", 0, "reading it as a frequency table", [], []),
    ("evaluate-synthetic-count-explicit", "evaluate {d}/people.csv {d}/synth/synthetic_1.csv --variables sex,age --synthetic-count count", 0, "tau", [], []),
    ("evaluate-no-manifest-no-note", "evaluate {d}/people.csv {d}/synth/synthetic_1.csv {d}/synth/synthetic_2.csv --variables sex,age --synthetic-count count", 0, "tau", [], []),
    ("utility-synthetic-count-default", "utility {d}/people.csv {d}/synth/synthetic_1.csv --variables sex,age --model sex+age", 0, "reading it as a frequency table", [], []),
    ("utility-count-among-variables", "utility {d}/freq.csv {d}/synth/synthetic_1.csv --variables sex,count --count count --model sex", 2, "either a variable or the count", [], []),
    ("publish-count-note", "publish {d}/freq.csv --variables sex,age --formula sex*age --method scr --seed 1 --output {d}/p.csv", 0, "reading it as a frequency table", ["p.csv"], []),
    ("expand-count-note", "expand {d}/freq.csv --variables sex,age --seed 1 --output {d}/r.csv", 0, "reading it as a frequency table", ["r.csv", "r.csv.manifest.json"], []),
    ("expand-explicit-count", "expand {d}/freqn.csv --variables sex,age --count n --seed 1 --output {d}/r.parquet", 0, "22 records", ["r.parquet"], []),
    ("synthesize-released-totals", SYN.replace(" --quiet", "") + " -m 2 --output {d}/o", 0, "released totals", ["o/synthetic_2.csv"], []),
    ("publish-released-total", PUB.replace(" --quiet", "") + " --method scr --output {d}/p.csv", 0, "released", ["p.csv"], []),
    ("expand-without-seed", "expand {d}/freqn.csv --variables sex,age --count n --output {d}/r.csv", 0, "22 records", ["r.csv", "r.csv.manifest.json"], []),
    ("tune-count-note", "tune {d}/freq.csv --variables sex,age --distribution nbi --solve sigma --target tau4(1)=0.4", 0, "reading it as a frequency table", [], []),
    ("describe-count-note", "describe {d}/freq.csv --variables sex,age", 0, "reading it as a frequency table", [], []),
    ("describe-count-explicit", "describe {d}/freqn.csv --variables sex,age --count n --json", 0, '"total": 22', [], []),
    ("describe-count-among-variables", "describe {d}/freq.csv --variables sex,count --count count", 2, "either a variable or the count", [], []),
    ("describe-variable-named-count", "describe {d}/countvar.csv --variables sex,count", 0, "a variable is named 'count'", [], []),
    ("describe-microdata", "describe {d}/people.csv --variables sex,age,answer --json", 0, '"total": 32', [], []),
    ("describe-tf-as-written", "describe {d}/tf.csv --variables flag --json", 0, '"nnz": 5', [], []),
    ("describe-numbers-as-written", "describe {d}/nums.csv --variables v --json", 0, '"nnz": 5', [], []),
    ("describe-glob-literal-bracket", "describe {d}/data[1].csv --variables sex --count n --json", 0, '"total": 1,', [], []),
    ("describe-glob-star-refused", "describe {d}/good*.csv --variables sex --count n", 2, "does not exist", [], []),
    ("describe-glob-explicit", "describe {d}/good*.csv --glob --variables sex --count n --json", 0, '"total": 3', [], []),
    ("describe-count-nan", "describe {d}/nan.csv --variables sex --count n", 2, "line 3", [], []),
    ("describe-ragged-row", "describe {d}/ragged.csv --variables sex,age", 2, "line 25002", [], []),
    # --- reading as written --------------------------------------------------------------------------
    ("tf-as-written", "expand {d}/tf.csv --variables flag --seed 1 --output {d}/r.csv", 0, "5 records", ["r.csv"], []),
    ("numbers-as-written", "expand {d}/nums.csv --variables v --seed 1 --output {d}/r.csv", 0, "5 cells", ["r.csv"], []),
    ("structural-zero-letter-F", SYN + " --count count --structural-zeros {d}/sz.csv --output {d}/o", 2, "structural", [], ["o"]),
    ("glob-literal-bracket", "expand {d}/data[1].csv --variables sex --count n --seed 1 --output {d}/r.csv", 0, "1 records", ["r.csv"], []),
    ("glob-star-refused", "expand {d}/good*.csv --variables sex --count n --seed 1 --output {d}/r.csv", 2, "does not exist", [], ["r.csv"]),
    ("glob-explicit", "expand {d}/good*.csv --glob --variables sex --count n --seed 1 --output {d}/r.csv", 0, "3 records", ["r.csv"], []),
    ("glob-explicit-no-match", "expand {d}/none*.csv --glob --variables sex --count n --output {d}/r.csv", 2, "no file matches", [], ["r.csv"]),
    ("count-nan", "assess {d}/nan.csv --variables sex --count n --distribution poisson", 2, "line 3", [], []),
    ("count-inf", "assess {d}/inf.csv --variables sex --count n --distribution poisson", 2, "not a finite number", [], []),
    ("count-beyond-int64", "assess {d}/big.csv --variables sex --count n --distribution poisson", 2, "2^63 - 1", [], []),
    ("count-int64-max", "expand {d}/max.csv --variables sex --count n --output {d}/r.csv", 2, "", [], ["r.csv"]),
    ("count-total-overflow", "assess {d}/over.csv --variables sex --count n --distribution poisson", 2, "largest total", [], []),
    ("count-exact-above-2^53", "assess {d}/exact.csv --variables sex --count n --distribution poisson --no-hellinger", 0, "tau", [], []),
    ("count-fraction", "assess {d}/frac.csv --variables sex --count n --distribution poisson", 2, "not a whole number", [], []),
    ("count-negative", "assess {d}/neg.csv --variables sex --count n --distribution poisson", 2, "negative", [], []),
    ("count-text", "assess {d}/text.csv --variables sex --count n --distribution poisson", 2, "not a number", [], []),
    ("count-scientific", "assess {d}/sci.csv --variables sex --count n --distribution poisson", 2, "plain whole number", [], []),
    ("count-empty", "assess {d}/empty.csv --variables sex --count n --distribution poisson", 2, "missing value", [], []),
    ("ragged-row", "assess {d}/ragged.csv --variables sex,age --distribution poisson", 2, "line 25002", [], []),
    ("bad-bytes", "assess {d}/badbytes.csv --variables sex,age --distribution poisson", 2, "not UTF-8", [], []),
    ("not-parquet", "assess {d}/notparquet.parquet --variables sex --distribution poisson", 2, "cannot read", [], []),
    ("empty-file", "assess {d}/nocols.csv --variables sex --distribution poisson", 2, "", [], []),
    ("missing-variable-value", "assess {d}/missing.csv --variables sex,age --distribution poisson", 2, "missing value", [], []),
    ("unknown-variable", "assess {d}/people.csv --variables sex,nope --distribution poisson", 2, "unknown variable", [], []),
    ("input-missing", "assess {d}/nope.csv --variables sex --distribution poisson", 2, "does not exist", [], []),
    ("input-folder", "assess {d}/synth --variables sex --distribution poisson", 2, "is a folder", [], []),
    ("input-unknown-format", "assess {d}/people.xlsx --variables sex --distribution poisson", 2, "does not exist", [], []),
    ("parquet-typed", "expand {d}/freq.parquet --variables sex,age --seed 1 --output {d}/r.csv", 0, "7 records", ["r.csv"], []),
    # --- outputs that never clobber ------------------------------------------------------------------
    ("publish-over-input", PUB + " --method scr --output {d}/people.csv", 2, "is the input", ["people.csv"], []),
    ("publish-xlsx-refused", PUB + " --method scr --output {d}/p.xlsx", 2, "must end in", [], ["p.xlsx"]),
    ("publish-json", PUB + " --method scr --output {d}/p.json", 0, "", ["p.json", "p.json.manifest.json"], []),
    ("publish-parquet", PUB + " --method ckm --D 5 --V 3 --js 2 --output {d}/p.parquet", 0, "", ["p.parquet", "p.parquet.manifest.json"], []),
    ("publish-existing-refused", PUB + " --method scr --output {d}/exists.csv", 2, "exists", ["exists.csv"], ["exists.csv.manifest.json"]),
    ("publish-existing-overwrite", PUB + " --method scr --overwrite --output {d}/exists.csv", 0, "", ["exists.csv.manifest.json"], []),
    ("publish-into-missing-folder", PUB + " --method scr --output {d}/new/deeper/p.csv", 0, "", ["new/deeper/p.csv"], []),
    ("publish-ckm", PUB.replace(" --quiet", "") + " --method ckm --D 5 --V 3 --js 2 --output {d}/p.csv", 0, "published cells", ["p.csv"], []),
    ("publish-scr", PUB.replace(" --quiet", "") + " --method scr --output {d}/p.csv", 0, "published cells", ["p.csv"], []),
    ("publish-escape-formulas", "publish {d}/formula.csv --variables name --count n --formula name --method scr --base 2 --escape-formulas --output {d}/p.csv", 0, "", ["p.csv"], []),
    ("publish-bad-method-option", PUB + " --method scr --D 3 --output {d}/p.csv", 2, "ckm only", [], ["p.csv", "p.csv.manifest.json"]),
    ("synthesize-into-input-folder", SYN + " --count count --output {d}", 2, "holds the input", ["freq.csv"], ["synthetic_1.csv"]),
    ("synthesize-nonempty-refused", SYN + " --count count --output {d}/full", 2, "not empty", ["full/old.csv"], ["full/synthetic_1.csv"]),
    ("synthesize-overwrite-replaces", SYN + " --count count --overwrite --output {d}/full", 0, "", ["full/synthetic_1.csv", "full/manifest.json"], ["full/old.csv"]),
    ("synthesize-output-is-file", SYN + " --count count --output {d}/exists.csv", 2, "not a folder", ["exists.csv"], []),
    ("synthesize-parquet", SYN + " --count count -m 2 --format parquet --output {d}/o", 0, "", ["o/synthetic_2.parquet"], ["o/synthetic_3.parquet"]),
    ("synthesize-m-zero", SYN + " --count count -m 0 --output {d}/o", 2, "'m' parameter", [], ["o"]),
    ("synthesize-bad-seed", SYN + " --count count --seed -1 --output {d}/o", 2, "--seed", [], ["o"]),
    ("synthesize-failed-leaves-nothing", "synthesize {d}/nan.csv --variables sex --count n --distribution poisson --output {d}/o", 2, "finite", [], ["o"]),
    ("frontier-over-input", "frontier {d}/freq.csv --variables sex,age --count count --distributions poisson --grid 3 --output {d}/freq.csv", 2, "is the input", ["freq.csv"], []),
    ("frontier-writes", "frontier {d}/freq.csv --variables sex,age --count count --distributions poisson,nbi --grid 3 --output {d}/f.csv", 0, "settings", ["f.csv", "f.csv.manifest.json"], []),
    ("frontier-plot-format", "frontier {d}/freq.csv --variables sex,age --count count --distributions nbi --grid 3 --output {d}/f.csv --plot {d}/f.gif", 2, ".png or .svg", [], ["f.csv"]),
    ("utility-output-over-input", "utility {d}/people.csv {d}/synth/synthetic_1.csv --variables sex,age --model sex+age --output {d}/people.csv", 2, "is the input", [], []),
    ("utility-output", "utility {d}/people.csv {d}/synth/synthetic_1.csv --variables sex,age --synthetic-count count --model sex+age --output {d}/u.csv", 0, "", ["u.csv", "u.csv.manifest.json"], []),
    ("expand-over-input", "expand {d}/freq.csv --variables sex,age --count count --output {d}/freq.csv", 2, "is the input", [], []),
    ("expand-unknown-format", "expand {d}/freq.csv --variables sex,age --count count --output {d}/r.txt", 2, "must end in", [], ["r.txt"]),
    ("dp-nonempty-refused", "dp-synthesize {d}/freq.csv --variables sex,age --count count --domain {d}/dom.json --domain {d}/domain.json --mechanism multinomial-dirichlet --epsilon 1 --output {d}/full", 2, "not empty", ["full/old.csv"], []),
    ("dp-needs-domain", "dp-synthesize {d}/freq.csv --variables sex,age --count count --mechanism multinomial-dirichlet --epsilon 1 --output {d}/nodom", 2, "needs --domain FILE", [], ["nodom"]),
    ("dp-writes-manifest", "dp-synthesize {d}/freq.csv --variables sex,age --count count --domain {d}/dom.json --domain {d}/domain.json --mechanism multinomial-dirichlet --epsilon 1 --seed 1 --output {d}/dp", 0, "", ["dp/synthetic_1.csv", "dp/manifest.json", "dp/dp_synthesis.json"], []),
    # --- parameters and errors -----------------------------------------------------------------------
    ("gaf-huge-nu", SYN + " --count count --distribution gaf --sigma 1 --nu 1e6 --output {d}/o", 2, "", [], ["o"]),
    ("sigma-huge", SYN.replace("poisson", "nbi --sigma 1e300") + " --count count --output {d}/o", 2, "'sigma' parameter of NBI must be a float in (0, 1e+12]. Got 1e+300 instead. Choose a smaller sigma", [], ["o"]),
    ("alpha-huge-synthesize", SYN + " --count count --alpha 1e300 --output {d}/o", 2, "'alpha' parameter of SaturatedSynthesizer must be a float in [0, 1e+06]. Got 1e+300 instead. alpha is the mean count", [], ["o"]),
    ("alpha-huge", "assess {d}/freq.csv --variables sex,age --count count --distribution poisson --alpha 1e300", 2, "'alpha' parameter of SaturatedSynthesizer must be a float in [0, 1e+06]", [], []),
    ("sigma-huge-assess", "assess {d}/freq.csv --variables sex,age --count count --distribution pig --sigma 1e300", 2, "'sigma' parameter of PIG must be a float in (0, 1e+12]", [], []),
    ("sigma-huge-tune", "tune {d}/freq.csv --variables sex,age --count count --distribution nbi --sigma 1e300 --solve alpha --target tau4(1)=0.4", 2, "'sigma' parameter of NBI must be a float in (0, 1e+12]", [], []),
    ("alpha-huge-tune", "tune {d}/freq.csv --variables sex,age --count count --distribution nbi --alpha 1e300 --solve sigma --target tau4(1)=0.4", 2, "'alpha' parameter of SaturatedSynthesizer must be a float in [0, 1e+06]", [], []),
    ("ckm-huge-D", PUB + " --method ckm --D 1000000000 --V 3 --output {d}/p.csv", 2, "'D' parameter of PTable.generate must be an int in [1, 100]. Got 1000000000 instead. Choose D of at most 100", [], ["p.csv", "p.csv.manifest.json"]),
    ("poisson-with-sigma", SYN + " --count count --sigma 1 --output {d}/o", 2, "does not apply", [], ["o"]),
    ("nbi-without-sigma", SYN.replace("poisson", "nbi") + " --count count --output {d}/o", 2, "needs --sigma", [], ["o"]),
    ("mechanism-and-distribution", "assess {d}/freq.csv --variables sex,age --count count --mechanism nbi:sigma=1 --sigma 1", 2, "drop", [], []),
    ("compare-runs", "compare {d}/people.csv --variables sex,age --formula sex*age --published a={d}/synth/synthetic_1.csv --sensitive sex --keys age", None, "", [], []),
    ("evaluate-microdata-table-refused", "evaluate-microdata {d}/people.csv {d}/freq.csv", 2, "frequency table", [], []),
    # categories as written: 1E1/10 and 0.50/0.5 (T/True, F/False) are different values, so the total variation is 0.4
    ("evaluate-microdata-number-like-categories", "evaluate-microdata {d}/nums.csv {d}/nums2.csv --tables 1 --json",
     0, '"v": 0.4', [], []),
    ("evaluate-microdata-true-false-as-written", "evaluate-microdata {d}/tf.csv {d}/tf2.csv --tables 1 --json",
     0, '"flag": 0.4', [], []),
    ("evaluate-microdata-numeric-not-a-number", "evaluate-microdata {d}/nums.csv {d}/nums2.csv --numeric x", 2,
     "nums.csv' is declared numeric but holds 'a' at line 2", [], []),
    ("evaluate-microdata-numeric-unknown-column", "evaluate-microdata {d}/nums.csv {d}/nums2.csv --numeric v,zz", 2,
     "numeric names 'zz', which is not a column of ORIGINAL", [], []),
    ("variables-empty-item", "assess {d}/people.csv --variables sex,,age --distribution poisson", 2, "comma-separated", [], []),
]


def _run(argv: str, d: Path, capsys) -> tuple[int, str]:
    rc = main(argv.format(d=d).split())
    out = capsys.readouterr()
    return rc, out.out + out.err


@pytest.mark.parametrize("name,argv,rc,fragment,exist,absent", CASES, ids=[c[0] for c in CASES])
def test_cli_case(tmp_path, capsys, name, argv, rc, fragment, exist, absent):
    _files(tmp_path)
    before = {p.name for p in tmp_path.iterdir()}
    code, text = _run(argv, tmp_path, capsys)
    if rc is not None:
        assert code == rc, text
    else:  # either a result or a one-line error, never a traceback
        assert code in (0, 2), text
        if code == 2:
            assert len(text.strip().splitlines()) == 1, text
    assert fragment in text
    if code == 2:
        assert "Traceback" not in text and text.strip(), text
        errors = [line for line in text.splitlines() if "error:" in line]
        assert len(errors) == 1 and fragment in errors[0], text  # one line says what and how to fix
    for f in exist:
        assert (tmp_path / f).exists(), f
    for f in absent:
        assert not (tmp_path / f).exists(), f
    # no hidden temporaries are left beside the outputs
    assert not [p for p in tmp_path.rglob(".*partial*")], "temporary outputs left behind"
    assert before <= {p.name for p in tmp_path.iterdir()}  # no input removed


def test_counts_above_2_53_are_exact(tmp_path):
    from cellsafe import CountTable

    _files(tmp_path)
    t = CountTable.from_microdata(tmp_path / "exact.csv", ["sex"], count="n")
    assert t.counts.tolist() == [2**53 + 1, 1] and t.total == 2**53 + 2


def test_categories_are_read_as_written(tmp_path):
    from cellsafe import CountTable

    _files(tmp_path)
    flags = CountTable.from_microdata(tmp_path / "tf.csv", ["flag"]).variables[0].categories
    assert set(flags) == {"T", "F", "yes", "no", "True"}
    values = CountTable.from_microdata(tmp_path / "nums.csv", ["v"]).variables[0].categories
    assert list(values) == ["0.5", "0.50", "2", "10", "1E1"]  # natural order: numbers by value, ties as written


def test_variable_named_count_keeps_its_values(tmp_path, capsys):
    _files(tmp_path)
    assert main(["expand", str(tmp_path / "countvar.csv"), "--variables", "sex,count", "--seed", "1",
                 "--output", str(tmp_path / "r.csv")]) == 0
    records = pd.read_csv(tmp_path / "r.csv", dtype=str)
    assert sorted(records["count"]) == ["1", "2", "2", "3"]


def test_manifest_records_the_run(tmp_path, capsys):
    _files(tmp_path)
    rc = main(["synthesize", str(tmp_path / "freq.csv"), "--variables", "sex,age", "--count", "count",
               "--distribution", "nbi", "--sigma", "0.5", "--alpha", "0.01", "-m", "2", "--seed", "9",
               "--output", str(tmp_path / "m")])
    assert rc == 0
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["seed"] == 9 and manifest["command"] == "synthesize"
    assert manifest["mechanism"]["parameters"]["alpha"] == 0.01
    assert manifest["mechanism"]["parameters"]["distribution"]["parameters"]["sigma"] == 0.5
    assert [o["file"] for o in manifest["outputs"]] == ["synthetic_1.csv", "synthetic_2.csv"]
    assert manifest["inputs"][0]["path"].endswith("freq.csv") and len(manifest["inputs"][0]["sha256"]) == 64
    assert manifest["started"] <= manifest["finished"]
    mode = (tmp_path / "m" / "synthetic_1.csv").stat().st_mode & 0o777
    assert mode == 0o666 & ~_umask()
    # evaluate notes that the files come from two different runs
    rc = main(["synthesize", str(tmp_path / "freq.csv"), "--variables", "sex,age", "--count", "count",
               "--distribution", "poisson", "--seed", "1", "--output", str(tmp_path / "m2"), "--quiet"])
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "freq.csv"), str(tmp_path / "m" / "synthetic_1.csv"),
                 str(tmp_path / "m2" / "synthetic_1.csv"), "--variables", "sex,age", "--count", "count",
                 "--synthetic-count", "count"]) == 0
    assert "2 different runs" in capsys.readouterr().err


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_escaped_formulas(tmp_path, capsys):
    _files(tmp_path)
    assert main(["publish", str(tmp_path / "formula.csv"), "--variables", "name", "--count", "n", "--formula", "name",
                 "--method", "scr", "--base", "2", "--seed", "1", "--escape-formulas", "--output",
                 str(tmp_path / "p.csv")]) == 0
    names = pd.read_csv(tmp_path / "p.csv", dtype=str)["name"].tolist()
    assert "'=HYPERLINK(\"http://x\")" in names and "'+1" in names and "'@SUM" in names and "plain" in names


def test_published_counts_are_integers_with_table_id(tmp_path, capsys):
    _files(tmp_path)
    assert main((PUB + " --method ckm --D 5 --V 3 --js 2 --output {d}/p.parquet").format(d=tmp_path).split()) == 0
    df = pd.read_parquet(tmp_path / "p.parquet")
    assert str(df["count"].dtype) == "Int64"
    assert set(df["table"]) == {"Total", "sex", "age", "sex:age"}


def test_missing_optional_dependency_names_the_extra(tmp_path, capsys, monkeypatch):
    import sys

    _files(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    rc = main(["frontier", str(tmp_path / "freq.csv"), "--variables", "sex,age", "--count", "count", "--distributions",
               "nbi", "--grid", "3", "--output", str(tmp_path / "f.csv"), "--plot", str(tmp_path / "f.png")])
    err = capsys.readouterr().err
    assert rc == 2 and "pip install 'cellsafe[plot]'" in err
    assert not (tmp_path / "f.csv").exists() and not list(tmp_path.glob(".*partial*"))


def test_implicates_one_at_a_time_equal_one_call():
    import cellsafe

    t = cellsafe.CountTable.from_frame(pd.read_csv(__import__("io").StringIO(FREQ), dtype=str), ["sex", "age"], count="count")
    synth = cellsafe.SaturatedSynthesizer(cellsafe.NBI(sigma=1.0), alpha=0.1)
    together = synth.sample(t, m=5, rng=3)
    one_by_one = list(synth.implicates(t, 5, rng=3))
    alone = [next(synth.implicates(t, 1, rng=3, first=i)) for i in range(5)]
    assert all(a.equals(b) and a.equals(c) for a, b, c in zip(together, one_by_one, alone))


@pytest.mark.slow
def test_synthesize_memory_flat_in_m(tmp_path, capsys):
    """Implicates are written as drawn: the peak of traced memory does not grow with m."""
    import tracemalloc

    _files(tmp_path)

    def peak(m: int) -> int:
        tracemalloc.start()
        rc = main(["synthesize", str(tmp_path / "freq.csv"), "--variables", "sex,age", "--count", "count",
                   "--distribution", "nbi", "--sigma", "1", "--alpha", "0.5", "-m", str(m), "--seed", "1",
                   "--quiet", "--output", str(tmp_path / f"m{m}")])
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert rc == 0
        return top

    small, large = peak(10), peak(1000)
    assert (tmp_path / "m1000" / "synthetic_1000.csv").exists()
    assert large < 1.5 * small + 2**20, (small, large)
