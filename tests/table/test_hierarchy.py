"""Hierarchy: every constructor gives the same aggregates; .hrc and SSB frames round-trip; bad input is refused."""

from __future__ import annotations

import pandas as pd
import pytest

from cellsafe import Hierarchy
from cellsafe.exceptions import DataError, InvalidArgumentError

# three-level geography: municipalities (leaves) < districts < regions
MUNICIPALITIES = ["0101", "0102", "0103", "0201", "0202", "0301"]
GEO = pd.DataFrame({
    "region": ["01", "01", "01", "01", "01", "03"],
    "district": ["0100", "0100", "0101x", "0200", "0200", "0300"],
    "municipality": MUNICIPALITIES,
})


def _expected_groups(h: Hierarchy) -> dict[str, tuple[str, ...]]:
    return {c: h.members(c) for c in h.codes}


def test_from_positions_matches_prefixes():
    h = Hierarchy.from_positions(MUNICIPALITIES, {"region": 2, "district": 3})
    assert h.levels == {"region": ("01", "02", "03"), "district": ("010", "020", "030")}
    assert h.members("01") == ("0101", "0102", "0103")
    assert h.members("030") == ("0301",)


def test_parent_child_levels_and_hrc_roundtrip(tmp_path):
    h = Hierarchy.from_levels(GEO, ["region", "district", "municipality"])
    assert h.members("01") == ("0101", "0102", "0103", "0201", "0202")
    pc = h.to_parent_child()
    h2 = Hierarchy.from_parent_child(pc, level_names=["region", "district"])
    assert _expected_groups(h2) == _expected_groups(h)
    path = h.write_hrc(tmp_path / "geo.hrc")
    text = path.read_text().splitlines()
    assert text[:3] == ["01", "@0100", "@@0101"]
    h3 = Hierarchy.read_hrc(path, level_names=["region", "district"])
    assert _expected_groups(h3) == _expected_groups(h)
    assert h3.levels == h.levels


def test_ssb_frame_roundtrip():
    h = Hierarchy.from_levels(GEO, ["region", "district", "municipality"])
    frame = h.to_ssb()
    assert set(frame.columns) == {"mapsFrom", "mapsTo", "sign", "level"}
    assert frame.loc[frame.mapsFrom == "01", "mapsTo"].item() == "Total"
    assert _expected_groups(Hierarchy.from_ssb(frame, level_names=["region", "district"])) == _expected_groups(h)


def test_groups_may_overlap_and_combine():
    a = Hierarchy.from_groups({"young": ["0-15", "16-24"], "working": ["16-24", "25-66"]}, ["0-15", "16-24", "25-66"], level="broad")
    b = Hierarchy.from_groups({"adult": ["16-24", "25-66"]}, ["0-15", "16-24", "25-66"], level="adult")
    c = Hierarchy.combine(a, b)
    assert list(c.levels) == ["broad", "adult"]
    assert c.membership("broad").toarray().tolist() == [[1, 0], [1, 1], [0, 1]]


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: Hierarchy.from_positions(["01", "0102"], {"district": 4}), DataError, "shorter than"),
        (lambda: Hierarchy.from_groups({"g": ["a", "zz"]}, ["a", "b"]), DataError, "not one of the leaves"),
        (lambda: Hierarchy.from_parent_child([("a", "b"), ("b", "a")]), DataError, "cycle"),
        (lambda: Hierarchy.from_parent_child([("a", None), ("b", "a")], level_names=["x", "y"]), InvalidArgumentError, "level name"),
        (lambda: Hierarchy.from_ssb(pd.DataFrame({"mapsFrom": ["a"], "mapsTo": ["T"], "sign": ["-"]})), DataError, "sign"),
        (lambda: Hierarchy.from_groups({"g": ["a"]}, ["a", "b"]).membership("g", ["a", "c"]), InvalidArgumentError, "no level"),
        (lambda: Hierarchy.from_groups({"g": ["a"]}, ["a", "b"], level="L").membership("L", ["a", "c"]), DataError, "not a leaf"),
    ],
)
def test_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_hrc_depth_jump_refused(tmp_path):
    p = tmp_path / "bad.hrc"
    p.write_text("01\n@@0101\n")
    with pytest.raises(DataError, match="more than one below"):
        Hierarchy.read_hrc(p)
