"""Parameters that were called ``epsilon`` without being a privacy loss: the old name is refused with the new one."""

from __future__ import annotations

import pytest

from cellsafe.cli.main import main
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import CellKeyMagnitude, MagnitudePTable, PTable, make_mechanism


@pytest.mark.parametrize(
    "call, new",
    [
        (lambda: PTable.generate(D=2, V=1, epsilon=0.001), "min_probability"),
        (lambda: PTable.generate(D=2, V=1).with_params(epsilon=0.001), "min_probability"),
        (lambda: make_mechanism("ckm:D=2,V=1,epsilon=0.001"), "min_probability"),
        (lambda: make_mechanism("ckm:D=2,V=1").with_params(epsilon=0.001), "min_probability"),
        (lambda: MagnitudePTable.generate(D=2, V=1, epsilon=0.001), "min_probability"),
        (lambda: CellKeyMagnitude(MagnitudePTable.generate(D=2, V=1), fp=10, epsilon=(1,)), "flex_weights"),
    ],
)
def test_old_name_is_refused_with_the_new_one(call, new):
    with pytest.raises(InvalidArgumentError, match=f"'epsilon'.*called '{new}'.*privacy loss"):
        call()


def test_new_names_work():
    assert PTable.generate(D=2, V=1, min_probability=1e-3).params["min_probability"] == 1e-3
    pt = MagnitudePTable.generate(D=2, V=1)
    assert CellKeyMagnitude(pt, fp=10, top_k=2, flex_weights=(1, 0.5)).flex_weights == (1, 0.5)


def test_cli_option_renamed(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["publish", "x.csv", "--variables", "a", "--formula", "a", "--method", "ckm", "--value", "v",
              "--fp", "1", "--epsilon", "1", "--output", str(tmp_path / "o.csv")])
    assert exit_.value.code == 2
    assert "--epsilon is now called --flex-weights" in capsys.readouterr().err
