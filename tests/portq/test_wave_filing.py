"""A wave a team can track: file-issue --all, --dashboard (with a fake gh on PATH), their bad input."""
from __future__ import annotations

import json
import re
import os
import shutil
import stat
from pathlib import Path

import pytest

from portq.core.model import FLAGGED
from portq.pipeline.demo import EXAMPLES_DIR, run_demo
from tests.portq.golden.reports.scenario import Scenario
from tests.portq.test_reports import HOSTILE, outside_code

FAKE_GH = """\
#!/usr/bin/env python3
import json, os, sys
log = os.environ["FAKE_GH_LOG"]
with open(log, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["issue", "create"]:
    count = sum(1 for line in open(log) if '"create"' in line)
    print(f"https://github.com/team/port/issues/{100 + count}")
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return run_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def stale(demo, tmp_path, monkeypatch):
    """The demo's stale-tree ledger, copied, with a fake gh first on PATH."""
    tree = EXAMPLES_DIR / "stale-tree"
    shutil.copy(demo.ledgers["stale-tree"], tmp_path / "ledger.sqlite")
    flags = ["--tree", str(tree), "--matrix", str(tree / "kernel-matrix.toml"), "--ledger", str(tmp_path / "ledger.sqlite")]
    for name, built in demo.upstreams.items():
        flags += ["--upstream", f"{name}={built.path}"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GH_LOG", str(tmp_path / "gh.log"))
    scenario = Scenario(tmp_path, "", [])
    scenario.flags = lambda: flags
    return scenario


def gh_calls(scenario) -> list[list[str]]:
    log = scenario.root / "gh.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []


def flagged_vllm(demo):
    return [o for o in demo.outcomes if o.target == "stale-tree" and o.series == "vllm" and o.verdict in FLAGGED]


def test_all_writes_every_flagged_entry_of_the_newest_wave_and_lists_siblings(stale, demo):
    result = stale.portq("file-issue", "--all", "--range", _vllm_range(stale), "--json")
    assert result.code == 0, result.err
    written = result.json()["reports"]
    assert sorted(r["entry"] for r in written) == sorted(o.position for o in flagged_vllm(demo))
    seed = next(Path(r["path"]) for r in written if r["entry"] == 4).read_text()
    siblings = [r for r in written if r["entry"] in (10, 11, 20)]
    assert "Filed with the same standing as the wave's other flagged entries of `KERNEL-ATTN-MLA-SPARSE`" in seed
    for sibling in siblings:
        assert f"entry {sibling['entry']} (`{Path(sibling['path']).name}`)" in seed
    again = stale.portq("file-issue", "--all", "--range", _vllm_range(stale), "--json").json()["reports"]
    assert all(r["written"] is False for r in again)


def test_all_with_gh_files_each_fingerprint_once_and_names_siblings_by_issue(stale, demo):
    first = stale.portq("file-issue", "--all", "--range", _vllm_range(stale), "--gh", "--json")
    assert first.code == 0, first.err
    creates = [c for c in gh_calls(stale) if c[:2] == ["issue", "create"]]
    assert len(creates) == len(flagged_vllm(demo))
    reports = {r["entry"]: r for r in first.json()["reports"]}
    seed = Path(reports[4]["path"]).read_text()
    for entry in (10, 11, 20):
        assert f"entry {entry} (`{reports[entry]['filed']['url']}`)" in seed
    edits = [c for c in gh_calls(stale) if c[:2] == ["issue", "edit"]]
    assert reports[4]["filed"]["url"] in {c[2] for c in edits}  # its body now names the siblings' issues
    second = stale.portq("file-issue", "--all", "--range", _vllm_range(stale), "--gh", "--json")
    assert second.code == 0 and all(r["filed"]["already_filed"] for r in second.json()["reports"])
    assert len([c for c in gh_calls(stale) if c[:2] == ["issue", "create"]]) == len(creates)


def test_dashboard_is_created_once_with_gh_then_edited_in_place(stale):
    created = stale.portq("file-issue", "--dashboard", "--gh", "--json")
    assert created.code == 0, created.err
    [document] = created.json()["reports"]
    assert document["filed"]["action"] == "created"
    [create] = [c for c in gh_calls(stale) if c[:2] == ["issue", "create"]]
    assert create[create.index("--title") + 1] == "portq: port tracking dashboard"
    url = document["filed"]["url"]
    unchanged = stale.portq("file-issue", "--dashboard", "--gh", "--json").json()["reports"][0]
    assert unchanged["filed"] == {"url": url, "action": "unchanged"}
    stale.portq("review", "4", "--range", _vllm_range(stale), "--verdict", "NEEDS_REVIEW", "--because", "launch rewrite to measure first", "--who", "ana")
    edited = stale.portq("file-issue", "--dashboard", "--gh", "--json").json()["reports"][0]
    assert edited["filed"] == {"url": url, "action": "edited"}
    calls = gh_calls(stale)
    assert [c[:2] for c in calls].count(["issue", "create"]) == 1
    [edit] = [c for c in calls if c[:2] == ["issue", "edit"]]
    assert edit[2] == url and "launch rewrite to measure first" in edit[edit.index("--body") + 1]
    assert "by `ana`" in Path(document["path"]).read_text()


def _vllm_range(scenario) -> str:
    from portq.ledger.store import open_ledger

    with open_ledger(scenario.root / "ledger.sqlite", create=False) as ledger:
        return next(w.range_spec for w in ledger.waves() if w.upstream == "vllm")


def test_dashboard_lists_open_entries_per_row_with_first_seen_age_and_holes(stale, demo):
    result = stale.portq("file-issue", "--dashboard", "--json")
    assert result.code == 0, result.err
    text = Path(result.json()["reports"][0]["path"]).read_text()
    assert text.startswith("# portq: port tracking dashboard\n")
    assert "### `KERNEL-ATTN-MLA-SPARSE`" in text and "### `KERNEL-KV-CACHE`" in text
    assert "- [ ] `REAL_GAP` perf: entry 4 of" in text and "first seen `PORTQ-2`, this wave" in text
    assert "## Coverage holes" in text and "map_gather_page_task" in text
    open_count = sum(1 for o in demo.outcomes if o.target == "stale-tree" and o.verdict in FLAGGED)
    assert f"Open entries: {open_count}." in text


def test_dashboard_and_all_need_a_complete_wave(tmp_path):
    from portq.ledger.store import open_ledger

    with open_ledger(tmp_path / "ledger.sqlite"):
        pass
    scenario = Scenario(tmp_path, "", [])
    scenario.flags = lambda: ["--ledger", str(tmp_path / "ledger.sqlite"), "--tree", str(tmp_path)]
    ledger = tmp_path / "ledger.sqlite"
    expected = {"--all": f"portq: error: no scanned wave in {ledger}: run portq scan A..B first",
                "--dashboard": f"portq: error: no complete wave in {ledger}: run portq scan A..B to the end first"}
    for flag, message in expected.items():
        result = scenario.portq("file-issue", flag)
        assert result.code == 2 and result.out == ""
        assert result.err.strip().splitlines() == [message]


def test_hostile_titles_stay_inert_in_the_dashboard():
    from portq.reporting import reports

    hostile = HOSTILE + " </details> ```` <script>x</script>"
    item = {"upstream": "up", "sha": "a" * 40, "short": "a" * 10, "first_seen": "PORTQ-1", "age": 0, "wave": "PORTQ-1",
            "range": "a..b", "entry": 3, "title": hostile, "row": "ROW-A", "verdict": "REAL_GAP", "justification": None,
            "kind": "perf", "report": None, "issue": "javascript:alert(1)", "commit_url": None, "source": "review",
            "who": hostile, "why": hostile}
    page = reports.render("dashboard.md.j2", {
        "open": 1, "latest": [{"upstream": "up", "wave": "PORTQ-1", "range": "a..b"}],
        "open_by_row": [{"row": "ROW-A", "entries": [item]}], "decisions": [item],
        "coverage_holes": [{"upstream": "up", "row": "ROW-A", "path": hostile, "symbol": "s", "entries": [1], "wave": "PORTQ-1"}],
    })
    interpreted = outside_code(page)
    assert not re.search(r"(?<!\\)<(script|/details)", interpreted), "raw HTML outside code"
    assert "javascript:" not in interpreted
    assert "{{ 7*7 }}" in page and "49" not in page
    assert "@maintainer" not in interpreted


def test_dashboard_age_counts_the_waves_since_an_entry_was_first_flagged(stale):
    vllm = _vllm_range(stale)
    rescan = stale.portq("scan", vllm)
    assert rescan.code in (0, 3), rescan.err
    text = Path(stale.portq("file-issue", "--dashboard", "--json").json()["reports"][0]["path"]).read_text()
    assert "entry 4 of `" in text and "first seen `PORTQ-2`, 1 wave ago" in text
    assert "first seen `PORTQ-1`, this wave" in text  # aiter's newest wave is still its first
