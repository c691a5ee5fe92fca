"""Specs round-trip: ``make_mechanism(mechanism_spec(m)) == m`` for every registered mechanism and family.

Every parameter that differs from its declared default is written (a ptable's smallest probability
and monotonicity included: the spec of 'ckm:D=5,V=3,js=2,epsilon=0.01' used to come back without it,
so a manifest rebuilt another ptable).  What a spec cannot hold (a ptable read from a file, per-cell
arrays, a Publication object) is refused with a message naming it, never written incompletely.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cellsafe
from cellsafe._registry import registered
from cellsafe.exceptions import InvalidArgumentError
from cellsafe.mechanisms import (
    CellKeyMagnitude,
    CellKeyMethod,
    MagnitudePTable,
    PTable,
    make_mechanism,
    mechanism_spec,
    parse_spec,
)

# Settings away from the defaults wherever a parameter has one, for every registered name.
ROUND_TRIP = {
    "poisson": ["poisson:alpha=0.02", "poisson:zeros_to_ones=0.125"],
    "nbi": ["nbi:sigma=0.7,alpha=0.013"],
    "pig": ["pig:sigma=2.5"],
    "gaf": ["gaf:sigma=0.5,nu=-0.25,alpha=1e-05"],
    "saturated": ["nbi:sigma=1"],
    "loglinear": ["loglinear:margins=region*sex + sex*age,distribution=nbi,sigma=0.5,alpha=0.1,tol=1e-06,max_iter=50",
                  "loglinear:margins=a + b,distribution=poisson"],
    "ckm": ["ckm:D=5,V=3", "ckm:D=5,V=3,js=2,ncat=9,mono=false,min_probability=0.001,threshold=3",
            "ckm:D=4,V=2.2345678901,publication=party*age + party*sex"],
    "ckm-magnitude": ["ckm-magnitude:D=4,V=1.5,step=1,icat=(1,2,4),min_probability=1e-06,publication=nace*region,"
                      "fp=500,top_k=3,p_small=0.3,p_large=0.01,q=2,flex_weights=(1,0.5,0.2),mu_c=1,same_key=false,"
                      "use_zero_rkeys=true"],
    "scr": ["scr:publication=a*b + a*c", "scr:publication=a:b,base=5,max_iter_rows=10,max_iter=99"],
    "suppress": ["suppress:publication=a*b,rules=(freq<=3,p%=15),protect_zeros=true,secondary_zeros=true,"
                 "priority=value,intervals=false,singletons=true"],
    "dirichlet": ["dirichlet:alpha=2.5,max_cells=1000"],
    "poisson-gamma": ["poisson-gamma:a=2,b=0.05"],
    "poisson-gamma-multinomial": ["poisson-gamma-multinomial:a=2,b=0.05,max_cells=99"],
    "geometric": ["geometric:epsilon=0.7,sensitivity=2"],
    "discrete-gaussian": ["discrete-gaussian:sigma=1.5"],
    "mst": ["mst:epsilon=0.7", "mst:epsilon=2,delta=1e-06,relation=add-remove,compress=false"],
    "aim": ["aim:epsilon=1,rounds=20,max_cells=5000,degree=2"],
}


def test_every_registered_name_has_a_round_trip_case():
    names = set(registered("distribution")) | set(registered("mechanism"))
    assert not sorted(names - set(ROUND_TRIP)), "add a spec to ROUND_TRIP in tests/mechanisms/test_spec.py"


@pytest.mark.parametrize("spec", [s for specs in ROUND_TRIP.values() for s in specs])
def test_spec_round_trips(spec):
    mech = make_mechanism(spec)
    written = mechanism_spec(mech)
    again = make_mechanism(written)
    assert again == mech
    assert mechanism_spec(again) == written
    # every parameter given survives (the writer drops defaults only)
    _, given = parse_spec(spec)
    _, kept = parse_spec(written)
    for key, value in given.items():
        if key in ("distribution",) and parse_spec(spec)[0] != "loglinear":
            continue
        assert key in kept or _is_default(mech, key, value), f"{key} dropped from {written!r}"


def _is_default(mech, key, value) -> bool:
    decls = {}
    holders = [mech, *[v for v in mech.get_params().values() if hasattr(v, "param_declarations")]]
    for holder in holders:
        decls.update(type(holder).param_declarations())
    return key in decls and decls[key].default == value


def test_ptable_equality_and_hash():
    a = make_mechanism("ckm:D=5,V=3,js=2")
    b = CellKeyMethod(PTable.generate(D=5, V=3, js=2))
    assert a == b and a.ptable.sha256 == b.ptable.sha256
    c = CellKeyMethod(PTable.generate(D=5, V=3, js=2, min_probability=1e-3))
    assert c != a and c.ptable.sha256 != a.ptable.sha256


def test_what_a_spec_cannot_hold_is_refused_by_name(tmp_path):
    PTable.generate(D=2, V=1).write(tmp_path / "pt.csv")
    read = CellKeyMethod(PTable.read(tmp_path / "pt.csv"))
    with pytest.raises(InvalidArgumentError, match="ptable was read from a file"):
        mechanism_spec(read)
    per_cell = cellsafe.MultinomialDirichletSynthesizer(alpha=np.array([1.0, 2.0]))
    with pytest.raises(InvalidArgumentError, match="'alpha' parameter is a ndarray"):
        mechanism_spec(per_cell)
    frame = pd.DataFrame({"a": ["x"]})
    with pytest.raises(InvalidArgumentError, match="'forced' parameter is a DataFrame"):
        mechanism_spec(cellsafe.mechanisms.CellSuppression("a", forced=frame))
    t = cellsafe.CountTable([cellsafe.Variable("a", ["x", "y"])], [0], [3])
    pub = cellsafe.Publication.from_formula(t, "a")
    with pytest.raises(InvalidArgumentError, match="'publication' parameter is a Publication"):
        mechanism_spec(CellKeyMethod(PTable.generate(D=2, V=1), pub))
    with pytest.raises(InvalidArgumentError, match="built from arrays"):
        mechanism_spec(CellKeyMagnitude(MagnitudePTable([1, 1], [-1, 1], [0.5, 0.5]), fp=1.0))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("ckm:D=5,V=3,flex=1", "flex"),
        ("nbi:sigma=(1", "unclosed"),
        ("nbi:sigma=1)", "closes no"),
        ('ckm:D=5,V=3,publication="a*b', "unclosed quote"),
        ("loglinear:margins=a,distribution=zipf", "unknown distribution 'zipf'"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(InvalidArgumentError, match=message):
        make_mechanism(spec)
