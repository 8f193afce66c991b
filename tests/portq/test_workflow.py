"""The tracking workflow as a team runs it: no flags, what is new since last time, status, a CI gate."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from portq.cli import main
from tests.portq.fixtures import CommitSpec, build_repository
from tests.portq.golden import seed000
from tests.portq.golden.pipeline import MATRIX, write_tree
from tests.portq.golden.reports.scenario import UPSTREAM_FILE

AITER_ROW = """
[[row]]
id       = "AITER-ROW"
title    = "an aiter kernel"
upstream = "aiter"
paths    = ["aiter/**"]
"""


@dataclass
class Team:
    """A port with ``portq.toml`` naming two upstreams (vllm and aiter), both cloned beside it."""

    root: Path
    vllm: list[str]
    aiter: list[str]

    def portq(self, *argv: str, stdout: io.StringIO | None = None):
        """``portq ARGV`` run in the port's folder: ``(exit code, stdout, stderr)``."""
        out, err = stdout or io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.root)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(argv))
        finally:
            os.chdir(cwd)
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str):
        code, out, err = self.portq(*argv, "--json")
        assert code == 0, err
        return json.loads(out)

    def commit_upstream(self, name: str, message: str, files: dict[str, str] | None = None) -> str:
        repo = self.root / name
        for path, text in (files or {}).items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
        env = {**os.environ, "GIT_AUTHOR_DATE": "2025-02-01T00:00:00Z", "GIT_COMMITTER_DATE": "2025-02-01T00:00:00Z"}
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "-c", "user.name=U", "-c", "user.email=u@x.invalid", "commit", "-q", "--allow-empty",
                        "-m", message], cwd=repo, check=True, env=env)
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                              text=True).stdout.strip()


@pytest.fixture
def team(tmp_path) -> Team:
    vllm = build_repository(tmp_path / "vllm", [CommitSpec("base", files={UPSTREAM_FILE: seed000.BASE}),
                                                CommitSpec(seed000.TITLE, files={UPSTREAM_FILE: seed000.AFTER})])
    aiter = build_repository(tmp_path / "aiter", [CommitSpec("aiter base", files={"aiter/a.py": "x = 1\n"}),
                                                  CommitSpec("aiter docs", files={"docs/a.md": "hi\n"})])
    write_tree(tmp_path / "tree", seed000.STALE_TREE)
    (tmp_path / "matrix.toml").write_text(MATRIX + AITER_ROW)
    (tmp_path / "portq.toml").write_text('tree = "tree"\nmatrix = "matrix.toml"\nledger = "ledger.sqlite"\n'
                                         '[upstream.vllm]\npath = "vllm"\n[upstream.aiter]\npath = "aiter"\n'
                                         '[upstream.elsewhere]\npath = "no-such-clone"\n')
    return Team(tmp_path, vllm, aiter)


def short_range(shas: list[str]) -> str:
    return f"{shas[0][:10]}..{shas[-1][:10]}"


# --- range resolution --------------------------------------------------------------


def test_the_range_picks_the_upstream_whose_clone_resolves_it(team):
    assert team.json("scan", short_range(team.aiter))["upstream"] == "aiter"
    assert team.json("scan", short_range(team.vllm))["upstream"] == "vllm"


def test_a_range_no_clone_resolves_names_every_candidate(team):
    code, _, err = team.portq("scan", f"{team.vllm[0][:10]}..{team.aiter[1][:10]}")
    assert code == 2 and err.count("\n") == 1
    assert f"no configured upstream resolves range {team.vllm[0][:10]}..{team.aiter[1][:10]}" in err
    assert f"vllm: resolves {team.vllm[0][:10]} only; aiter: resolves {team.aiter[1][:10]} only" in err


