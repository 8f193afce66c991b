"""Human decisions in the tree: ``portq-reviews.toml`` written by ``portq review``, applied by every scan.

A CI cache holding the ledger can be evicted; the reviews file is in the
repository, so a fresh clone with an empty ledger stands at every verdict
the team decided, and a review that no longer fits the matrix or the
upstream history is listed as a problem.
"""

from __future__ import annotations

import tomllib

from tests.portq.test_workflow import team  # noqa: F401  (the fixture)

SEED_RANGE = slice(None)


def with_reviews_file(team) -> None:  # noqa: F811
    config = team.root / "portq.toml"
    config.write_text('reviews = "portq-reviews.toml"\n' + config.read_text())


def scan_seed(team) -> dict:  # noqa: F811
    return team.json("scan", f"{team.vllm[0][:10]}..{team.vllm[1][:10]}")


def test_review_writes_one_sorted_entry_per_commit_and_row(team):  # noqa: F811
    with_reviews_file(team)
    scan_seed(team)
    team.json("review", "1", "--verdict", "NOT_APPLICABLE", "--justification", "not-carried",
              "--because", "the fp8 path is out of scope", "--who", "alice")
    text = (team.root / "portq-reviews.toml").read_text()
    [review] = tomllib.loads(text)["review"]
    assert list(review) == ["upstream", "commit", "row", "verdict", "justification", "because", "who", "when"]
    assert (review["upstream"], review["commit"], review["row"], review["verdict"], review["justification"],
            review["because"], review["who"]) == ("vllm", team.vllm[1], "KERNEL-KV-CACHE", "NOT_APPLICABLE",
                                                  "not-carried", "the fp8 path is out of scope", "alice")
    team.json("review", "1", "--verdict", "NEEDS_REVIEW", "--because", "looked again", "--who", "bob")
    [review] = tomllib.loads((team.root / "portq-reviews.toml").read_text())["review"]
    assert (review["verdict"], review["who"], "justification" in review) == ("NEEDS_REVIEW", "bob", False)


def test_a_fresh_clone_with_an_empty_ledger_stands_at_every_reviewed_verdict(team):  # noqa: F811
    with_reviews_file(team)
    scan_seed(team)
    team.json("review", "1", "--verdict", "NOT_APPLICABLE", "--justification", "not-carried",
              "--because", "out of scope here", "--who", "alice")
    (team.root / "ledger.sqlite").unlink()  # the CI cache was evicted
    scanned = scan_seed(team)
    entry = scanned["entries"][0]
    assert (entry["verdict"], entry["justification"], entry["source"]) == ("NOT_APPLICABLE", "not-carried", "review")
    shown = team.json("show", "1")
    assert (shown["verdict"], shown["reason"], shown["history"][-1]["who"]) == ("NOT_APPLICABLE", "out of scope here",
                                                                                 "alice")
    assert scanned["entries"][0]["scan_verdict"]["verdict"] == "REAL_GAP"  # the scan's disagreement is kept as a proposal
    code, _, err = team.portq("scan", "--fail-on", "REAL_GAP")
    assert code == 0, err  # the human decision is what the gate judges
    before = len(team.json("show", "1")["history"])
    scan_seed(team)
    assert len(team.json("show", "1")["history"]) == before  # applying again records nothing


def test_an_edit_of_the_file_stands_after_the_next_scan(team):  # noqa: F811
    with_reviews_file(team)
    scan_seed(team)
    (team.root / "portq-reviews.toml").write_text(
        f'[[review]]\nupstream = "vllm"\ncommit = "{team.vllm[1]}"\nrow = "KERNEL-KV-CACHE"\n'
        'verdict = "IN_SYNC"\nbecause = "ported in #12"\nwho = "carol"\nwhen = "2025-03-01T00:00:00+00:00"\n')
    code, _, err = team.portq("scan")  # nothing new upstream; the file is applied all the same
    assert code == 0, err
    shown = team.json("show", "1")
    assert (shown["verdict"], shown["source"], shown["history"][-1]["created_at"]) == (
        "IN_SYNC", "review", "2025-03-01T00:00:00+00:00")


def test_undo_takes_the_review_out_of_the_file(team):  # noqa: F811
    with_reviews_file(team)
    scan_seed(team)
    team.json("review", "1", "--verdict", "IN_SYNC", "--because", "done", "--who", "alice")
    team.json("review", "1", "--undo", "--because", "not done after all")
    assert tomllib.loads((team.root / "portq-reviews.toml").read_text()).get("review", []) == []


def test_a_review_of_a_row_or_commit_that_no_longer_exists_is_a_problem(team):  # noqa: F811
    with_reviews_file(team)
    scan_seed(team)
    gone = "0" * 40
    (team.root / "portq-reviews.toml").write_text(
        f'[[review]]\nupstream = "vllm"\ncommit = "{team.vllm[1]}"\nrow = "KERNEL-GONE"\n'
        'verdict = "IN_SYNC"\nbecause = "x"\nwho = "a"\nwhen = "2025-03-01T00:00:00+00:00"\n\n'
        f'[[review]]\nupstream = "vllm"\ncommit = "{gone}"\nrow = "KERNEL-KV-CACHE"\n'
        'verdict = "IN_SYNC"\nbecause = "x"\nwho = "a"\nwhen = "2025-03-01T00:00:00+00:00"\n')
    matrix = team.json("matrix")
    kinds = sorted((p["kind"], p["subject"]) for p in matrix["problems"] if p["kind"].startswith("review-"))
    assert kinds == [("review-commit-missing", f"vllm@{gone[:12]}"), ("review-row-missing", f"vllm@{team.vllm[1][:12]}")]
    code, page, _ = team.portq("matrix")
    assert "no longer defines" in page and "does not have" in page
    code, _, err = team.portq("scan", f"{team.vllm[0][:10]}..{team.vllm[1][:10]}")
    assert code == 0 and err.count("portq: warning:") == 2 and "KERNEL-GONE" in err


def test_a_malformed_reviews_file_is_refused_in_one_line_before_a_scan(team):  # noqa: F811
    with_reviews_file(team)
    (team.root / "portq-reviews.toml").write_text('[[review]]\nupstream = "vllm"\ncommit = "abc"\n')
    code, _, err = team.portq("scan", f"{team.vllm[0][:10]}..{team.vllm[1][:10]}")
    assert code == 2 and err.count("\n") == 1 and "portq-reviews.toml: review 1" in err
    assert not (team.root / "ledger.sqlite").exists() or team.json("status")["upstreams"][0]["wave"] is None
