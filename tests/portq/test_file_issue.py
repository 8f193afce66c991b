"""portq file-issue: the seed-000 report, byte for byte; idempotent files and filing; bad input."""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path

import pytest

from tests.portq.golden.reports.scenario import check_golden, scanned
from tests.portq.test_reports import HOSTILE, outside_code


@pytest.fixture
def scenario(tmp_path):
    return scanned(tmp_path)


def report_path(result) -> Path:
    assert result.code == 0, result.err
    return Path(result.out.strip())


def test_seed000_report_matches_the_golden_file(scenario):
    path = report_path(scenario.portq("file-issue", "1"))
    assert path.parent == scenario.root / "reports" / "vllm" / f"{scenario.shas[0][:12]}..{scenario.shas[1][:12]}"  # named by SHAs
    check_golden("seed000_issue.md", path.read_text())


def test_seed000_report_names_both_halves_the_caller_and_the_gap(scenario):
    text = report_path(scenario.portq("file-issue", "1")).read_text()
    assert text.startswith("# perf(KERNEL-KV-CACHE): gather\\_and\\_maybe\\_dequant\\_cache still launches grid (num\\_tokens)")
    assert "- `cp_gather_cache` (modified): `NOT_APPLICABLE` / `not-carried`; declared out of scope at `kernels/kv_cache/gather.py:5`" in text
    assert "(still takes token\\_to\\_seq)" in text
    assert "  2. in `gather_chunk`: `kernels/mla_prefill/chunked_context.py:6`" in text
    assert "## What was not determined" in text and "upstream's claim until a benchmark" in text
    assert "`portq verify KERNEL-KV-CACHE` passes" in text


def test_seed000_report_quotes_the_port_grid_and_upstreams_grid_before_and_after(scenario):
    text = report_path(scenario.portq("file-issue", "1")).read_text()
    assert "- `kernels/kv_cache/gather.py:36-37` (its launch and grid)\n  ```text\n  grid = (num_tokens,)\n" in text
    assert "  - before `csrc/cache_kernels.cu:56-60`\n    ```text\n    constexpr int32_t thread_block_size = 64;\n    dim3 grid(num_tokens);" in text
    assert "    dim3 grid(ceil_div(num_tokens, block_size) + 2 * num_reqs);" in text
    assert text.count("dim3 grid(num_tokens);") == 1  # the old grid is quoted once, not once per delta


def test_other_touched_symbols_are_folded_into_one_details_block(scenario):
    text = report_path(scenario.portq("file-issue", "1")).read_text()
    assert text.count("<details>") == 1 and text.count("</details>") == 1
    folded = text[text.index("<details>"):text.index("</details>")]
    assert "`vllm::gather_and_maybe_dequant_cache_page` (added): `NOT_APPLICABLE` / `not-ported`" in folded
    assert "evidence hunk" not in text and "the port passes it" not in text


def test_the_golden_report_is_shorter_than_the_one_it_replaced(scenario):
    text = report_path(scenario.portq("file-issue", "1")).read_text()
    assert len(text.splitlines()) < 112  # the first golden report had 112 lines
    for section in ("## Correction history", "## What is wrong", "## Reachability", "## Why REAL_GAP",
                    "## Size", "## What was not determined", "## Done when"):
        assert section in text


def test_an_entry_that_needs_nothing_is_refused_unless_forced(scenario):
    scenario.portq("review", "1", "--verdict", "IN_SYNC", "--because", "ported by hand", "--who", "ana")
    refused = scenario.portq("file-issue", "1")
    assert refused.code == 2 and refused.out == ""
    assert refused.err.strip().splitlines() == [
        "portq: error: entry 1 is IN_SYNC: nothing to act on, so no report; pass --force to write one anyway"]
    forced = scenario.portq("file-issue", "1", "--force")
    assert forced.code == 0 and "already matches upstream" in Path(forced.out.strip()).read_text()


def test_n_all_and_dashboard_are_exclusive(scenario):
    result = scenario.portq("file-issue", "1", "--all")
    assert result.code == 2 and "expected one of N, --all or --dashboard, got N and --all" in result.err
    result = scenario.portq("file-issue")
    assert result.code == 2 and "got none" in result.err


def test_rerunning_writes_the_same_file(scenario):
    first = scenario.portq("file-issue", "1", "--json").json()
    second = scenario.portq("file-issue", "1", "--json").json()
    assert first["written"] is True and second["written"] is False
    assert first["path"] == second["path"] and first["fingerprint"] == second["fingerprint"]


def test_json_prints_the_context_and_the_path(scenario):
    document = scenario.portq("file-issue", "1", "--json").json()
    for key in ("title", "kind", "row", "co_owners", "wave", "entry", "range", "commit", "verdict", "history",
                "halves", "reachability", "citations", "siblings", "size", "not_determined", "fingerprint", "path",
                "filed"):
        assert key in document
    assert (document["kind"], document["verdict"]["verdict"], document["filed"]) == ("perf", "REAL_GAP", None)