def test_a_range_two_clones_resolve_is_an_error(team):
    subprocess.run(["git", "fetch", "-q", str(team.root / "vllm"), "HEAD"], cwd=team.root / "aiter", check=True)
    code, _, err = team.portq("scan", short_range(team.vllm))
    assert code == 2 and "several configured upstreams resolve" in err and "--upstream NAME" in err


def test_naming_the_upstream_skips_the_search(team):
    code, _, err = team.portq("scan", short_range(team.vllm), "--upstream", "aiter")
    assert code == 2 and "unknown revision" in err and "upstream aiter" in err


# --- what is new since the last scan, and status ------------------------------------


def test_scan_without_a_range_needs_an_earlier_wave(team):
    code, _, err = team.portq("scan")
    assert code == 2 and "no earlier wave" in err and "portq scan A..B" in err


def test_status_on_an_empty_ledger_is_an_error(team):
    code, _, err = team.portq("status")
    assert code == 2 and err.count("\n") == 1 and "status needs a ledger" in err


def test_scan_without_a_range_scans_exactly_the_new_commits(team):
    team.json("scan", short_range(team.vllm))
    code, _, err = team.portq("scan")
    assert code == 0 and "Nothing new in vllm since PORTQ-1" in err
    status = team.json("status")["upstreams"]
    assert [(s["upstream"], s["wave"], s["last_commit"], s["beyond"]) for s in status] == [
        ("vllm", "PORTQ-1", team.vllm[1], 0)]
    assert status[0]["open_flagged"] == {"KERNEL-KV-CACHE": {"REAL_GAP": ["PORTQ-1#1"]}}

    new = [team.commit_upstream("vllm", "docs (#7)", {"docs/x.md": "x\n"}), team.commit_upstream("vllm", "more (#8)")]
    assert team.json("status")["upstreams"][0]["beyond"] == 2
    scanned = team.json("scan")
    assert scanned["range"] == f"{team.vllm[1]}..{new[1]}" and scanned["upstream"] == "vllm"  # recorded by full SHAs
    assert [e["sha"] for e in scanned["entries"]] == new and [e["entry"] for e in scanned["entries"]] == [1, 2]
    after = team.json("status")["upstreams"][0]
    assert (after["wave"], after["last_commit"], after["beyond"]) == ("PORTQ-2", new[1], 0)
    assert after["open_flagged"] == {"KERNEL-KV-CACHE": {"REAL_GAP": ["PORTQ-1#1"]}}  # still open from PORTQ-1

    code, out, _ = team.portq("status")
    assert code == 0 and f"vllm: last scanned {new[1][:12]} (PORTQ-2" in out and "KERNEL-KV-CACHE: REAL_GAP 1 (PORTQ-1#1)" in out


def test_to_stops_the_scan_at_a_descendant(team):
    team.json("scan", short_range(team.vllm))
    first = team.commit_upstream("vllm", "one")
    team.commit_upstream("vllm", "two")
    assert [e["sha"] for e in team.json("scan", "--to", first[:10])["entries"]] == [first]


def test_to_that_does_not_descend_from_the_last_scan_is_an_error(team):
    team.json("scan", short_range(team.vllm))
    code, _, err = team.portq("scan", "--to", team.vllm[0][:10])
    assert code == 2 and err.count("\n") == 1 and f"does not descend from {team.vllm[1][:12]}" in err
    code, _, err = team.portq("scan", "--to", "no-such-rev")
    assert code == 2 and "--to no-such-rev: unknown revision" in err


def test_to_with_a_range_is_an_error(team):
    code, _, err = team.portq("scan", short_range(team.vllm), "--to", "HEAD")
    assert code == 2 and "--to HEAD: goes with a scan without a range" in err


def test_continuing_with_waves_of_two_upstreams_needs_a_choice(team):
    team.json("scan", short_range(team.vllm))
    team.json("scan", short_range(team.aiter))
    code, _, err = team.portq("scan")
    assert code == 2 and "complete waves of several upstreams" in err
    code, _, err = team.portq("scan", "--upstream", "aiter")
    assert code == 0 and "Nothing new in aiter since PORTQ-2" in err


