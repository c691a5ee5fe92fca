"""cellsafe.Domain: public categories given by the caller; records outside refused or dropped, never added."""

import json

import pandas as pd
import pytest

from cellsafe import CountTable, Domain, Variable
from cellsafe.exceptions import DataError, InvalidArgumentError


def test_the_domain_fixes_the_categories_whatever_the_records():
    d = Domain([Variable("sex", ("F", "M")), Variable("region", ("N", "S", "W"))])
    records = pd.DataFrame({"sex": ["F", "F", "M"], "region": ["N", "N", "S"]})
    table, dropped = d.table(records)
    assert dropped == 0 and table.n_cells == 6 and int(table.total) == 3
    assert [v.categories for v in table.variables] == [("F", "M"), ("N", "S", "W")]
    d.check_table(table)
    with pytest.raises(DataError, match="not the domain's"):
        d.check_table(CountTable.from_frame(records, ["sex", "region"]))


def test_outside_records_are_an_error_or_dropped_never_added():
    d = Domain({"sex": ["F", "M"]})
    records = pd.DataFrame({"sex": ["F", "M", "X", None], "n": [2, 3, 4, 5]})
    with pytest.raises(DataError, match="'X' outside the public domain"):
        d.table(records, count="n")
    table, dropped = d.table(records, count="n", outside="drop")
    assert dropped == 9 and int(table.total) == 5 and table.variables[0].categories == ("F", "M")
    with pytest.raises(InvalidArgumentError, match="'outside'"):
        d.table(records, outside="add")


def test_numbers_read_as_text_match_their_spelling():
    d = Domain({"age": ["1", "2", "10"]})
    table, dropped = d.table(pd.DataFrame({"age": [1, 10, 10]}))
    assert dropped == 0 and table.dense().tolist() == [1, 0, 2]


def test_files_json_and_csv_give_the_same_domain_and_hash(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"sex": ["F", "M"], "age": [1, 2]}))
    (tmp_path / "d.csv").write_text("variable,category\nsex,F\nsex,M\nage,1\nage,2\n")
    a, b = Domain.read(tmp_path / "d.json"), Domain.read(tmp_path / "d.csv")
    assert a == b and a.sha256 == b.sha256 and len(a.sha256) == 64
    assert Domain({"sex": ["M", "F"], "age": ["1", "2"]}).sha256 != a.sha256  # the order is part of the domain
    assert a.select(["age"]).names == ["age"]


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("d.json", "[1, 2]", "JSON object"),
        ("d.json", '{"sex": []}', "non-empty list"),
        ("d.json", '{"sex": ["F", "F"]}', "twice"),
        ("d.json", '{"sex": [{"a": 1}]}', "not text or a number"),
        ("d.json", "{", "not valid JSON"),
        ("d.csv", "var,cat\nsex,F\n", "header 'variable,category'"),
        ("d.csv", "variable,category\nsex,F\nsex,F\n", "repeats"),
        ("d.csv", "variable,category\nsex\n", "a variable and a category"),
        ("d.txt", "sex,F", "must end in .json"),
    ],
)
def test_bad_domain_files(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises((DataError, InvalidArgumentError), match=message):
        Domain.read(tmp_path / name)


def test_a_variable_missing_from_the_domain_is_named():
    with pytest.raises(DataError, match="'age' is not in the domain"):
        Domain({"sex": ["F"]}).select(["age"])
