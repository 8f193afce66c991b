"""Net-zero pairing over long histories: the indexed pairing finds exactly the
pairs of the original candidate-by-candidate search, and reads fingerprints
from diff text exactly as unidiff's hunks give them."""
from __future__ import annotations

import difflib
import hashlib
import random

from portq.classifier.classify import _patch_fingerprint, net_zero_pairs
from portq.core.model import Commit, EntryChanges, FileChange
from portq.upstream.hunks import ensure_hunks


# --- the original pairing, kept as the oracle -------------------------------------


def _oracle_fingerprint(entry: EntryChanges, inverse: bool = False):
    parts = []
    for change in list(entry.commit.changes) or list(entry.owned_changes):
        try:
            hunks = ensure_hunks(change)
        except ValueError:
            hunks = change.hunks
        removed = "\n".join("\n".join(h.removed_text) for h in hunks)
        added = "\n".join("\n".join(h.added_text) for h in hunks)
        blobs = (change.old_blob or "", change.new_blob or "") if not hunks else ("", "")
        paths = (change.old_path or "", change.new_path or "")
        if inverse:
            removed, added, blobs, paths = added, removed, blobs[::-1], paths[::-1]
        parts.append((paths, removed, added, blobs))
    return frozenset(parts) if parts else None


def _oracle_path_key(entry, inverse=False):
    parts = [(c.old_path or "", c.new_path or "") for c in list(entry.commit.changes) or list(entry.owned_changes)]
    if inverse:
        parts = [(new, old) for old, new in parts]
    return frozenset(parts) if parts else None


def _oracle_blob_key(entry, inverse=False):
    parts = []
    for change in list(entry.commit.changes) or list(entry.owned_changes):
        if change.old_blob is None and change.new_blob is None:
            return None
        blobs = (change.old_blob or "", change.new_blob or "")
        parts.append((change.path, blobs[::-1] if inverse else blobs))
    return frozenset(parts) if parts else None


def _oracle_undoes(later, earlier, fingerprints):
    undo_blobs = _oracle_blob_key(later, inverse=True)
    if undo_blobs is not None and undo_blobs == _oracle_blob_key(earlier):
        return True

    def fingerprint(entry, inverse):
        key = (id(entry), inverse)
        if key not in fingerprints:
            fingerprints[key] = _oracle_fingerprint(entry, inverse)
        return fingerprints[key]

    return fingerprint(later, True) == fingerprint(earlier, False)


def oracle_net_zero_pairs(entries):
    pairs = {}
    open_changes = {}
    fingerprints = {}
    for entry in entries:
        undo_paths = _oracle_path_key(entry, inverse=True)
        if undo_paths is None:
            continue
        candidates = open_changes.get(undo_paths, [])
        partner = next((c for c in reversed(candidates) if _oracle_undoes(entry, c, fingerprints)), None)
        if partner is not None:
            candidates.remove(partner)
            pairs[partner.position] = (entry.position, entry.commit.sha)
            pairs[entry.position] = (partner.position, partner.commit.sha)
            continue
        open_changes.setdefault(_oracle_path_key(entry), []).append(entry)
    return pairs


# --- a synthetic history of git-style diffs -------------------------------------------


def _blob(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _file_change(path: str, old: str, new: str) -> FileChange:
    body = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))
    header = f"diff --git a/{path} b/{path}\nindex {_blob(old)[:7]}..{_blob(new)[:7]} 100644\n"
    return FileChange("modified", path, path, old_blob=_blob(old), new_blob=_blob(new), patch=header + body)


class _History:
    """Files edited commit by commit; each commit a list of (path, old, new)."""

    def __init__(self, files: dict[str, list[str]]) -> None:
        self.files = {path: list(lines) for path, lines in files.items()}
        self.commits: list[list[tuple[str, str, str]]] = []

    def commit(self, edits: dict[str, list[str]]) -> int:
        changes = []
        for path, lines in edits.items():
            changes.append((path, "".join(self.files[path]), "".join(lines)))
            self.files[path] = list(lines)
        self.commits.append(changes)
        return len(self.commits) - 1

    def edit(self, path: str, line: int, text: str) -> int:
        lines = list(self.files[path])
        lines[line] = text
        return self.commit({path: lines})

    def revert(self, index: int) -> int:
        """Undo commit ``index`` line by line on today's files (a ``git revert``)."""
        edits = {}
        for path, old, new in self.commits[index]:
            current = list(self.files[path])
            old_lines, new_lines = old.splitlines(True), new.splitlines(True)
            for number, (before, after) in enumerate(zip(old_lines, new_lines)):
                if before != after:
                    assert current[number] == after, "the revert must apply cleanly"
                    current[number] = before
            edits[path] = current
        return self.commit(edits)

    def entries(self) -> list[EntryChanges]:
        """Fresh entries (nothing parsed yet) for one pairing run."""
        return [
            EntryChanges(position, Commit(sha=f"{position:040x}", parents=(), title="t", message="t", author="a",
                                          authored_at="now",
                                          changes=[_file_change(path, old, new) for path, old, new in changes]))
            for position, changes in enumerate(self.commits, 1)
        ]


