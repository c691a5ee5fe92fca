"""The report's frontier draws each candidate's neighbourhood by scaling its main tunable parameter."""

from __future__ import annotations

from cellsafe.mechanisms import make_mechanism
from cellsafe.report._report import _neighbourhood


def test_the_cell_key_method_varies_V_not_its_smallest_probability():
    spec = "ckm:D=5,V=3,js=2,min_probability=0.001"
    around = [make_mechanism(s) for s in _neighbourhood(spec)]
    assert around, "the neighbourhood is empty"
    for mech in around:
        params = mech.flat_params()
        assert params["V"] != 3 and params["min_probability"] == 0.001 and params["D"] == 5 and params["js"] == 2


def test_privacy_losses_and_dispersions_are_scaled():
    assert "geometric:epsilon=0.5" in _neighbourhood("geometric:epsilon=1")
    assert "nbi:sigma=2,alpha=0.01" in _neighbourhood("nbi:sigma=1,alpha=0.01")
    assert _neighbourhood("gaf:sigma=1") == []  # its moments are slow: the candidate alone