# --- attention first, standing verdicts, the CI gate ----------------------------------


def test_fail_on_exits_3_with_a_standing_gap_and_0_once_it_is_reviewed(team):
    code, out, err = team.portq("scan", short_range(team.vllm), "--fail-on", "REAL_GAP")
    assert code == 3 and "--fail-on REAL_GAP: 1 entry of upstream vllm stands at those verdicts:" in err
    assert gate_lines(err) == [f"  PORTQ-1#1  {team.vllm[1][:12]}  KERNEL-KV-CACHE  REAL_GAP"]
    assert team.portq("scan", short_range(team.vllm), "--fail-on", "inert,needs-review")[0] == 0
    assert team.portq("review", "1", "--verdict", "IN_SYNC", "--because", "ported in the tree already")[0] == 0
    code, out, _ = team.portq("scan", short_range(team.vllm), "--fail-on", "REAL_GAP", "--all")
    assert code == 0
    assert out.splitlines() == [f"1  {team.vllm[1][:10]}  IN_SYNC (review; scan proposes REAL_GAP)  KERNEL-KV-CACHE  "
                                f"{seed000.TITLE}"]
    entry = team.json("scan", short_range(team.vllm))["entries"][0]
    assert (entry["verdict"], entry["source"], entry["scan_verdict"]) == (
        "IN_SYNC", "review", {"verdict": "REAL_GAP", "justification": None})


@pytest.mark.parametrize("value", ["BOGUS", "REAL_GAP,", ""])
def test_fail_on_an_unknown_verdict_is_an_error_before_scanning(team, value):
    code, _, err = team.portq("scan", short_range(team.vllm), "--fail-on", value)
    assert code == 2 and err.count("\n") == 1 and "expected one or more of REAL_GAP" in err
    assert not (team.root / "ledger.sqlite").exists()


def test_all_prints_one_line_per_entry_in_a_pipe(team):
    for n in range(3):
        team.commit_upstream("aiter", f"[Misc] a title long enough to wrap at eighty columns in a pipe, number {n} "
                             + "x" * 80, {f"aiter/deep/path/{'d' * 60}/f{n}.py": f"y = {n}\n"})
    code, out, _ = team.portq("scan", f"{team.aiter[0][:10]}..HEAD", "--all")
    assert code == 0 and len(out.splitlines()) == 4
    assert all(line.startswith(f"{n}  ") for n, line in enumerate(out.splitlines(), 1))
    assert "number 2 " + "x" * 80 in out.splitlines()[-1]


@pytest.mark.parametrize("value", ["a..b", "HEAD\n", "-x"])
def test_to_takes_one_revision(team, value):
    team.json("scan", short_range(team.vllm))
    code, _, err = team.portq("scan", f"--to={value}")
    assert code == 2 and err.count("\n") == 1 and "expected one revision on one line" in err


# --- the gate judges the ledger, not only the new wave ---------------------------------


def gate_lines(err: str) -> list[str]:
    """The lines of stderr naming an entry that trips ``--fail-on``."""
    return [line for line in err.splitlines() if line.startswith("  PORTQ-")]


def test_nothing_new_with_a_standing_gap_fails_the_gate(team):
    assert team.portq("scan", short_range(team.vllm))[0] == 0  # no gate: the gap is recorded, exit 0
    code, out, err = team.portq("scan", "--fail-on", "REAL_GAP")
    assert code == 3 and out == "" and "Nothing new in vllm since PORTQ-1" in err
    assert "--fail-on REAL_GAP: 1 entry of upstream vllm stands at those verdicts" in err
    assert gate_lines(err) == [f"  PORTQ-1#1  {team.vllm[1][:12]}  KERNEL-KV-CACHE  REAL_GAP"]


