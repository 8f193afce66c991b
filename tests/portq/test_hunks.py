"""Unified diff text → Hunk records."""
from __future__ import annotations

from portq.core.model import FileChange
from portq.upstream.hunks import ensure_hunks, parse_hunks

PATCH = """\
diff --git a/k.cu b/k.cu
index 1111111..2222222 100644
--- a/k.cu
+++ b/k.cu
@@ -3,3 +3,4 @@ void f() {
   int a;
-  int b;
+  long b;
+  long c;
   int d;
@@ -20 +21 @@
-x
+y
"""


def test_hunks_keep_git_headers_and_line_numbers_on_both_sides():
    first, second = parse_hunks(PATCH)
    assert first.header == "@@ -3,3 +3,4 @@ void f() {"
    assert (first.old_start, first.old_length, first.new_start, first.new_length) == (3, 3, 3, 4)
    assert first.removed_lines == (4,) and first.added_lines == (4, 5)
    assert first.removed_text == ("  int b;",) and first.added_text == ("  long b;", "  long c;")
    assert second.header == "@@ -20 +21 @@" and second.removed_lines == (20,) and second.added_lines == (21,)


def test_a_diff_without_hunks_gives_none():
    assert parse_hunks("diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n") == []


def test_ensure_hunks_parses_once_into_the_change():
    change = FileChange("modified", "k.cu", "k.cu", patch=PATCH)
    hunks = ensure_hunks(change)
    assert change.hunks is hunks and len(hunks) == 2
    assert ensure_hunks(change) is hunks


def test_changed_lines_read_from_diff_text_are_the_hunks_values():
    from portq.upstream.hunks import change_lines

    from_text = change_lines(FileChange("modified", "k.cu", "k.cu", patch=PATCH))
    hunks = parse_hunks(PATCH)
    assert from_text == ([h.removed_text for h in hunks], [h.added_text for h in hunks])


def test_changed_lines_of_a_miscounted_hunk_fall_back_to_unidiff():
    from portq.upstream.hunks import _diff_lines, change_lines

    odd = PATCH.replace("@@ -20 +21 @@", "@@ -20,2 +21 @@")  # the header says two old lines, the body has one
    assert _diff_lines(odd) is None  # not git's plain form: the fast reader declines
    # unidiff refuses it too, so the change contributes no lines rather than wrong ones
    assert change_lines(FileChange("modified", "k.cu", "k.cu", patch=odd)) == ([], [])