def _long_history(seed: int = 7, commits: int = 400) -> tuple[_History, int, int]:
    """Many commits editing one file (and sometimes a second), with a revert of
    an early commit in the middle, after other commits changed the file."""
    rng = random.Random(seed)
    history = _History({"ops.py": [f"line {i}\n" for i in range(60)], "util.py": [f"u {i}\n" for i in range(20)]})
    reverted = None
    revert = None
    for step in range(commits):
        if step == commits // 2:
            revert = history.revert(reverted)
            continue
        line = rng.randrange(59) if step != 10 else 59  # step 10 edits a line nobody else touches
        index = history.edit("ops.py", line, f"line {line} v{step}\n")
        if step == 10:
            reverted = index
        if rng.random() < 0.2:
            history.edit("util.py", rng.randrange(20), f"u v{step}\n")
        if step != 10 and rng.random() < 0.1:  # a byte-identical undo right away
            history.revert(index)
    return history, reverted, revert


def test_long_same_file_history_pairs_exactly_as_the_candidate_search():
    history, reverted, revert = _long_history()
    expected = oracle_net_zero_pairs(history.entries())
    pairs = net_zero_pairs(history.entries())
    assert pairs == expected
    assert pairs[reverted + 1][0] == revert + 1  # the mid-history revert of an early commit pairs with it
    assert len(pairs) > 10  # and the immediate byte-identical undos pair too


def test_many_open_commits_with_one_fingerprint_pair_as_the_candidate_search():
    """Lines moving between three values: every commit's lines undo many open
    commits' lines, and a byte-identical undo can have a later line-wise
    match, so which one it pairs with is decided by order alone."""
    rng = random.Random(1)
    history = _History({"a.py": ["x\n"] * 3})
    for _ in range(120):
        line = rng.randrange(3)
        history.edit("a.py", line, rng.choice([v for v in ("x\n", "y\n", "z\n") if v != history.files["a.py"][line]]))
    expected = oracle_net_zero_pairs(history.entries())
    assert net_zero_pairs(history.entries()) == expected
    assert len(expected) > 40


def test_fingerprint_read_from_diff_text_equals_the_one_from_parsed_hunks():
    shapes = [
        ("a.py", "a\nb\nc\n", "a\nB\nc\nd\n"),  # one hunk, a line changed and one added
        ("b.py", "".join(f"{i}\n" for i in range(40)), "".join(f"{i}\n" for i in range(40) if i not in (3, 30))),
        ("b2.py", "".join(f"{i}\n" for i in range(40)),  # two hunks, the second only adds
         "".join(f"{i}\n" + ("extra\n" if i == 30 else "") for i in range(40) if i != 3)),
        ("c.py", "x\r\ny\r\n", "x\r\nz\r\n"),  # CRLF lines
        ("d.py", "p\nq", "p\nr"),  # no newline at end of file
        ("e.py", "m\n\nn\n", "m\nn\n"),  # an empty line removed
        ("f.py", "", "new\n"),  # an added-only hunk
    ]
    for path, old, new in shapes:
        text_entry = EntryChanges(1, Commit("1" * 40, (), "t", "t", "a", "now", changes=[_file_change(path, old, new)]))
        parsed_entry = EntryChanges(1, Commit("1" * 40, (), "t", "t", "a", "now", changes=[_file_change(path, old, new)]))
        assert ensure_hunks(parsed_entry.commit.changes[0]), path
        for inverse in (False, True):
            assert _patch_fingerprint(text_entry, inverse) == _oracle_fingerprint(parsed_entry, inverse), path
        assert not text_entry.commit.changes[0].hunks  # read from text, no hunks built


def test_pairing_reads_each_commits_diff_text_at_most_once(monkeypatch):
    """A commit is compared as a possible revert (its lines swapped) and, left
    open, as a possible reverted commit: one read of its diff serves both."""
    import collections

    import portq.classifier.classify

    history, _, _ = _long_history(commits=120)
    entries = history.entries()
    reads = collections.Counter()
    real = portq.classifier.classify.change_lines
    monkeypatch.setattr(portq.classifier.classify, "change_lines", lambda change: reads.update([id(change)]) or real(change))
    assert net_zero_pairs(entries) == oracle_net_zero_pairs(history.entries())
    assert reads and max(reads.values()) == 1
