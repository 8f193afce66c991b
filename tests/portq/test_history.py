"""Range resolution, validation and the streaming commit reader."""
from __future__ import annotations

import git
import pytest

from portq.core.errors import HistoryError
from portq.upstream.history import Upstream, pr_number, split_records, unquote_path
from tests.portq.fixtures import SAMPLE_ENTRY_ORDER, CommitSpec, build_repository, build_sample_upstream, clone


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    path = tmp_path_factory.mktemp("sample") / "up"
    return path, build_sample_upstream(path)


@pytest.fixture(scope="module")
def commits(sample):
    path, _ = sample
    with Upstream(path, "up") as upstream:
        return list(upstream.commits(upstream.resolve_range("base..tip")))


def test_entries_are_first_parent_commits_numbered_oldest_first(sample):
    path, shas = sample
    with Upstream(path, "up") as upstream:
        revisions = upstream.resolve_range("base..tip")
    assert list(revisions.shas) == [shas[label] for label in SAMPLE_ENTRY_ORDER]


def test_range_accepts_abbreviated_shas_and_branch_names(sample):
    path, shas = sample
    with Upstream(path, "up") as upstream:
        revisions = upstream.resolve_range(f"{shas['base'][:9]}..main")
    assert (revisions.base, revisions.tip) == (shas["base"], shas["schema"])


def test_commits_come_in_entry_order_with_titles_and_pr_numbers(commits, sample):
    _, shas = sample
    assert [c.sha for c in commits] == [shas[label] for label in SAMPLE_ENTRY_ORDER]
    assert commits[0].title == "[Kernel] Bound the gather and make index math 64-bit (#101)"
    assert commits[0].pr == 101
    assert commits[1].authored_at == "2025-01-01T02:00:00+00:00"


def test_merge_is_diffed_against_its_first_parent(commits, sample):
    _, shas = sample
    merge = commits[SAMPLE_ENTRY_ORDER.index("merge")]
    assert merge.parents == (shas["docs"], shas["topic"])
    assert [(c.status, c.path) for c in merge.changes] == [("modified", "vllm/sparse_utils.py")]


def test_rename_is_followed_with_both_paths_and_blobs(commits):
    rename = commits[SAMPLE_ENTRY_ORDER.index("rename")].changes[0]
    assert (rename.status, rename.old_path, rename.new_path) == ("renamed", "vllm/sparse_utils.py", "vllm/v1/sparse_utils.py")
    assert rename.similarity and rename.similarity > 50
    assert rename.old_blob and rename.new_blob and rename.old_blob != rename.new_blob


def test_binary_file_is_recorded_not_parsed(commits):
    change = commits[SAMPLE_ENTRY_ORDER.index("binary")].changes[0]
    assert (change.content, change.path, change.patch) == ("binary", "csrc/attention/lut.bin", "")


def test_empty_commit_is_recorded_with_no_changes(commits):
    assert commits[SAMPLE_ENTRY_ORDER.index("empty")].empty


def test_mode_only_and_submodule_changes_are_recorded(tmp_path):
    build_repository(tmp_path / "up", [
        CommitSpec("base", files={"run.sh": "echo\n"}, tag="a"),
        CommitSpec("exec", modes={"run.sh": 0o755}),
        CommitSpec("sub", submodules={"third/x": "b" * 40}),
    ])
    with Upstream(tmp_path / "up") as upstream:
        found = [c.changes[0].content for c in upstream.commits(upstream.resolve_range("a..HEAD"))]
    assert found == ["mode-only", "submodule"]


def test_blobs_are_read_through_one_batch_process(sample, commits):
    path, _ = sample
    change = commits[0].changes[0]
    with Upstream(path, "up") as upstream:
        first = upstream.read_blob(change.new_blob)
        process = upstream._blobs.process
        second = upstream.read_blob(change.old_blob)
        assert upstream._blobs.process is process
    assert b"if (i < n)" in first and b"if (i < n)" not in second


def test_is_ancestor_answers_true_false_and_unknown(sample):
    path, shas = sample
    with Upstream(path, "up") as upstream:
        assert upstream.is_ancestor(shas["base"], shas["schema"]) is True
        assert upstream.is_ancestor(shas["schema"], shas["base"]) is False
        assert upstream.is_ancestor("c0ffee" * 6 + "beef", shas["schema"]) is None


def test_a_revision_is_resolved_once_however_often_the_classifier_asks(sample, monkeypatch):
    import subprocess

    path, shas = sample
    with Upstream(path, "up") as upstream:
        calls = []
        run = subprocess.run
        monkeypatch.setattr(subprocess, "run", lambda command, **kw: (calls.append(command), run(command, **kw))[1])
        for _ in range(3):
            assert upstream.is_ancestor(shas["base"], shas["schema"]) is True
            assert upstream.is_ancestor(shas["schema"], shas["base"]) is False
            assert upstream.resolve("c0ffee" * 6 + "beef") is None
        assert sum("rev-parse" in command for command in calls) == 3  # base, schema and the unknown one
        assert sum("merge-base" in command for command in calls) == 2


