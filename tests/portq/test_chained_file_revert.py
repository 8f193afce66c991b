"""A file's change that a later commit restores byte for byte, with commits between that only edit what
it made (rule ``chained-file-revert``): one commit changes a module-level constant a ported kernel reads,
a second wraps that new line in a preprocessor branch (adding lines around it, removing none the file
had before the first), and a third puts the file back exactly as it was before the first. Over the range
the file is as it was (DESIGN §5: a change and its revert inside the range), so the first and the last
commit are NOT_APPLICABLE/``net-zero`` for that file; the commits between are decided on their own.

Unsound neighbours stay flagged: a commit between that also changes a definition of the file (the port
may have followed it, and the restoring commit takes it back), one that removes a line the file had
before the first commit, and a later commit that restores something else.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
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
'''
WIDER = BASE.replace("const int BLOCK_X = 256;", "const int BLOCK_X = 1024;")
OTHER_GPU = WIDER.replace("const int BLOCK_X = 1024;\n", "// 1024 faults on the other GPU\n#if defined(OTHER_GPU)\n"
                          "const int BLOCK_X = 256;\n#else\nconst int BLOCK_X = 1024;\n#endif\n")
# Neighbours between the two: the kernel's body changes too; a line the file had before is removed.
OTHER_GPU_AND_BODY = OTHER_GPU.replace("    y[c] = x[c];\n", "    y[c] = x[c];\n    y[c] += 0.0f;\n")
OTHER_GPU_AND_Y = OTHER_GPU.replace("const int BLOCK_Y = 16;", "const int BLOCK_Y = 8;")
NOTES = "docs/todo.md"

PORT = {"kernels/shuffle.cu": (
    "const int BLOCK_X = 256;\n\n"
    f"// portq: ports vllm:{SOURCE}::ShuffleKernel\n"
    "__global__ void shuffle_kernel(const float* x, float* y, int width)\n{\n"
    "    int c = BLOCK_X * blockIdx.x + threadIdx.x;\n    if (c >= width) return;\n    y[c] = x[c];\n}\n\n"
    "void run_shuffle(const float* x, float* y, int width)\n{\n"
    "    shuffle_kernel<<<(width + 255) / 256, 256>>>(x, y, width);\n}\n")}


def _history(tmp_path, between, restored=BASE):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: BASE, NOTES: "- a\n"}),
        CommitSpec("wider blocks, and a note", files={SOURCE: WIDER, NOTES: "- a\n- b\n"}),
        CommitSpec("the other GPU", files={SOURCE: between}),
        CommitSpec("back to the old blocks", files={SOURCE: restored}),
    ], PORT, matrix=MATRIX_WITH_NORM)
    return verdicts


def test_a_change_restored_byte_for_byte_across_an_edit_of_its_lines_is_net_zero(tmp_path):
    verdicts = _history(tmp_path, OTHER_GPU)
    for position in (1, 3):
        verdict = verdicts[position]
        assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "net-zero"), (position, verdict.reason)
        assert "chained-file-revert" in verdict.rules, (position, verdict.rules)
    assert "entry 3" in verdicts[1].reason and "entry 1" in verdicts[3].reason
    assert "chained-file-revert" not in verdicts[2].rules


def test_a_commit_between_that_changes_a_definition_keeps_both_flagged(tmp_path):
    verdicts = _history(tmp_path, OTHER_GPU_AND_BODY)
    for position in (1, 3):
        assert verdicts[position].verdict in FLAGGED, (position, verdicts[position].reason)
        assert "chained-file-revert" not in verdicts[position].rules


def test_a_commit_between_that_removes_a_line_the_file_had_keeps_both_flagged(tmp_path):
    verdicts = _history(tmp_path, OTHER_GPU_AND_Y)
    for position in (1, 3):
        assert verdicts[position].verdict in FLAGGED, (position, verdicts[position].reason)
        assert "chained-file-revert" not in verdicts[position].rules


def test_a_later_commit_restoring_something_else_keeps_both_flagged(tmp_path):
    verdicts = _history(tmp_path, OTHER_GPU, BASE.replace("const int BLOCK_X = 256;", "const int BLOCK_X = 512;"))
    for position in (1, 3):
        assert verdicts[position].verdict in FLAGGED, (position, verdicts[position].reason)
        assert "chained-file-revert" not in verdicts[position].rules