def test_out_directory_is_honoured(scenario, tmp_path):
    path = report_path(scenario.portq("file-issue", "1", "--out", str(tmp_path / "elsewhere")))
    assert path.is_relative_to(tmp_path / "elsewhere") and path.is_file()


def test_unwritable_output_directory_is_an_error(scenario, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = scenario.portq("file-issue", "1", "--out", str(blocker))
    assert result.code == 2 and "cannot write report" in result.err and str(blocker) in result.err


def test_unknown_entry_is_an_error(scenario):
    result = scenario.portq("file-issue", "9")
    assert result.code == 2 and "has no entry 9" in result.err


def test_range_never_scanned_is_an_error(scenario):
    result = scenario.portq("file-issue", "1", "--range", "abcdef0..1234567")
    assert result.code == 2 and "no scanned wave of abcdef0..1234567" in result.err


def test_hostile_commit_title_renders_inert(tmp_path):
    hostile = scanned(tmp_path, title=HOSTILE + " " + "y" * 3000)
    text = report_path(hostile.portq("file-issue", "1")).read_text()
    assert "{{ 7*7 }}" in text
    interpreted = outside_code(text)
    assert "<script" not in interpreted and "@maintainer" not in interpreted
    assert "\x1b" not in text and max(len(line) for line in text.splitlines()) < 1200


def path_with_only_git(directory: Path) -> str:
    """A PATH on which git is found and gh is not (whatever this machine has)."""
    directory.mkdir(exist_ok=True)
    (directory / "git").symlink_to(shutil.which("git"))
    return str(directory)


def fake_gh(directory: Path) -> Path:
    """A ``gh`` that appends its argv to calls.jsonl and prints an issue URL."""
    path_with_only_git(directory)
    calls = directory / "calls.jsonl"
    script = directory / "gh"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(calls)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "print('https://github.com/team/port/issues/41')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return calls


def test_gh_receives_title_and_body_as_arguments(scenario, tmp_path, monkeypatch):
    calls = fake_gh(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    result = scenario.portq("file-issue", "1", "--gh", "--gh-repo", "team/port", "--json")
    document = result.json()
    [argv] = [json.loads(line) for line in calls.read_text().splitlines()]
    body = Path(document["path"]).read_text().split("\n", 2)[2]
    assert argv == ["issue", "create", "--title", document["title"], "--body", body, "--repo", "team/port"]
    assert document["filed"]["url"] == "https://github.com/team/port/issues/41"


def test_gh_files_a_fingerprint_once(scenario, tmp_path, monkeypatch):
    calls = fake_gh(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert scenario.portq("file-issue", "1", "--gh").code == 0
    again = scenario.portq("file-issue", "1", "--gh")
    assert again.code == 0 and "already filed: https://github.com/team/port/issues/41" in again.err
    assert len(calls.read_text().splitlines()) == 1


def test_gh_missing_is_a_clear_error_after_writing_the_report(scenario, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with_only_git(tmp_path / "no-gh"))
    result = scenario.portq("file-issue", "1", "--gh")
    assert result.code == 2 and "needs the GitHub CLI `gh` on PATH" in result.err
    assert list((scenario.root / "reports").rglob("1-*.md"))


def test_a_review_changes_the_fingerprint_so_the_correction_can_be_filed(scenario):
    before = scenario.portq("file-issue", "1", "--json").json()["fingerprint"]
    assert scenario.portq("review", "1", "--verdict", "INERT", "--because", "the caller is dead code").code == 0
    after = scenario.portq("file-issue", "1", "--json").json()
    assert after["fingerprint"] != before and after["verdict"]["source"] == "review"


def test_report_cites_the_matrix_relative_to_the_root_or_else_the_tree(tmp_path):
    from portq.core.config import relative_label as _relative

    tree = tmp_path / "tree"
    (tree / "matrix").mkdir(parents=True)
    matrix = tree / "matrix" / "rows.toml"
    assert _relative(matrix, tmp_path / "elsewhere", tree) == "matrix/rows.toml"
    assert _relative(matrix, tmp_path, tree) == "tree/matrix/rows.toml"
    assert _relative(matrix, tmp_path / "x") == str(matrix)


def test_size_says_what_to_port_from_the_records(scenario):
    text = report_path(scenario.portq("file-issue", "1")).read_text()
    assert ("What to port: upstream's new gather\\_and\\_maybe\\_dequant\\_cache\\_page; upstream's grid for the launch in "
            "gather\\_and\\_maybe\\_dequant\\_cache; dropping token\\_to\\_seq from gather\\_and\\_maybe\\_dequant\\_cache "
            "where nothing else reads it.") in text
