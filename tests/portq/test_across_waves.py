"""What stands across waves: ranges recorded by SHAs, ``WAVE#N`` everywhere, and open entries whatever wave found them.

A team scans a range, the upstream moves on, it scans what is new: the
entry an older wave flagged is still open, so the summary, the dashboard
and the page keep showing it; the label ``status`` prints for it
(``PORTQ-1#1``) is accepted by every command that takes an entry; and a
range typed with moving names (``HEAD~1..HEAD``) is recorded as the commits
it named then, so nothing suggested later points at another commit.
"""

from __future__ import annotations

from tests.portq.test_workflow import team  # noqa: F401  (the fixture)


def moved_on(team) -> list[str]:  # noqa: F811
    """PORTQ-1 scans the seed-000 range (entry 1 is a REAL_GAP); PORTQ-2 scans two later commits."""
    team.json("scan", f"{team.vllm[0][:10]}..{team.vllm[1][:10]}")
    new = [team.commit_upstream("vllm", "docs (#7)", {"docs/x.md": "x\n"}), team.commit_upstream("vllm", "more (#8)")]
    assert team.json("scan")["wave"] == "PORTQ-2"
    return new


# --- ranges are recorded by their SHAs ---------------------------------------------


def test_a_range_typed_with_moving_names_is_recorded_by_full_shas(team):  # noqa: F811
    full = f"{team.vllm[0]}..{team.vllm[1]}"
    assert team.json("scan", "HEAD~1..HEAD", "--upstream", "vllm")["range"] == full
    assert team.json("show", "1", "--range", "HEAD~1..HEAD", "--upstream", "vllm")["range"] == full
    team.commit_upstream("vllm", "later (#9)")  # HEAD~1..HEAD now names other commits
    assert team.json("show", "1", "--upstream", "vllm")["range"] == full
    assert team.json("summary", "--upstream", "vllm")["wave"]["range"] == full
    code, out, err = team.portq("file-issue", "--dashboard", "--upstream", "vllm")
    assert code == 0, err
    dashboard = (team.root / "reports" / "dashboard.md").read_text()
    assert f"--range {full}" in dashboard and "HEAD" not in dashboard
    report = team.json("file-issue", "1", "--upstream", "vllm")["path"]
    assert f"/vllm/{team.vllm[0][:12]}..{team.vllm[1][:12]}/1-" in report


def test_a_moved_name_no_longer_selects_the_wave_it_named_once(team):  # noqa: F811
    team.json("scan", "HEAD~1..HEAD", "--upstream", "vllm")
    team.commit_upstream("vllm", "later (#9)")
    code, _, err = team.portq("show", "1", "--range", "HEAD~1..HEAD", "--upstream", "vllm")
    assert code == 2 and err.count("\n") == 1 and "no scanned wave" in err


# --- WAVE#N ------------------------------------------------------------------------


def test_every_entry_command_accepts_the_label_status_prints(team):  # noqa: F811
    moved_on(team)
    assert "PORTQ-1#1" in team.portq("status")[1]
    shown = team.json("show", "PORTQ-1#1")
    assert (shown["wave"], shown["entry"], shown["sha"]) == ("PORTQ-1", 1, team.vllm[1])
    assert team.json("show", "1#1")["wave"] == "PORTQ-1"
    assert team.json("file-issue", "PORTQ-1#1")["path"].endswith(".md")
    reviewed = team.json("review", "PORTQ-1#1", "--verdict", "NEEDS_REVIEW", "--because", "checking by hand")
    assert (reviewed["wave"], reviewed["entry"], reviewed["current"]["verdict"]) == ("PORTQ-1", 1, "NEEDS_REVIEW")


def test_a_label_and_a_different_wave_flag_are_refused(team):  # noqa: F811
    moved_on(team)
    code, _, err = team.portq("show", "PORTQ-1#1", "--wave", "PORTQ-2")
    assert code == 2 and err.count("\n") == 1 and "PORTQ-1#1" in err and "--wave PORTQ-2" in err
    for bad in ("PORTQ-1#", "PORTQ-x#1", "#1", "PORTQ-1#0"):
        code, _, err = team.portq("show", bad)
        assert code == 2 and err.count("\n") == 1 and "WAVE#N" in err, (bad, err)


# --- open entries whatever wave found them ------------------------------------------


def test_summary_keeps_what_earlier_waves_left_open(team):  # noqa: F811
    moved_on(team)
    summary = team.json("summary")
    assert summary["wave"]["id"] == "PORTQ-2"
    assert [(e["label"], e["verdict"]) for e in summary["standing_open"]] == [("PORTQ-1#1", "REAL_GAP")]
    code, markdown, _ = team.portq("summary")
    assert code == 0 and "Still open from earlier waves" in markdown and "`PORTQ-1#1`" in markdown
    assert "portq file-issue PORTQ-1#1" in markdown


def test_coverage_holes_found_by_an_earlier_wave_stay_listed(team):  # noqa: F811
    team.json("scan", f"{team.vllm[0][:10]}..{team.vllm[1][:10]}")
    holes_then = team.json("summary")["coverage_holes"]
    assert holes_then, "the seed-000 commit's other half is a coverage hole"
    team.commit_upstream("vllm", "docs (#7)", {"docs/x.md": "x\n"})
    team.json("scan")
    summary = team.json("summary")
    assert [(h["row"], h["path"], h["symbol"]) for h in summary["standing_holes"]] == \
        [(h["row"], h["path"], h["symbol"]) for h in holes_then]
    code, markdown, _ = team.portq("summary")
    holes_section = markdown.split("### Coverage holes", 1)[1]
    assert "None." not in holes_section.split("###", 1)[0]
    code, _, err = team.portq("file-issue", "--dashboard")
    assert code == 0, err
    dashboard = (team.root / "reports" / "dashboard.md").read_text()
    assert holes_then[0]["symbol"] in dashboard.split("Coverage holes", 1)[1]
    assert "PORTQ-1" in dashboard


def test_the_page_shows_earlier_waves_open_entries_and_holes(team):  # noqa: F811
    moved_on(team)
    code, page, err = team.portq("summary", "--html", "-")
    assert code == 0, err
    assert "PORTQ-1" in page and team.vllm[1][:10] in page
    holes = page.split("Coverage holes", 1)[1]
    assert "None" not in holes.split("</table>", 1)[0][:200]
