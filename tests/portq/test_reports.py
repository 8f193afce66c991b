"""Report rendering: naming, kind inference, inert hostile text, template errors, gh argv."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path

import pytest

from portq.reporting import issue_report, markdown, reports
from portq.core.model import (
    INERT,
    NEEDS_REVIEW,
    NOT_APPLICABLE,
    REAL_GAP,
    Commit,
    Evidence,
    FileChange,
    Hunk,
    SymbolVerdict,
    Verdict,
)

HOSTILE = (
    "{{ 7*7 }} {% if true %}JINJA{% endif %} <script>alert(1)</script> **bold** [x](javascript:alert(1)) "
    "@maintainer #12 \x1b[31mred\x1b[0m \u202eevil\u202c ``` fence ` tick | pipe"
)


def make_commit(title: str = "[Kernel] Faster gathers (#51739)", message: str = "") -> Commit:
    return Commit(
        sha="c76a425278" + "0" * 30,
        parents=("1" * 40,),
        title=title,
        message=message,
        author="Upstream Developer <dev@upstream.invalid>",
        authored_at="2025-01-01T00:00:00+00:00",
        pr=51739,
        changes=[
            FileChange(
                "modified",
                "csrc/cache_kernels.cu",
                "csrc/cache_kernels.cu",
                hunks=[Hunk("@@ -10,4 +10,5 @@ void gather", 10, 4, 10, 5, (11,), (11, 12), ("a",), ("b", "c"))],
            )
        ],
    )


def make_verdict(kind: str = "launch-grid", verdict: str = REAL_GAP, change: str = "modified", **extra) -> Verdict:
    quote = extra.pop("quote", "dim3 grid(n);")
    evidence = [Evidence(kind, "upstream changed", side="upstream-new", quote=quote, subject="(m)")]
    if kind == "launch-grid":
        evidence.insert(0, Evidence(kind, "upstream grid was (n)", side="upstream-old", quote=quote, subject="(n)"))
    return Verdict(
        verdict,
        extra.pop("justification", None),
        extra.pop("decided_by", "launch"),
        reason=extra.pop("reason", "the port keeps the old launch"),
        symbols=[
            SymbolVerdict(
                "csrc/cache_kernels.cu",
                "gather",
                change,
                verdict,
                None if verdict != NOT_APPLICABLE else "not-carried",
                "launch",
                row="ROW-A",
                ports=["kernels/gather.py:10 gather"],
                evidence=evidence,
            )
        ],
        version="0.1.0",
    )


def context_for(commit: Commit, verdict: Verdict, **kwargs) -> dict:
    return issue_report.build_issue_context(
        upstream="up",
        range_text="a..b",
        wave="PORTQ-1",
        position=3,
        commit=commit,
        verdict=verdict,
        rows=["ROW-A"],
        **kwargs,
    )


def test_slug_drops_tag_and_pr_suffix():
    assert reports.slugify("[Kernel] Optimize long-context MLA cache gathers (#51739)") == (
        "optimize-long-context-mla-cache-gathers"
    )


def test_slug_of_unusable_title_is_entry():
    assert reports.slugify("!!! ??? \u2603") == "entry"


def test_slug_is_cut_at_a_word():
    slug = reports.slugify("word " * 40)
    assert len(slug) <= 50 and not slug.endswith("-")


def test_range_dirname_keeps_dots_and_replaces_slashes():
    assert reports.range_dirname("origin/main..v1.2") == "origin-main..v1.2"


def test_report_path_shape(tmp_path):
    path = reports.report_path(tmp_path, "vllm", "a..b", 132, "fix-it")
    assert path == tmp_path / "vllm" / "a..b" / "132-fix-it.md"


@pytest.mark.parametrize(
    ("evidence_kind", "change", "expected"),
    [("launch-grid", "modified", "perf"), ("param-added", "modified", "feat"), ("body", "modified", "fix"),
     ("body", "added", "feat"), ("param-dead", "modified", "refactor"), ("program-id", "modified", "perf")],
)
def test_kind_is_inferred_from_evidence(evidence_kind, change, expected):
    assert issue_report.infer_kind(make_verdict(evidence_kind, change=change)) == expected


def test_an_unchanged_grid_cited_as_context_does_not_make_an_added_parameter_perf():
    verdict = make_verdict("param-added")
    verdict.symbols[0].evidence += [
        Evidence("launch-grid", "upstream grid was (n, h)", side="upstream-old", subject="(n, h)"),
        Evidence("launch-grid", "upstream grid is now (n, h)", side="upstream-new", subject="(n,h)"),
    ]
    assert issue_report.infer_kind(verdict) == "feat"
    context = context_for(make_commit(), verdict)
    assert context["title"].startswith("feat(ROW-A): gather still lacks upstream's new parameter (m)")


def test_title_names_the_bare_port_without_markup_entities():
    verdict = make_verdict()
    verdict.symbols[0].ports = ["src/vt/cuda/prefill.cu:62 vt::<anonymous>::GatherMlaCacheKernel"]
    title = context_for(make_commit(), verdict)["title"]
    assert title == "perf(ROW-A): GatherMlaCacheKernel still launches grid (n)"
    rendered = reports.render("issue.md.j2", context_for(make_commit(), verdict)).splitlines()[0]
    assert "&lt;" not in rendered and "&amp;" not in rendered


def test_kind_ignores_the_commit_message():
    context = context_for(make_commit(title="Fix crash; add new parameter; optimize"), make_verdict("body"))
    assert context["kind"] == "fix"


def test_fingerprint_is_stable_and_changes_with_the_verdict():
    first = reports.fingerprint("up", "abc", REAL_GAP, None, ["ROW-A"])
    assert first == reports.fingerprint("up", "abc", REAL_GAP, None, ["ROW-A"])
    assert first != reports.fingerprint("up", "abc", INERT, None, ["ROW-A"])


def test_title_has_kind_row_and_summary():
    context = context_for(make_commit(), make_verdict())
    assert context["title"] == "perf(ROW-A): gather still launches grid (n)"


def test_title_is_cut_at_a_word():
    title = reports.issue_title("fix", "ROW", "word " * 100)
    assert len(title) <= reports.MAX_TITLE_CHARS and title.endswith("…")


def outside_code(markdown: str) -> str:
    """The markdown with fenced blocks and code spans removed: what a renderer interprets."""
    markdown = re.sub(r"(?ms)^(`{3,})text\n.*?^\1$", "", markdown)
    return re.sub(r"(?<![`\\])(`+)(?!`).*?(?<!`)\1(?!`)", "", markdown)


def test_hostile_commit_text_renders_inert():
    commit = make_commit(title=HOSTILE, message=HOSTILE + "\n" + "x" * 5000)
    verdict = make_verdict(quote=HOSTILE, reason=HOSTILE)
    text = reports.render("issue.md.j2", context_for(commit, verdict))
    assert "{{ 7*7 }}" in text and "{% if true %}JINJA{% endif %}" in text  # shown, never evaluated
    interpreted = outside_code(text)
    assert "<script" not in interpreted and "](javascript" not in interpreted
    assert "@maintainer" not in interpreted and "#12" not in interpreted  # no pings, no cross-links
    assert "\x1b" not in text and "\u202e" not in text  # control and bidi characters shown as escapes
    assert "\\x1b[31m" in text and "\\u202e" in text
    assert max(len(line) for line in text.splitlines()) < 1200


def test_code_span_fence_is_longer_than_any_backtick_run_inside():
    assert markdown.md_code("a ``b`` c") == "``` a ``b`` c ```"


def test_text_escapes_markdown_and_html():
    assert markdown.md_text("**x** <b> &amp;") == "\\*\\*x\\*\\* \\<b\\> \\&amp;"


def test_text_escapes_a_leading_heading_or_list_marker():
    assert markdown.md_text("# not a heading").startswith("\\#")
    assert markdown.md_text("1. not a list").startswith("1\\.")


def test_cell_escapes_pipes_inside_code():
    assert markdown.md_cell(markdown.md_code("a|b")) == "`a\\|b`"


def test_long_line_is_cut_and_says_how_much():
    assert markdown.one_line("y" * 300, 10).endswith("[290 more characters]")


def test_block_keeps_a_bounded_number_of_lines():
    block = markdown.md_block("\n".join(f"line {i}" for i in range(100)), max_lines=5)
    assert "line 4" in block and "line 5" not in block and "95 more lines" in block


def test_template_syntax_error_names_template_and_line(tmp_path):
    (tmp_path / "bad.md.j2").write_text("line one\nline two\n{% if %}\n")
    with pytest.raises(reports.ReportError, match=r"bad\.md\.j2:3"):
        reports.render("bad.md.j2", {}, tmp_path)


def test_template_runtime_error_names_template_and_line(tmp_path):
    (tmp_path / "undefined.md.j2").write_text("one\ntwo\n{{ missing.value }}\n")
    with pytest.raises(reports.ReportError, match=r"undefined\.md\.j2:3"):
        reports.render("undefined.md.j2", {}, tmp_path)


def test_sandbox_refuses_attribute_escapes(tmp_path):
    (tmp_path / "escape.md.j2").write_text("{{ ''.__class__.__mro__ }}\n")
    with pytest.raises(reports.ReportError, match="escape.md.j2"):
        reports.render("escape.md.j2", {}, tmp_path)


def test_missing_template_is_reported(tmp_path):
    with pytest.raises(reports.ReportError, match="nope.md.j2 not found"):
        reports.render("nope.md.j2", {}, tmp_path)


def test_write_report_into_unwritable_place_names_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(reports.ReportError, match=r"cannot write report .*file/x\.md"):
        reports.write_report(blocker / "x.md", "text")


def test_write_report_reports_unchanged_rewrites(tmp_path):
    target = tmp_path / "r" / "1-x.md"
    assert reports.write_report(target, "same\n") is True
    assert reports.write_report(target, "same\n") is False


def test_not_applicable_entry_renders_a_short_record():
    verdict = Verdict(NOT_APPLICABLE, "no-row", "path", reason="no row owns these paths", version="0.1.0")
    context = issue_report.build_issue_context(
        upstream="up", range_text="a..b", wave="PORTQ-1", position=3, commit=make_commit(), verdict=verdict
    )
    text = reports.render("issue.md.j2", context)
    assert "## Why NOT_APPLICABLE" in text and "Nothing to port" in text


def test_needs_review_report_says_why_undecided():
    text = reports.render("issue.md.j2", context_for(make_commit(), make_verdict("body", verdict=NEEDS_REVIEW, decided_by="body")))
    assert "## Why NEEDS_REVIEW" in text


def test_what_was_not_determined_is_always_present():
    for verdict in (make_verdict(), Verdict(NOT_APPLICABLE, "non-code", "path")):
        text = reports.render("issue.md.j2", context_for(make_commit(), verdict))
        assert "## What was not determined" in text and "Nothing was executed" in text


def test_history_shows_the_first_label_and_the_correction():
    history = [
        {"verdict": NOT_APPLICABLE, "justification": "not-carried", "source": "scan", "wave": "PORTQ-1"},
        {"verdict": REAL_GAP, "source": "review", "who": "alice", "why": "second half is ported"},
    ]
    text = reports.render("issue.md.j2", context_for(make_commit(), make_verdict(), history=history))
    assert "first labelled `NOT_APPLICABLE` and is now `REAL_GAP`" in text
    assert "set by a human review by `alice`" in text


def _fake_gh(directory: Path, exit_code: int = 0) -> Path:
    script = directory / "gh"
    record = directory / "argv.json"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        "print('https://github.com/o/r/issues/7')\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return record


def test_gh_receives_title_and_body_as_arguments(tmp_path, monkeypatch):
    record = _fake_gh(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    url = reports.file_with_gh("fix(R): $(touch pwned) `x`", "body; rm -rf /", repo="o/r")
    assert url == "https://github.com/o/r/issues/7"
    assert json.loads(record.read_text()) == [
        "issue", "create", "--title", "fix(R): $(touch pwned) `x`", "--body", "body; rm -rf /", "--repo", "o/r",
    ]
    assert not (Path.cwd() / "pwned").exists()


def test_gh_missing_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(reports.ReportError, match="needs the GitHub CLI `gh` on PATH"):
        reports.file_with_gh("t", "b")


def test_gh_failure_reports_its_exit_status(tmp_path, monkeypatch):
    _fake_gh(tmp_path, exit_code=4)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(reports.ReportError, match="exit 4"):
        reports.file_with_gh("t", "b")
