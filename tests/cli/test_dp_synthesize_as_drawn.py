"""dp-synthesize writes each implicate as it is drawn (memory flat in -m)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cellsafe.cli.main import main


@pytest.fixture
def deaths_csv(tmp_path):
    df = pd.DataFrame({"county": ["a", "b", "c", "d", "e"], "deaths": [4, 0, 7, 1, 3], "pop": [1000, 300, 2500, 800, 1200]})
    path = tmp_path / "deaths.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def geo_json(tmp_path):
    path = tmp_path / "geo.json"
    path.write_text(json.dumps({"county": ["a", "b", "c", "d", "e"]}))
    return path


def test_implicates_are_written_as_drawn(tmp_path, deaths_csv, geo_json, monkeypatch):
    from cellsafe.io import OutputSet
    from cellsafe.mechanisms import PoissonGammaSynthesizer
    from cellsafe.mechanisms._fixed_total import FixedTotalMechanism

    events = []
    drawn, written = PoissonGammaSynthesizer.implicates, OutputSet.write_frame

    def draw(self, *a, **k):
        for z in drawn(self, *a, **k):
            events.append("draw")
            yield z

    def write(self, frame, path, *a, **k):
        events.append("write")
        return written(self, frame, path, *a, **k)

    def refuse(*a, **k):
        raise AssertionError("dp-synthesize must not draw every implicate before writing")

    args = ["dp-synthesize", str(deaths_csv), "--variables", "county", "--count", "deaths", "--population", "pop",
            "--domain", str(geo_json), "--mechanism", "poisson-gamma", "--epsilon", "3", "-m", "3", "--seed", "5",
            "--quiet"]
    assert main(args + ["--output", str(tmp_path / "before")]) == 0
    monkeypatch.setattr(FixedTotalMechanism, "sample", refuse)
    monkeypatch.setattr(PoissonGammaSynthesizer, "implicates", draw)
    monkeypatch.setattr(OutputSet, "write_frame", write)
    assert main(args + ["--output", str(tmp_path / "after")]) == 0
    assert events == ["draw", "write"] * 3
    for i in (1, 2, 3):  # the same tables as an unpatched run
        assert (tmp_path / "after" / f"synthetic_{i}.csv").read_text() == (tmp_path / "before" / f"synthetic_{i}.csv").read_text()