def test_a_gap_reviewed_away_no_longer_fails_the_gate(team):
    team.json("scan", short_range(team.vllm))
    assert team.portq("review", "1", "--verdict", "NOT_APPLICABLE", "--justification", "no-row",
                      "--because", "this kernel is not shipped")[0] == 0
    code, _, err = team.portq("scan", "--fail-on", "REAL_GAP")
    assert code == 0 and gate_lines(err) == [] and "--fail-on" not in err
    assert team.portq("review", "1", "--undo", "--because", "it is shipped after all")[0] == 0
    code, _, err = team.portq("scan", "--fail-on", "REAL_GAP")
    assert code == 3 and len(gate_lines(err)) == 1


def test_a_gap_of_another_upstream_does_not_fail_its_gate(team):
    team.json("scan", short_range(team.vllm))
    code, _, err = team.portq("scan", short_range(team.aiter), "--fail-on", "REAL_GAP")
    assert code == 0 and gate_lines(err) == []
    code, _, err = team.portq("scan", "--upstream", "aiter", "--fail-on", "REAL_GAP")
    assert code == 0 and "Nothing new in aiter" in err and gate_lines(err) == []


def test_a_new_wave_with_a_gap_fails_the_gate(tmp_path):
    vllm = build_repository(tmp_path / "vllm", [CommitSpec("base", files={UPSTREAM_FILE: seed000.BASE}),
                                                CommitSpec("docs (#5)", files={"docs/x.md": "x\n"}),
                                                CommitSpec(seed000.TITLE, files={UPSTREAM_FILE: seed000.AFTER})])
    write_tree(tmp_path / "tree", seed000.STALE_TREE)
    (tmp_path / "matrix.toml").write_text(MATRIX)
    (tmp_path / "portq.toml").write_text('tree = "tree"\nmatrix = "matrix.toml"\nledger = "ledger.sqlite"\n'
                                         '[upstream.vllm]\npath = "vllm"\n')
    team = Team(tmp_path, vllm, [])
    code, _, err = team.portq("scan", f"{vllm[0][:10]}..{vllm[1][:10]}", "--fail-on", "REAL_GAP")
    assert code == 0 and gate_lines(err) == []
    code, out, err = team.portq("scan", "--fail-on", "REAL_GAP,NEEDS_REVIEW")
    assert code == 3 and out.startswith(f"PORTQ-2 {vllm[1]}..") and "Flagged entries: 1" in out
    assert "--fail-on NEEDS_REVIEW,REAL_GAP: 1 entry of upstream vllm stands at those verdicts" in err
    assert gate_lines(err) == [f"  PORTQ-2#1  {vllm[2][:12]}  KERNEL-KV-CACHE  REAL_GAP"]


@pytest.mark.parametrize("value", ["BOGUS", "REAL_GAP,", ""])
def test_fail_on_is_validated_when_nothing_is_new_too(team, value):
    team.json("scan", short_range(team.vllm))
    code, _, err = team.portq("scan", "--fail-on", value)
    assert code == 2 and err.count("\n") == 1 and "--fail-on" in err and "expected one or more of REAL_GAP" in err


