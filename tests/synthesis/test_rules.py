"""Rules every synthetic record obeys, and category pairs never seen together."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from cellsafe import SequentialSynthesizer
from cellsafe.exceptions import CellsafeWarning, DataError, InvalidArgumentError
from cellsafe.synthesis import check_rules, parse_rule, read_rules

from _survey_like import survey_like

RULES = {
    "Smoke": "Age < 18 -> 'Never'",
    "M.I": "Height == NA -> NA",
    "Exer": "Age >= 30 and Sex == 'Male' -> Exer in ('Freq', 'Some')",
    "Pulse": "Exer == 'Freq' -> Pulse <= 90",
}
VISIT = ["Sex", "Age", "Height", "M.I", "Exer", "Pulse", "Smoke"]


def _broken(frame: pd.DataFrame) -> int:
    return sum(c["broken"] for c in check_rules(frame, RULES))


def test_a_rule_on_survey_like_data_is_never_broken_in_100_implicates():
    data = survey_like()
    with pytest.warns(CellsafeWarning, match=r"the original breaks the rule \"Smoke: Age < 18 -> 'Never'\""):
        synth = SequentialSynthesizer(visit_sequence=VISIT, rules=RULES).fit(data)
    checks = {c["rule"]: c for c in synth.rule_checks_}
    assert checks["Smoke: Age < 18 -> 'Never'"]["broken"] > 0  # the original breaks it: reported
    assert checks["M.I: Height == NA -> NA"]["broken"] == 0
    implicates = synth.sample(m=100, rng=21)
    assert sum(_broken(s) for s in implicates) == 0
    young = pd.concat([s[s["Age"] < 18] for s in implicates])
    assert len(young) > 1000 and (young["Smoke"] == "Never").all()
    # a restricting rule keeps the model's draw where it can: Pulse above 90 still occurs for others
    assert any((s["Pulse"] > 90).any() for s in implicates)


@pytest.mark.slow
def test_a_fixing_rule_leaves_its_records_out_of_the_model():
    data = survey_like()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SequentialSynthesizer(visit_sequence=VISIT, rules={"Smoke": "Age < 18 -> 'Never'"}, methods={"Smoke": "multinomial"}).fit(data)
    # the model of Smoke is fitted on the records aged 18 and over only
    fitted_on = synth.models_["Smoke"]
    assert fitted_on is not None
    for s in synth.sample(m=5, rng=3):
        assert (s.loc[s["Age"] < 18, "Smoke"] == "Never").all()


def test_pairs_never_seen_are_never_drawn_together_unless_allowed():
    g = np.random.default_rng(4)
    n = 600
    sex = g.choice(["F", "M"], size=n)
    pregnant = np.where(sex == "M", "no", g.choice(["no", "yes"], size=n, p=[0.8, 0.2]))
    region = g.choice(["a", "b", "c"], size=n)
    data = pd.DataFrame({"region": region, "sex": sex, "pregnant": pregnant})
    # sampled independently of sex, pregnant would pair 'M' with 'yes' in about 1 record in 20
    free = SequentialSynthesizer(methods="sample", structural_zeros=False).fit(data).sample(m=5, rng=1)
    assert sum(((s["sex"] == "M") & (s["pregnant"] == "yes")).sum() for s in free) > 20
    kept = SequentialSynthesizer(methods="sample").fit(data).sample(m=20, rng=1)
    assert sum(((s["sex"] == "M") & (s["pregnant"] == "yes")).sum() for s in kept) == 0
    # 'sample' ignores sex: women draw from pregnant's marginal as before, only men's draws are restricted
    share = np.mean([(s.loc[s["sex"] == "F", "pregnant"] == "yes").mean() for s in kept])
    assert abs(share - (data["pregnant"] == "yes").mean()) < 0.02
    allowed = SequentialSynthesizer(methods="sample", allow=[{"sex": "M", "pregnant": "yes"}]).fit(data).sample(m=5, rng=1)
    assert sum(((s["sex"] == "M") & (s["pregnant"] == "yes")).sum() for s in allowed) > 20


@pytest.mark.parametrize(
    "target, text, error, match",
    [
        ("m", "age < 16 'single'", InvalidArgumentError, "expected '->'"),
        ("m", "age = 16 -> 'single'", InvalidArgumentError, "write '=='"),
        ("m", "m == 'x' -> 'single'", InvalidArgumentError, "names 'm' itself"),
        ("m", "age < 16 -> age", InvalidArgumentError, "must be a value or a comparison"),
        ("m", "age < 16 -> other == 1", InvalidArgumentError, "does not name 'm'"),
        ("m", "age < -> 1", InvalidArgumentError, "expected a column"),
        ("m", "age in 1, 2 -> 1", InvalidArgumentError, "expected '\\(' after 'in'"),
        ("m", "__import__('os') -> 1", InvalidArgumentError, "expected '->'"),
        ("m", "age < 16 -> 'single' extra", InvalidArgumentError, "expected the end"),
    ],
)
def test_bad_rules_are_refused_with_where_and_what(target, text, error, match):
    with pytest.raises(error, match=match):
        parse_rule(target, text)


def test_rules_are_checked_against_the_data():
    data = survey_like()
    for rules, match in (
        ({"Smoke": "Age < 18 -> 'Nevr'"}, "'Nevr' is not a category of 'Smoke'"),
        ({"Smoke": "Agee < 18 -> 'Never'"}, "unknown column 'Agee'"),
        ({"Smoke": "Exer < 3 -> 'Never'"}, "compare it with ==, != or in"),
        ({"Age": "Smoke == 'Never' -> 20"}, "not synthesized before 'Age'"),
    ):
        with pytest.raises((DataError, InvalidArgumentError), match=match):
            SequentialSynthesizer(visit_sequence=VISIT, rules=rules).fit(data)


def test_rules_file_text_and_json(tmp_path):
    text = tmp_path / "rules.txt"
    text.write_text("# survey\nSmoke: Age < 18 -> 'Never'\n\nM.I: Height == NA -> NA\n")
    assert read_rules(text) == ({"Smoke": ["Age < 18 -> 'Never'"], "M.I": ["Height == NA -> NA"]}, [])
    js = tmp_path / "rules.json"
    js.write_text('{"rules": {"Smoke": "Age < 18 -> \'Never\'"}, "allow": [{"Sex": "Male", "Smoke": "Heavy"}]}')
    assert read_rules(js) == ({"Smoke": ["Age < 18 -> 'Never'"]}, [{"Sex": "Male", "Smoke": "Heavy"}])
    bad = tmp_path / "bad.txt"
    bad.write_text("Smoke Age < 18 'Never'\n")
    with pytest.raises(DataError, match="line 1"):
        read_rules(bad)
