"""Every hint in a message is a command that works: the hint is read from the message and applied, and the command
then succeeds.

A message that says what to do ("pass --count Freq", "drop --count", "for example --sigma 1", "--target is now called
--sensitive", "add --overwrite") is parsed here, not copied: if its wording or its option drifts from what the
command accepts, the command run with the hint fails and so does this test.  ``evaluate`` once advised
``--count count`` for a synthetic file, which then failed on the original.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellsafe.cli.main import main

OPTION = r"--[A-Za-z][A-Za-z0-9-]*"
VALUE = r"[^\s;,()']+"


def _hint(message: str) -> list[tuple[str, list[str]]]:
    """The first hint in ``message`` as edits of a command line: ('add', tokens), ('drop', [option]) or
    ('rename', [old, new])."""
    patterns = [
        (rf"({OPTION}) is now called ({OPTION})", lambda m: [("rename", [m.group(1), m.group(2)])]),
        (rf"({OPTION})(?: {VALUE})? does not apply [^;]*; drop it", lambda m: [("drop", [m.group(1)])]),
        (rf"\bdrop ((?:{OPTION}(?:, )?)+)", lambda m: [("drop", [o]) for o in re.findall(OPTION, m.group(1))]),
        (rf"\b(?:pass|give|add) ({OPTION}(?: (?!to\b|if\b|or\b){VALUE})?)", lambda m: [("add", m.group(1).split())]),
        (rf"for example ({OPTION} {VALUE})", lambda m: [("add", m.group(1).split())]),
        (rf"ptable is ((?:{OPTION} {VALUE} ?)+)", lambda m: [("add", m.group(1).split())]),
    ]
    found = []
    for pattern, edits in patterns:
        hit = re.search(pattern, message)
        if hit:
            found.append((hit.start(), edits(hit)))
    return min(found)[1] if found else []


def _apply(argv: list[str], edits: list[tuple[str, list[str]]]) -> list[str]:
    out = list(argv)
    for kind, words in edits:
        if kind == "add":
            out += words
        elif kind == "rename":
            out = [words[1] if a == words[0] else a for a in out]
        else:
            i = out.index(words[0])
            takes_value = i + 1 < len(out) and not out[i + 1].startswith("--")
            del out[i : i + (2 if takes_value else 1)]
    return out


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    root = tmp_path_factory.mktemp("hints")
    gen = np.random.default_rng(3)
    people = pd.DataFrame({"sex": gen.choice(["F", "M"], 60), "age": gen.choice(["young", "mid", "old"], 60),
                           "turnover": gen.integers(1, 100, 60).astype(float), "n": gen.integers(1, 5, 60)})
    people.to_csv(root / "people.csv", index=False)
    freq = people.groupby(["sex", "age"]).size().rename("count").reset_index()
    freq.to_csv(root / "freq.csv", index=False)
    freq.rename(columns={"count": "Freq"}).to_csv(root / "freq_r.csv", index=False)
    (root / "exists.csv").write_text("x\n1\n")
    return root


CASES = [
    # a synthetic table with a column 'count': the note names the synthetic file's option
    ("evaluate {d}/people.csv {d}/freq.csv --variables sex,age", "add --synthetic-count count"),
    # a frequency table whose counts are in a column not called 'count'
    ("describe {d}/freq_r.csv --variables sex,age", "add --count Freq"),
    ("describe {d}/freq.csv --variables sex,age", "add --count count"),
    ("synthesize {d}/people.csv --variables sex,age --distribution nbi --seed 1 --quiet --output {d}/s1", "add --sigma 1"),
    ("assess {d}/people.csv --variables sex,age --distribution poisson --sigma 1", "drop --sigma"),
    ("assess {d}/people.csv --variables sex,age --mechanism nbi:sigma=1 --alpha 0.1", "drop --alpha"),
    ("publish {d}/people.csv --variables sex,age --formula sex*age --method ckm --seed 1 --quiet --output {d}/p1.csv",
     "add --D 5 --V 3 --js 2"),
    ("publish {d}/people.csv --variables sex,age --count n --formula sex*age --method suppress --value turnover "
     "--quiet --output {d}/p2.csv", "drop --count"),
    ("publish {d}/people.csv --variables sex,age --formula sex*age --method scr --seed 1 --quiet --output {d}/exists.csv",
     "add --overwrite"),
    ("evaluate-microdata {d}/people.csv {d}/people.csv --tables 1 --keys age --target sex --json",
     "rename --target --sensitive"),
    ("frontier {d}/freq.csv --variables sex,age --count count --families nbi --grid 3 --quiet --output {d}/f.csv",
     "rename --families --distributions"),
    ("report {d}/freq.csv --variables sex,age --count count --mechanism nbi:sigma=1 --no-frontier --no-hellinger "
     "--quiet --publication-formula sex*age --output {d}/r.html", "rename --publication-formula --formula"),
]


@pytest.mark.parametrize("command, expected", CASES, ids=[c[0].split()[0] + str(i) for i, c in enumerate(CASES)])
def test_every_hint_is_a_command_that_works(d, capsys, command, expected):
    argv = shlex.split(command.format(d=d))
    try:
        first = main(argv)
    except SystemExit as exc:  # argparse's own errors (a renamed option)
        first = exc.code
    message = " ".join(capsys.readouterr())
    edits = _hint(message)
    assert edits, f"no hint in: {message}"
    said = " ".join(f"{kind} {' '.join(words)}" for kind, words in edits)
    assert expected in said, f"{said!r} is not the hint {expected!r} in: {message}"
    fixed = _apply(argv, edits)
    again = main(fixed)
    after = " ".join(capsys.readouterr())
    assert again == 0, f"the hinted command {shlex.join(fixed)} failed: {after}"
    assert message.strip() not in after, "the same message again"
    if first == 0:  # a note, not an error: the hint silences it
        assert not _hint(after) or _hint(after) != edits


def test_hints_are_read_not_copied():
    assert _hint("x; drop --count.") == [("drop", ["--count"])]
    assert _hint("is Freq the count? pass --count Freq (each row...)") == [("add", ["--count", "Freq"])]
    assert _hint("'count' (give --count count to silence this note, or --count none ...)") == [("add", ["--count", "count"])]
    assert _apply(["a", "--count", "n", "--quiet"], [("drop", ["--count"])]) == ["a", "--quiet"]
    assert Path(__file__).name == "test_hints.py"
