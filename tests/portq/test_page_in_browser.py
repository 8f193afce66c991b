"""The HTML page in a real browser: hostile names render as visible escapes, a huge title wraps in its cell.

``portq summary --html`` is rendered by headless Chromium (Debian's
``chromium`` package, which CI installs). ``--dump-dom`` gives the DOM the
browser built, so the test reads the text a reader sees, not the bytes portq
wrote; a copy of the page with a small measuring script (the page itself
has none) records in the DOM how wide the layout came out, and
``--screenshot`` keeps a picture of the page for a person to look at
(``PORTQ_KEEP_SCREENSHOT=DIR`` keeps it there). Where no Chromium is
installed, the tests skip and say so.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tests.portq.golden.reports.scenario import scanned

BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(name)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (CI installs Debian's chromium)")

WINDOW = (1024, 768)
LONG_WORD = "Q" * 100_000
HOSTILE = "evil\u202etxt.cu \x1b[31mred\x07 line\u2028break next\x85line"
TITLE = f"{HOSTILE} {LONG_WORD} (#51739)"

MEASURE = """
<script>
window.addEventListener("load", () => {
  const cells = [...document.querySelectorAll("td")].filter(td => td.textContent.includes("QQQQQQQQ"));
  const widest = Math.max(0, ...cells.map(td => td.getBoundingClientRect().right));
  document.body.setAttribute("data-inner-width", String(window.innerWidth));
  document.body.setAttribute("data-scroll-width", String(document.documentElement.scrollWidth));
  document.body.setAttribute("data-long-cells", String(cells.length));
  document.body.setAttribute("data-long-cell-right", String(Math.ceil(widest)));
  const line = parseFloat(getComputedStyle(document.body).lineHeight);
  const tallest = Math.max(0, ...[...document.querySelectorAll("th")].map(th => th.getBoundingClientRect().height));
  document.body.setAttribute("data-header-lines", String(Math.round(tallest / line)));
});
</script>
"""


def chromium(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--window-size={WINDOW[0]},{WINDOW[1]}", "--virtual-time-budget=5000", *arguments],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    scenario = scanned(tmp_path_factory.mktemp("browser"), title=TITLE)
    path = scenario.root / "page.html"
    result = scenario.portq("summary", "--html", str(path))
    assert result.code == 0, result.err
    return path


def test_hostile_names_render_as_escapes_in_the_dom(page):
    dom = chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = re.sub(r"<[^>]+>", "", dom.stdout)
    for raw in ("\u202e", "\x1b", "\x07", "\u2028", "\x85"):
        assert raw not in dom.stdout, f"{raw!r} reached the DOM raw"
    assert "evil\\u202etxt.cu \\x1b[31mred\\x07 line\\u2028break next\\x85line" in text


def test_a_100k_character_title_wraps_inside_its_cell(page, tmp_path):
    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = chromium("--dump-dom", measured.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = dict(re.findall(r'data-([a-z-]+)="(\d+)"', dom.stdout.split("<body", 1)[1].split(">", 1)[0]))
    assert int(found["long-cells"]) >= 1, "the long title is in no table cell"
    inner = int(found["inner-width"])
    assert int(found["scroll-width"]) <= inner, found  # nothing pushes the page wider than the window
    assert int(found["long-cell-right"]) <= inner, found  # the title's cell ends inside the window
    assert int(found["header-lines"]) <= 1, found  # the other columns keep their words: no header broken letter by letter


def test_the_screenshot_is_the_window_wide(page, tmp_path):
    keep = os.environ.get("PORTQ_KEEP_SCREENSHOT")
    shot = (Path(keep) if keep else tmp_path) / "page.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    result = chromium(f"--screenshot={shot}", page.as_uri())
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == WINDOW
