"""A file a later commit puts back byte for byte, where a commit between edits a definition no port carries
(rule ``chained-file-revert``, its window form): one commit changes a module-level constant a ported kernel
reads and adds a branch to a sibling kernel nobody ports; a second moves a line the sibling had before into
that branch; a third puts the file back exactly as it was before the first. Over the range the file is as it
was (DESIGN §5: a change and its revert inside the range), and what the commit between changed was never
any port's, so no port can have followed it: all three are NOT_APPLICABLE/``net-zero`` for that file.

Unsound neighbours stay flagged: the commit between also changing the ported kernel (covered by
``test_chained_file_revert``), the commit between removing a module-level line the file had before the first
commit (outside the sibling), and a later commit that leaves the file otherwise.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_chained_file_revert import NOTES, PORT
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

BASE = '''\
#include "row_norm.h"

const int BLOCK_X = 256;
const int BLOCK_Y = 16;

__global__ void ShuffleKernel(const float* x, float* y, int width)
{
    int c = BLOCK_X * blockIdx.x + threadIdx.x;
    if (c >= width) return;
    y[c] = x[c];
}

__global__ void ScatterKernel(const float* x, float* y, const int* idx, int width, bool dense)
{
    int c = BLOCK_Y * blockIdx.x + threadIdx.x;
    int g = idx[c];
    if (c >= width) return;
    y[g] = x[c];
}
'''
WIDER = BASE.replace("const int BLOCK_X = 256;", "const int BLOCK_X = 1024;").replace(
    "    y[g] = x[c];\n", "    if (dense) { y[c] = x[c]; return; }\n    y[g] = x[c];\n")
# Between: the sibling's index load moves under the branch (a line the file had, inside the sibling).
MOVED = WIDER.replace("    int g = idx[c];\n", "").replace("    y[g] = x[c];\n", "    int g = idx[c];\n    y[g] = x[c];\n")
# Neighbour between: the same, and a module-level line the file had is changed too.
MOVED_AND_Y = MOVED.replace("const int BLOCK_Y = 16;", "const int BLOCK_Y = 8;")


def _history(tmp_path, between, restored=BASE):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: BASE, NOTES: "- a\n"}),
        CommitSpec("wider blocks and a dense path, and a note", files={SOURCE: WIDER, NOTES: "- a\n- b\n"}),
        CommitSpec("load the index only when scattering", files={SOURCE: between}),
        CommitSpec("back to the old kernels", files={SOURCE: restored}),
    ], PORT, matrix=MATRIX_WITH_NORM)
    return verdicts


def test_a_window_whose_commit_between_edits_only_an_unported_definition_is_net_zero(tmp_path):
    verdicts = _history(tmp_path, MOVED)
    for position in (1, 2, 3):
        verdict = verdicts[position]
        assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "net-zero"), (position, verdict.reason)
        assert "chained-file-revert" in verdict.rules, (position, verdict.rules)
    assert "entry 3" in verdicts[1].reason and "entry 3" in verdicts[2].reason and "entry 1" in verdicts[3].reason


def test_a_commit_between_that_also_changes_a_line_the_file_had_outside_it_keeps_the_pair_flagged(tmp_path):
    verdicts = _history(tmp_path, MOVED_AND_Y)
    for position in (1, 3):
        assert verdicts[position].verdict in FLAGGED, (position, verdicts[position].reason)
        assert "chained-file-revert" not in verdicts[position].rules
    assert "chained-file-revert" not in verdicts[2].rules


def test_a_later_commit_leaving_the_file_otherwise_keeps_the_window_flagged(tmp_path):
    verdicts = _history(tmp_path, MOVED, BASE.replace("const int BLOCK_X = 256;", "const int BLOCK_X = 512;"))
    for position in (1, 3):
        assert verdicts[position].verdict in FLAGGED, (position, verdicts[position].reason)
    for position in (1, 2, 3):
        assert "chained-file-revert" not in verdicts[position].rules
