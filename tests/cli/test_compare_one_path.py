"""``cellsafe compare`` and ``metrics.compare_published`` are one code path: the same file, the same numbers.

The command built the publication with every empty combination of the variables, so a small count rounding
release (which writes the non-empty cells) had 'withheld' cells it never wrote: additive=False and a restored
total of 336775.9999998781 on nycflights13, where the library said True.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cellsafe import CountTable
from cellsafe.cli.main import main
from cellsafe.metrics import compare_published, release_publication

FORMULA = "a*b + a*c"


@pytest.fixture
def files(tmp_path):
    gen = np.random.default_rng(8)
    people = pd.DataFrame({"a": gen.choice(list("pqrs"), 300), "b": gen.choice(list("uvw"), 300, p=[0.6, 0.3, 0.1]),
                           "c": gen.choice(list("xyz"), 300)})
    people = people[~((people.a == "s") & (people.b == "w"))]  # an empty combination of a published crossing
    people.to_csv(tmp_path / "people.csv", index=False)
    for method, extra in (("scr", ["--base", "3"]), ("ckm", ["--D", "3", "--V", "1.5"])):
        assert main(["publish", str(tmp_path / "people.csv"), "--variables", "a,b,c", "--formula", FORMULA,
                     "--method", method, *extra, "--seed", "2", "--quiet", "--output", str(tmp_path / f"{method}.csv")]) == 0
    return tmp_path


def test_the_command_and_the_library_agree(files, capsys):
    capsys.readouterr()
    assert main(["compare", str(files / "people.csv"), "--variables", "a,b,c", "--formula", FORMULA,
                 "--published", f"scr={files / 'scr.csv'}", "--published", f"ckm={files / 'ckm.csv'}",
                 "--sensitive", "c", "--keys", "a,b", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    table = CountTable.from_microdata(str(files / "people.csv"), ["a", "b", "c"])
    for name in ("scr", "ckm"):
        frame = pd.read_csv(files / f"{name}.csv", keep_default_na=False, dtype=str)
        lib = json.loads(json.dumps(compare_published(table, frame, "c", ["a", "b"], formula=FORMULA).to_dict()))
        assert cli[name] == lib, name
    assert cli["scr"]["additive"] is True  # rounding is additive: no cell it never wrote counts as withheld
    restored = [r for r in cli["scr"]["restored"] if r["a"] == "Total" and r.get("b", "Total") == "Total"]
    assert all(float(r["count"]).is_integer() for r in restored)


def test_the_publication_a_file_holds(files):
    table = CountTable.from_microdata(str(files / "people.csv"), ["a", "b", "c"])
    scr = pd.read_csv(files / "scr.csv", keep_default_na=False, dtype=str)
    ckm = pd.read_csv(files / "ckm.csv", keep_default_na=False, dtype=str)
    assert release_publication(table, scr, FORMULA).n_published == len(scr)  # every cell of the frame, as written
    assert release_publication(table, ckm, FORMULA).n_published == len(ckm)  # the cell key method writes empty ones
    assert len(ckm) == len(scr)  # small count rounding lists its frame too (--list frame, the default)
