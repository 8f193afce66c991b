"""A count the port declares not carried, and the branch that counted it
(docs/tricky-cases.md, "an offset moved out of a branch a declared count
never takes"): ``declared-count-off``.

A C/C++ parameter the tree declares not carried is absent for the port
(``declared-branch-off``): false, so a count of that feature is zero, or one
where one means "none to split" — and a comparison with a literal that gives
the same answer for both (``n_parts > 1`` false, ``n_parts <= 1`` true) is
decided. Once the branch taken is read, a block it leaves is its statements
when no name declared in it is named outside it, and a local declared with no
value whose first use is a plain store at the same level is declared there
with that value. A definition the same before and after then changed only
the path the port does not have: NOT_APPLICABLE/not-carried. A comparison the
two readings disagree on (``n_parts > 0``), a change on the live path, or no
declaration stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

ROT = "csrc/rot/rot.cu"

BEFORE = '''#include <cuda_runtime.h>

__global__ void rot_kernel(float* out, const float* x, const int* shift, int n_parts, int part, int len) {
    int pos = blockIdx.x;
    int at;
    if (n_parts > 1) {
        at = pos + part * len / 2;
    } else {
        int base = (shift == nullptr) ? 0 : shift[blockIdx.y];
        at = pos + base;
    }
    out[pos] = x[at];
}
'''

AFTER = '''#include <cuda_runtime.h>

__global__ void rot_kernel(float* out, const float* x, const int* shift, int n_parts, int part, int len) {
    int pos = blockIdx.x;
    // shift first, whatever the split
    int base = (shift == nullptr) ? 0 : shift[blockIdx.y];
    int at = pos + base;
    if (n_parts > 1) {
        at += part * len / 2;
    }
    out[pos] = x[at];
}
'''

PORT = '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/rot/rot.cu::rot_kernel
// portq: not-carried vllm:csrc/rot/rot.cu::rot_kernel[n_parts] -- one device, no split
// portq: not-carried vllm:csrc/rot/rot.cu::rot_kernel[part] -- one device, no split
__global__ void rotate_kernel(float* out, const float* x, const int* shift, int len) {
    int pos = blockIdx.x;
    int base = (shift == nullptr) ? 0 : shift[blockIdx.y];
    out[pos] = x[pos + base];
}
'''

ENGINE = ('#include "rot.cu"\n\nvoid apply(float* o, const float* x, const int* s, int n) '
          '{ rotate_kernel<<<n, 1>>>(o, x, s, n); }\n')


def _scan(tmp_path, after=AFTER, port=PORT, before=BEFORE):
    tree = {"kernels/rot/rot.cu": port, "kernels/rot/apply.cu": ENGINE}
    return classify_commit(tmp_path, {ROT: before}, {ROT: after}, tree, message="shift before the split")


def test_an_offset_moved_out_of_a_branch_a_declared_count_never_takes_is_not_carried(tmp_path):
    verdict = _scan(tmp_path)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason
    assert "declared-count-off" in verdict.rules, verdict.rules


def test_without_the_declaration_the_moved_offset_is_flagged(tmp_path):
    port = PORT.replace("// portq: not-carried vllm:csrc/rot/rot.cu::rot_kernel[n_parts] -- one device, no split\n", "")
    verdict = _scan(tmp_path, port=port)
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-count-off" not in verdict.rules


def test_a_comparison_zero_and_one_disagree_on_is_not_decided(tmp_path):
    # n_parts > 0: false for none, true for one part; the branch is not decided
    verdict = _scan(tmp_path, after=AFTER.replace("n_parts > 1", "n_parts > 0"),
                    before=BEFORE.replace("n_parts > 1", "n_parts > 0"))
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-count-off" not in verdict.rules


def test_a_change_on_the_live_path_is_flagged(tmp_path):
    # the shift now applies twice on the path the port runs
    verdict = _scan(tmp_path, after=AFTER.replace("int at = pos + base;", "int at = pos + 2 * base;"))
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-count-off" not in verdict.rules


def test_a_block_whose_name_is_read_after_it_is_not_flattened(tmp_path):
    # base declared inside the taken block also names an outer local read after it: not the same scope
    before = BEFORE.replace("    int at;\n", "    int base = 1;\n    int at;\n").replace(
        "out[pos] = x[at];", "out[pos] = x[at] * base;")
    after = AFTER.replace("    int base = (shift", "    int base0 = 1;\n    int base = (shift").replace(
        "out[pos] = x[at];", "out[pos] = x[at] * base0;")
    verdict = _scan(tmp_path, after=after, before=before)
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-count-off" not in verdict.rules


def test_a_local_read_before_its_store_keeps_its_declaration(tmp_path):
    # at is read (uninitialised) before the branch stores it: merging the declaration would hide that
    before = BEFORE.replace("    if (n_parts > 1) {\n        at =", "    out[0] = at;\n    if (n_parts > 1) {\n        at =")
    verdict = _scan(tmp_path, before=before)
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-count-off" not in verdict.rules
