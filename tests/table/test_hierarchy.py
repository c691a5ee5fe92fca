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


# ---------------------------------------------------------------------- a root for the grand total; typos in parents
ROWS = [("Total", None), ("N", "Total"), ("S", "Total"), ("N1", "N"), ("N2", "N"), ("S1", "S")]


@pytest.mark.parametrize("rows", [ROWS, ROWS[1:], [("Total", ""), *ROWS[1:]]])
def test_a_total_root_row_is_the_grand_total(rows):
    h = Hierarchy.from_parent_child(pd.DataFrame(rows, columns=["code", "parent"]), level_names=["region"])
    assert h.levels == {"region": ("N", "S")}
    assert h.members("N") == ("N1", "N2")


def test_a_total_root_line_of_an_hrc_file_is_the_grand_total(tmp_path):
    p = tmp_path / "geo.hrc"
    p.write_text("Total\n@N\n@@N1\n@@N2\n@S\n@@S1\n")
    h = Hierarchy.read_hrc(p, level_names=["region"])
    assert h.levels == {"region": ("N", "S")} and h.members("S") == ("S1",)
    p.write_text("N\n@Total\n@N1\n")
    with pytest.raises(DataError, match="grand total 'Total' is 1 level"):
        Hierarchy.read_hrc(p)
    p.write_text("Total\n@N\n@@N1\n")
    assert list(Hierarchy.read_hrc(p, total=None).levels) == ["level1", "level2"]  # no code is the total


def test_a_parent_not_listed_is_refused_where_the_top_level_is_listed():
    rows = [("Total", None), ("North", "Total"), ("South", "Total"), ("n1", "North"), ("s1", "South")]
    with pytest.raises(DataError, match=r"names parent 'Suoth' \(of 's2'\), which is not one of its codes; did you mean 'South'\?"):
        Hierarchy.from_parent_child(rows + [("s2", "Suoth")])
    blank_top = [("North", ""), ("South", ""), ("n1", "North"), ("s1", "Nrth")]
    with pytest.raises(DataError, match="parent 'Nrth'.*did you mean 'North'"):
        Hierarchy.from_parent_child(blank_top)
    with pytest.raises(DataError, match="grand total 'Total' the parent 'North'"):
        Hierarchy.from_parent_child([("North", None), ("Total", "North"), ("n1", "North")])
    # without a listed top level, parents never listed are the top level (as before)
    h = Hierarchy.from_parent_child([("n1", "North"), ("n2", "North"), ("s1", "South")])
    assert h.levels == {"level1": ("North", "South")}


def test_from_positions_groups_shuffled_codes_in_order_of_first_appearance():
    import random

    codes = [f"{s}{c}{t:02d}" for s in "AB" for c in "xyz" for t in range(4)]
    random.Random(3).shuffle(codes)
    h = Hierarchy.from_positions(codes, {"state": 1, "county": 2})
    for name, width in [("state", 1), ("county", 2)]:
        expected = list(dict.fromkeys(c[:width] for c in codes))
        assert list(h.levels[name]) == expected
        for p in expected:
            assert h.groups[p] == tuple(i for i, c in enumerate(codes) if c[:width] == p)
