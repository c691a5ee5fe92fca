"""The release report of the ESC-like table against the numbers it gathers, measured in the same run.

Run: python benchmarks/bench_report.py [--screenshot docs/release-report-esc.png]

1. Three candidate mechanisms (NBI sigma 1, CKM D=5 V=3, geometric epsilon 1), a priori only:
   ``cellsafe.report.Report(...).to_html()`` against what a user would run instead, the three
   ``apriori.assess`` calls alone (the report adds the description, the frontier of the
   candidates' neighbourhoods, the transition tables and the figures).  Target: under 10 s.
2. The same with two releases of m = 5 (NBI sigma 1 and sigma 2, written by the synthesize
   command with their manifests): against the assessments plus the two ``table_metrics`` calls.
   Target: under 20 s.

With ``--screenshot PATH`` the first report is opened in headless chromium and its first screen
saved there (the picture shown in the README).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

MECHANISMS = ["nbi:sigma=1", "ckm:D=5,V=3", "geometric:epsilon=1"]
TARGETS = ["tau4(1)<=0.4", "hellinger>=0.7"]


def _timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _screenshot(html: Path, png: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--window-size=1100,1500", "--hide-scrollbars", f"--screenshot={png}", html.as_uri()],
            check=True, capture_output=True, timeout=180,
        )


def main(argv: list[str] | None = None) -> None:
    warnings.simplefilter("ignore", RuntimeWarning)
    argv = sys.argv[1:] if argv is None else argv
    from cellsafe import apriori
    from cellsafe.cli.main import main as cellsafe
    from cellsafe.datasets import esc_like
    from cellsafe.mechanisms import make_mechanism
    from cellsafe.metrics import table_metrics
    from cellsafe.report import Report, load_release

    table = esc_like()
    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    print(f"table: {table!r}")

    t_report, report = _timed(lambda: Report(table, MECHANISMS, name="ESC-like", targets=TARGETS))
    t_html, _ = _timed(lambda: report.to_html(work / "esc.html"))
    t_base, _ = _timed(lambda: [apriori.assess(table, make_mechanism(s), k=[1, 2], p=[1, 5, 10, 50]) for s in MECHANISMS])
    total = t_report + t_html
    print(f"  3 candidates: report {total:.2f} s (sections {t_report:.2f} s, figures and HTML {t_html:.2f} s); "
          f"the three assessments alone {t_base:.2f} s; ratio {total / t_base:.2f}; target < 10 s")

    frame = table.to_frame()
    source = work / "esc.parquet"
    frame.to_parquet(source, index=False)
    variables = ",".join(table.names)
    for sigma, seed in ((1, 1), (2, 2)):
        cellsafe(["synthesize", str(source), "--variables", variables, "--count", frame.columns[-1], "--distribution",
                  "nbi", "--sigma", str(sigma), "-m", "5", "--seed", str(seed), "--output", str(work / f"nbi{sigma}"),
                  "--format", "parquet", "--quiet"])
    t_load, releases = _timed(lambda: [load_release(work / f"nbi{s}", table) for s in (1, 2)])
    t_report2, report2 = _timed(lambda: Report(table, MECHANISMS, releases, name="ESC-like", targets=TARGETS))
    t_html2, _ = _timed(lambda: report2.to_html(work / "esc-releases.html"))
    t_emp, _ = _timed(lambda: [table_metrics(table, list(r.tables), k=[1, 2], p=[1, 5, 10, 50]) for r in releases])
    total2 = t_load + t_report2 + t_html2
    print(f"  3 candidates, 2 releases of m = 5: report {total2:.2f} s (reading {t_load:.2f} s, sections "
          f"{t_report2:.2f} s, figures and HTML {t_html2:.2f} s); assessments and empirical metrics alone "
          f"{t_base + t_emp:.2f} s; ratio {total2 / (t_base + t_emp):.2f}; target < 20 s")

    if "--screenshot" in argv:
        png = Path(argv[argv.index("--screenshot") + 1])
        _screenshot(work / "esc.html", png)
        print(f"  screenshot: {png}")


if __name__ == "__main__":
    main()
