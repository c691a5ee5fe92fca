"""The glossary (docs/glossary.md) names fields that exist in the metrics' code."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _entries():
    text = (ROOT / "docs" / "glossary.md").read_text()
    for line in text.splitlines():
        m = re.match(r"`code: ([^:]+): ([^`]+)`", line.strip())
        if m:
            yield m.group(1).strip(), [n.strip() for n in m.group(2).split(",")]


def test_glossary_names_match_the_code():
    entries = list(_entries())
    assert len(entries) >= 15
    for path, names in entries:
        source = (ROOT / "src" / path).read_text()
        for name in names:
            # a dataclass field, a dict key or a function of that name
            pattern = rf"(^\s+{re.escape(name)}\s*:|[\"']{re.escape(name)}[\"']|def {re.escape(name)}\b)"
            assert re.search(pattern, source, re.M), f"{name!r} of docs/glossary.md is not in src/{path}"


def test_every_tau_and_named_metric_is_explained():
    text = (ROOT / "docs" / "glossary.md").read_text()
    for heading in ["tau1", "tau2", "tau3", "tau4", "hellinger_utility", "f_beta", "a, b, c", "plain",
                    "know_yourself", "DiSCO", "TCAP", "pmse_ratio"]:
        assert f"### {heading}" in text


def test_help_links_the_glossary(capsys):
    from cellsafe.cli.main import build_parser

    assert "docs/glossary.md" in build_parser().format_help()
