"""The wave summary: counts per verdict, REAL_GAPs per row, coverage holes, proposals."""

from __future__ import annotations

from portq.core.model import INERT, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP, Evidence, SymbolVerdict, Verdict
from portq.reporting import reports
from portq.reporting.summary import build_summary_context


def gap(row: str) -> Verdict:
    return Verdict(
        REAL_GAP,
        None,
        "launch",
        evidence=[Evidence("launch-grid", "grid changed", side="upstream-new")],
        symbols=[SymbolVerdict("src/a.cu", "gather", "modified", REAL_GAP, None, "launch", row=row)],
    )


def hole(row: str, symbol: str) -> Verdict:
    return Verdict(
        NOT_APPLICABLE,
        "not-ported",
        "path",
        symbols=[SymbolVerdict("src/b.cu", symbol, "modified", NOT_APPLICABLE, "not-ported", "path", row=row)],
    )


def entry(position: int, verdict: Verdict, rows=("ROW-A",), **extra) -> dict:
    return {"position": position, "sha": f"{position:040d}", "title": f"commit {position}", "pr": None, "rows": list(rows), "verdict": verdict, **extra}


def summary(entries) -> dict:
    return build_summary_context(wave={"id": "PORTQ-3", "range": "a..b", "upstream": "up"}, entries=entries)


ENTRIES = [
    entry(1, gap("ROW-A")),
    entry(2, gap("ROW-B"), rows=("ROW-B", "ROW-A")),
    entry(3, gap("ROW-A"), source="review", proposal={"verdict": NOT_APPLICABLE, "justification": "no-row", "wave": "PORTQ-3"}),
    entry(4, Verdict(NEEDS_REVIEW, None, "body")),
    entry(5, Verdict(INERT, None, "signature")),
    entry(6, hole("ROW-A", "expand")),
    entry(7, hole("ROW-A", "expand")),
    entry(8, Verdict(NOT_APPLICABLE, "no-row", "path"), rows=()),
]


def test_counts_every_verdict_including_zeros():
    context = summary(ENTRIES)
    assert context["counts"] == {REAL_GAP: 3, NEEDS_REVIEW: 1, INERT: 1, "IN_SYNC": 0, NOT_APPLICABLE: 3}
    assert context["total"] == 8


def test_real_gaps_are_grouped_by_primary_row():
    groups = {g["row"]: [e["entry"] for e in g["entries"]] for g in summary(ENTRIES)["real_gaps_by_row"]}
    assert groups == {"ROW-A": [1, 3], "ROW-B": [2]}


def test_coverage_holes_merge_entries_of_one_symbol():
    assert summary(ENTRIES)["coverage_holes"] == [{"row": "ROW-A", "path": "src/b.cu", "symbol": "expand", "entries": [6, 7]}]


def test_scan_proposals_against_a_review_are_listed():
    [proposal] = summary(ENTRIES)["proposals"]
    assert (proposal["entry"], proposal["verdict"], proposal["proposed"]) == (3, REAL_GAP, NOT_APPLICABLE)


def test_dashboard_markdown_has_every_section():
    page = reports.render("summary.md.j2", summary(ENTRIES))
    for heading in ("### REAL_GAP by row", "### NEEDS_REVIEW", "### INERT", "### Coverage holes", "### Scans that disagree"):
        assert heading in page
    assert "- [ ] entry 3 `0000000000` perf: `commit 3` (human review), `portq file-issue 3`" in page
    assert "| `ROW-A` | `src/b.cu::expand` | 6, 7 |" in page


def test_dashboard_of_a_quiet_wave_says_none():
    page = reports.render("summary.md.j2", summary([entry(1, Verdict(NOT_APPLICABLE, "no-row", "path"), rows=())]))
    assert "### REAL_GAP by row\n\nNone." in page
    assert "Scans that disagree" not in page


def test_scan_prints_flagged_entries_counts_and_coverage_holes(tmp_path):
    from tests.portq.golden.reports.scenario import scanned

    scenario = scanned(tmp_path)
    result = scenario.portq("scan", scenario.range)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].startswith(f"PORTQ-2 {scenario.shas[0]}..{scenario.shas[1]} (vllm): 1 entry, complete")
    assert lines[1] == "Flagged entries: 1 (standing verdicts)"
    assert lines[2].startswith(f"1  {scenario.shas[1][:10]}  REAL_GAP  KERNEL-KV-CACHE  ")
    assert "Verdicts: REAL_GAP 1, NEEDS_REVIEW 0, INERT 0, IN_SYNC 0, NOT_APPLICABLE 0" in lines
    assert any(line.startswith("  KERNEL-KV-CACHE  csrc/cache_kernels.cu::vllm::gather_and_maybe_dequant_cache_page")
               for line in lines)  # a not-ported hole


def test_summary_command_prints_the_newest_wave(tmp_path):
    from tests.portq.golden.reports.scenario import scanned

    scenario = scanned(tmp_path)
    result = scenario.portq("summary", "--json")
    assert result.code == 0 and result.json()["wave"]["id"] == "PORTQ-1"
    assert result.json()["real_gaps_by_row"][0]["row"] == "KERNEL-KV-CACHE"
    page = scenario.portq("summary")
    assert page.code == 0 and "## portq wave `PORTQ-1`" in page.out and "| REAL_GAP | 1 |" in page.out


def test_summary_format_flag_is_gone_beside_json(tmp_path):
    from tests.portq.golden.reports.scenario import scanned

    scenario = scanned(tmp_path)
    result = scenario.portq("summary", "--json", "--format", "md")
    assert result.code == 2 and "unrecognized arguments: --format md" in result.err


def test_each_proposal_is_its_own_line_with_or_without_a_justification():
    entries = [
        entry(1, gap("ROW-A"), source="review", proposal={"verdict": NEEDS_REVIEW, "justification": None, "wave": "PORTQ-3"}),
        entry(2, gap("ROW-A"), source="review", proposal={"verdict": NOT_APPLICABLE, "justification": "no-row", "wave": "PORTQ-3"}),
        entry(3, gap("ROW-A"), source="review", proposal={"verdict": INERT, "justification": None, "wave": "PORTQ-3"}),
    ]
    markdown = reports.render("summary.md.j2", summary(entries))
    lines = [line for line in markdown.splitlines() if line.startswith("- entry ")]
    assert [line.split()[2] for line in lines] == ["1", "2", "3"]
    assert all(line.count("proposes") == 1 for line in lines)