def test_fail_on_is_described_in_help(team, capsys):
    with pytest.raises(SystemExit):
        main(["scan", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "standing verdict of any entry of the upstream's ledger" in text


# --- status of an unfinished wave -----------------------------------------------------


def interrupt_a_scan(team, monkeypatch, *argv: str) -> None:
    """``portq scan ARGV`` stopped by Ctrl-C while it records its first batch: an interrupted wave."""
    import portq.ledger.store

    def interrupted(self, wave, entries):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(portq.ledger.store.Ledger, "record_scan_entries", interrupted)
        assert team.portq("scan", *argv)[0] == 130


def test_status_of_an_interrupted_wave_prints_the_command_that_resumes_it(team, monkeypatch):
    interrupt_a_scan(team, monkeypatch, short_range(team.vllm))
    code, out, _ = team.portq("status")
    resume = f"portq scan {team.vllm[0][:12]}..{team.vllm[1][:12]} --upstream vllm"
    assert code == 0 and out.splitlines() == [f"vllm: no complete wave yet; PORTQ-1 is interrupted with 0 of 1 entries "
                                              f"recorded: resume it with {resume}"]
    assert "portq scan A..B" not in out
    resumed = team.json("status")["upstreams"][0]["resume"]
    assert (resumed["wave"], resumed["command"]) == ("PORTQ-1", resume)
    code, _, err = team.portq(*resume.split()[1:])
    assert code == 0 and "PORTQ-1 was unfinished and is now complete." in err
    assert team.json("status")["upstreams"][0]["wave"] == "PORTQ-1"


def test_status_names_the_resume_beside_a_complete_wave(team, monkeypatch):
    team.json("scan", short_range(team.vllm))
    new = team.commit_upstream("vllm", "more (#8)")
    interrupt_a_scan(team, monkeypatch)
    code, out, _ = team.portq("status")
    assert code == 0 and out.splitlines()[1:3] == [
        "  not complete: PORTQ-2 (interrupted)",
        f"  PORTQ-2 is interrupted with 0 of 1 entries recorded: resume it with portq scan {team.vllm[1][:12]}..{new[:12]} "
        "--upstream vllm"]
    assert team.json("status")["upstreams"][0]["resume"]["wave"] == "PORTQ-2"


def test_status_of_a_running_wave_says_the_same_command_resumes_it_if_killed(team):
    from portq.ledger.store import open_ledger

    with open_ledger(team.root / "ledger.sqlite") as ledger:
        ledger.begin_wave(range_spec="main~1..main", upstream="aiter", base_sha=team.aiter[0], tip_sha=team.aiter[1],
                          tree="tree", entry_count=1, matrix_fingerprint="m", tree_fingerprint="t")
    code, out, _ = team.portq("status")
    assert code == 0 and out.splitlines() == [
        f"aiter: no complete wave yet; PORTQ-1 is running with 0 of 1 entries recorded (a scan in progress, or one "
        f"that was killed: then portq scan {team.aiter[0][:12]}..{team.aiter[1][:12]} --upstream aiter resumes it)"]


def test_scan_without_a_range_after_an_interrupted_first_wave_resumes_it(team, monkeypatch):
    """A CI job cancelled during its first scan reruns the same ``portq scan``: that finishes the wave."""
    interrupt_a_scan(team, monkeypatch, short_range(team.vllm))
    code, _, err = team.portq("scan", "--upstream", "vllm")
    assert code == 0, err
    assert err.splitlines()[0] == (f"Resuming PORTQ-1 ({team.vllm[0][:12]}..{team.vllm[1][:12]}), interrupted "
                                   "with 0 of 1 entries recorded.")
    assert "PORTQ-1 was unfinished and is now complete." in err
    assert team.json("status")["upstreams"][0]["wave"] == "PORTQ-1"
    assert team.json("status")["upstreams"][0]["resume"] is None


def test_scan_to_a_revision_after_an_interrupted_first_wave_names_the_resume(team, monkeypatch):
    """``--to`` asks for a tip of its own: the unfinished wave is named, not silently resumed to another tip."""
    interrupt_a_scan(team, monkeypatch, short_range(team.vllm))
    code, _, err = team.portq("scan", "--upstream", "vllm", "--to", team.vllm[1])
    resume = f"portq scan {team.vllm[0][:12]}..{team.vllm[1][:12]} --upstream vllm"
    assert code == 2 and err.count("\n") == 1 and f"PORTQ-1 of upstream vllm is interrupted: resume it with {resume}" in err
    assert team.portq(*resume.split()[1:])[0] == 0
    code, _, err = team.portq("scan", "--upstream", "vllm", "--fail-on", "REAL_GAP")
    assert code == 3 and "Nothing new in vllm since PORTQ-1" in err
