"""The report opened in a real browser: Debian's chromium, headless, takes a screenshot and a PDF.

``make test`` installs chromium when it runs as root and it is missing; elsewhere the test skips
and says how to install it.  A copy of the report with a small script measures every figure as the
browser laid it out (the report itself has no script): a figure drawn with no size, or an image
that did not load, fails the test.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from cellsafe.cli.main import main
from cellsafe.report import SECTIONS

pytestmark = pytest.mark.slow

VARIABLES = "area,sex,age"

_PROBE = """<script>
document.addEventListener('DOMContentLoaded', () => {
  const bad = [];
  document.querySelectorAll('svg').forEach((s, i) => {
    const r = s.getBoundingClientRect();
    if (!(r.width > 50 && r.height > 50)) bad.push('svg ' + i);
  });
  document.querySelectorAll('img').forEach((im, i) => {
    if (!(im.complete && im.naturalWidth > 0)) bad.push('img ' + i);
  });
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({svgs: document.querySelectorAll('svg').length, bad: bad});
  document.body.appendChild(out);
});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Debian's chromium is not installed: apt-get install -y chromium (make test does it as root)")


def _run(browser: str, profile, *args: str) -> subprocess.CompletedProcess:
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def test_report_in_a_headless_browser(workspace, tmp_path):
    browser = _chromium()
    out = tmp_path / "report.html"
    assert main(["report", str(workspace / "people.csv"), "--variables", VARIABLES, "--name", "Pupils",
                 "--mechanism", "geometric:epsilon=1", "--release", str(workspace / "release"),
                 "--target", "tau4(1)<=0.5", "--output", str(out), "--quiet"]) == 0
    html = out.read_text()
    n_svg = len(re.findall(r"<svg[\s>]", html))

    shot, pdf = tmp_path / "report.png", tmp_path / "report.pdf"
    r = _run(browser, tmp_path / "profile", "--window-size=1200,1600", f"--screenshot={shot}", out.as_uri())
    assert shot.exists(), r.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == (1200, 1600)
        lo, hi = im.convert("L").getextrema()
        assert hi - lo > 100  # not a blank page
    r = _run(browser, tmp_path / "profile", "--no-pdf-header-footer", f"--print-to-pdf={pdf}", out.as_uri())
    data = pdf.read_bytes() if pdf.exists() else b""
    assert data.startswith(b"%PDF"), r.stderr[-2000:]
    pages = len(re.findall(rb"/Type\s*/Page[^s]", data))
    assert pages >= len(SECTIONS)  # every section starts a page when printed

    probed = tmp_path / "probed.html"
    probed.write_text(html.replace("</body>", _PROBE + "</body>"))
    r = _run(browser, tmp_path / "profile", "--window-size=1200,1600", "--virtual-time-budget=5000", "--dump-dom",
             probed.as_uri())
    dom = r.stdout
    headings = re.findall(r"<h2 id=\"h-[a-z]+\">([^<]+)</h2>", dom)
    assert headings == [title for _, title in SECTIONS]
    probe = re.search(r"<pre id=\"probe\">([^<]+)</pre>", dom)
    assert probe, dom[-2000:]
    import json

    result = json.loads(probe.group(1).replace("&quot;", '"'))
    assert result == {"svgs": n_svg, "bad": []}
