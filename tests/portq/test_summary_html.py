"""portq summary --html: one self-contained page, parsed back; bad input; hostile titles inert."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from tests.portq.golden.reports.scenario import scanned
from tests.portq.test_reports import HOSTILE

WEB = "https://github.com/vllm-project/vllm/commit/{sha}"


class Page(HTMLParser):
    """Every element with its attributes, and the text of the page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.text.append(data)

    def all(self, tag: str, **attrs) -> list[dict]:
        return [a for t, a in self.elements if t == tag and all(a.get(k) == v for k, v in attrs.items())]


def with_web(tmp_path, title=None):
    (tmp_path / "portq.toml").write_text(f'[upstream.vllm]\npath = "upstream"\nweb = "{WEB}"\n')
    return scanned(tmp_path, **({"title": title} if title else {}))


def test_page_is_self_contained_with_a_chart_per_wave_and_links(tmp_path):
    scenario = with_web(tmp_path)
    report = Path(scenario.portq("file-issue", "1").out.strip())
    result = scenario.portq("summary", "--html", str(tmp_path / "site" / "index.html"))
    assert result.code == 0, result.err
    page = Page((tmp_path / "site" / "index.html").read_text())
    tags = {tag for tag, _ in page.elements}
    assert "script" not in tags and "link" not in tags and "img" not in tags and "iframe" not in tags
    assert all(not (a.get("src") or "").startswith(("http", "//")) for _, a in page.elements)
    [svg] = page.all("svg", id="flagged-per-wave")
    waves = page.all("g", **{"class": "wave"})
    assert [(w["data-wave"], w["data-flagged"]) for w in waves] == [("PORTQ-1", "1")]
    [bar] = page.all("rect", **{"data-verdict": "REAL_GAP"})
    assert bar["data-count"] == "1" and float(bar["height"]) > 0
    [commit] = page.all("a", **{"class": "commit"})
    assert commit["href"] == WEB.replace("{sha}", scenario.shas[1])
    [link] = page.all("a", **{"class": "report"})
    assert (tmp_path / "site" / link["href"]).resolve() == report.resolve()
    [row] = page.all("table", id="counts-per-row")


def test_markdown_reports_link_the_upstream_commit_when_web_is_configured(tmp_path):
    scenario = with_web(tmp_path)
    text = Path(scenario.portq("file-issue", "1").out.strip()).read_text()
    assert f"**Upstream commit:** [`{scenario.shas[1][:10]}`](<{WEB.replace('{sha}', scenario.shas[1])}>)" in text


def test_hostile_commit_title_is_text_in_the_page(tmp_path):
    title = HOSTILE + " </details> <img src=x onerror=alert(1)>"
    scenario = with_web(tmp_path, title=title)
    result = scenario.portq("summary", "--html", str(tmp_path / "page.html"))
    assert result.code == 0, result.err
    raw = (tmp_path / "page.html").read_text()
    page = Page(raw)
    assert not page.all("script") and not page.all("img")
    assert "<script>" not in raw and "{{ 7*7 }}" in "".join(page.text)
    assert any("<script>alert(1)</script>" in chunk for chunk in page.text)  # shown as text


def test_html_to_an_unwritable_path_is_one_line_exit_2(tmp_path):
    scenario = scanned(tmp_path)
    (tmp_path / "blocker").write_text("")
    target = tmp_path / "blocker" / "page.html"
    result = scenario.portq("summary", "--html", str(target))
    assert result.code == 2 and result.out == ""
    assert result.err.strip().splitlines() == [
        f"portq: error: --html {target}: cannot write the page there (expected a writable file path)"]


def test_web_template_without_sha_is_one_line_exit_2(tmp_path):
    scenario = scanned(tmp_path)
    (tmp_path / "portq.toml").write_text('[upstream.vllm]\npath = "upstream"\nweb = "https://github.com/v/v/commit/"\n')
    result = scenario.portq("summary", "--html", str(tmp_path / "p.html"))
    assert result.code == 2
    [line] = result.err.strip().splitlines()
    assert "[upstream.vllm] web: expected a URL with {sha} where the commit goes" in line


def test_web_template_that_is_not_an_http_url_is_refused(tmp_path):
    scenario = scanned(tmp_path)
    (tmp_path / "portq.toml").write_text('[upstream.vllm]\npath = "upstream"\nweb = "javascript:alert(\'{sha}\')"\n')
    result = scenario.portq("file-issue", "1")
    assert result.code == 2 and "expected an http(s) URL" in result.err and len(result.err.strip().splitlines()) == 1


SPOOFING = "\u202e" + "txt.exe" + "\u2028" + "\x85" + "\x1b[2J"
"""A right-to-left override, a line separator, a C1 control and an escape sequence."""


def test_every_text_on_the_page_shows_hostile_characters_as_escapes(tmp_path):
    scenario = scanned(tmp_path, title="Fix " + SPOOFING)
    review = scenario.portq("review", "1", "--verdict", "NEEDS_REVIEW", "--because", "read " + SPOOFING,
                            "--who", "mallory" + SPOOFING)
    assert review.code == 0, review.err
    result = scenario.portq("summary", "--html", str(tmp_path / "page.html"))
    assert result.code == 0, result.err
    raw = (tmp_path / "page.html").read_text(encoding="utf-8")
    for character in SPOOFING[0], "\u2028", "\x85", "\x1b":
        assert character not in raw
    assert raw.count("\\u202e") >= 3 and "\\u2028" in raw and "\\x85" in raw and "\\x1b" in raw


def test_a_100k_character_title_may_wrap_inside_its_cell(tmp_path):
    scenario = scanned(tmp_path, title="x" * 100_000)
    result = scenario.portq("summary", "--html", str(tmp_path / "page.html"))
    assert result.code == 0, result.err
    raw = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "overflow-wrap: anywhere" in raw  # the browser may break the unbroken title inside its cell