def test_ancestry_of_a_range_s_entries_is_answered_as_merge_base_does_from_one_rev_list_per_pin(
        sample, monkeypatch):
    import subprocess

    path, shas = sample
    expected = {}
    for ancestor in shas.values():
        for descendant in shas.values():
            code = subprocess.run(["git", "merge-base", "--is-ancestor", ancestor, descendant], cwd=path).returncode
            expected[ancestor, descendant] = {0: True, 1: False}[code]
    with Upstream(path, "up") as upstream:
        revisions = upstream.resolve_range("base..tip")
        calls = []
        run = subprocess.run
        monkeypatch.setattr(subprocess, "run", lambda command, **kw: (calls.append(command), run(command, **kw))[1])
        pins = sorted(set(shas.values()))
        for entry in revisions.shas:  # the classifier's questions: does the pin contain the entry?
            for pin in pins:
                assert upstream.is_ancestor(entry, pin) is expected[entry, pin], (entry, pin)
            assert upstream.is_ancestor(entry, "c0ffee" * 6 + "beef") is None
        assert not any("merge-base" in command for command in calls)
        assert sum("rev-list" in command for command in calls) == len(pins)  # one per pin, whatever the entries
        for ancestor in pins:  # and outside the range, one answer per question, as before
            for descendant in pins:
                assert upstream.is_ancestor(ancestor, descendant) is expected[ancestor, descendant]


def test_bare_clone_is_read_like_a_work_tree(sample, tmp_path):
    path, shas = sample
    bare = clone(path, tmp_path / "bare.git", bare=True)
    with Upstream(bare, "up") as upstream:
        assert len(upstream.resolve_range("base..tip")) == len(SAMPLE_ENTRY_ORDER)


# --- bad input ----------------------------------------------------------------


def test_missing_upstream_path_is_an_error(tmp_path):
    with pytest.raises(HistoryError, match=r"upstream up \(.*nowhere\) does not exist"):
        Upstream(tmp_path / "nowhere", "up")


def test_not_a_git_repository_is_an_error(tmp_path):
    with pytest.raises(HistoryError, match=r"is not a git repository"):
        Upstream(tmp_path, "up")


def test_directory_inside_a_repository_is_not_taken_for_it(sample):
    path, _ = sample
    with pytest.raises(HistoryError, match=r"is not a git repository \(it is inside"):
        Upstream(path / "csrc", "up")


@pytest.mark.parametrize("spec", ["base..nope", "nope..tip", "-n..tip"])
def test_unknown_revision_is_an_error(sample, spec):
    path, _ = sample
    with Upstream(path, "up") as upstream, pytest.raises(HistoryError, match=r"unknown revision '(nope|-n)' in range"):
        upstream.resolve_range(spec)


@pytest.mark.parametrize("spec", ["base", "base...tip", "..tip", "base..", "a..b..c"])
def test_malformed_range_is_an_error(sample, spec):
    path, _ = sample
    with Upstream(path, "up") as upstream, pytest.raises(HistoryError, match=r"expected A\.\.B"):
        upstream.resolve_range(spec)


def test_empty_range_is_an_error(sample):
    path, _ = sample
    with Upstream(path, "up") as upstream, pytest.raises(HistoryError, match=r"range tip..main is empty: .* same commit"):
        upstream.resolve_range("tip..main")


def test_reversed_range_says_which_way_round(sample):
    path, _ = sample
    with Upstream(path, "up") as upstream, pytest.raises(HistoryError, match=r"range tip\.\.base is empty: base is an ancestor of tip; did you mean base\.\.tip\?"):
        upstream.resolve_range("tip..base")


def test_shallow_clone_without_the_base_is_an_error(sample, tmp_path):
    path, _ = sample
    shallow = clone(path, tmp_path / "shallow", depth=3)
    with Upstream(shallow, "up") as upstream, pytest.raises(HistoryError, match=r"unknown revision 'base'.*shallow"):
        upstream.resolve_range("base..HEAD")


def test_shallow_clone_missing_commits_inside_the_range_is_an_error(sample, tmp_path):
    path, _ = sample
    shallow = clone(path, tmp_path / "shallow", depth=3)
    # The base arrives on its own, so both ends exist but the middle does not.
    git.Repo(shallow).git.fetch("--depth=1", "origin", "tag", "base")
    with Upstream(shallow, "up") as upstream:
        with pytest.raises(HistoryError, match=r"range base\.\.HEAD reaches past the history of shallow upstream up .*parents of [0-9a-f]{12} are missing"):
            upstream.resolve_range("base..HEAD")


def test_shallow_clone_with_the_whole_range_is_fine(sample, tmp_path):
    path, _ = sample
    shallow = clone(path, tmp_path / "shallow", depth=4)
    with Upstream(shallow, "up") as upstream:
        assert len(upstream.resolve_range("HEAD~2..HEAD")) == 2


# --- small parsers ----------------------------------------------------------


@pytest.mark.parametrize(
    "title, number",
    [("[Kernel] Faster gather (#51739)", 51739), ("Revert (#12) partly", None), ("No number", None)],
)
def test_pr_number_comes_from_the_squash_title_suffix(title, number):
    assert pr_number(title) == number


def test_quoted_paths_are_unquoted():
    assert unquote_path('"dir/caf\\303\\251 \\"x\\".py"') == 'dir/café "x".py'
    assert unquote_path("plain/path.py") == "plain/path.py"


def test_records_split_across_read_boundaries():
    import io

    stream = io.BytesIO(b"\x1eportq a\nbody one\n\x1eportq b\nbody two\n")
    assert list(split_records(stream, chunk_size=3)) == [b"\x1eportq a\nbody one\n", b"\x1eportq b\nbody two\n"]


def test_a_binary_note_is_found_before_the_hunks_and_only_there():
    from portq.upstream.history import _is_binary

    header = "diff --git a/x b/x\nindex 1111111..2222222 100644\n"
    assert _is_binary(header + "Binary files a/x and b/x differ\n")
    assert _is_binary(header + "GIT binary patch\nliteral 3\n")
    text = header + "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-Binary files a/x and b/x differ\n+GIT binary patch\n"
    assert not _is_binary(text)  # a text file's lines that say so are hunk lines, never the note
