"""An anchor whose upstream definition is removed with no move followed has LOST its symbol
(DESIGN: issue 24 class 2, never a silent not-ported). From then on portq can no longer establish
that nothing in-tree ports a definition that first appeared in the row's files at or after the
loss: it may be what the lost definition became (rule ``lost-anchor-successor``). A later change to
such a definition is NEEDS_REVIEW, naming the lost anchor and the commit that lost it, never
not-ported. Definitions that were already there before the loss (unanchored then) stay not-ported,
and with no anchor lost an unanchored definition is not-ported as before."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "GEMM"
title    = "Scaled matrix product"
upstream = "vllm"
paths    = ["ops/*.py", "kernels/*.cuh", "kernels/impl/*.cuh"]
tree     = ["port/"]
tests    = ["tests/"]
"""

# --- Python -------------------------------------------------------------------------------

OLD_HOST = '''\
def scaled_mm(a, b, scale):
    out = torch.empty(a.shape[0], b.shape[1])
    for i in range(a.shape[0]):
        out[i] = (a[i] @ b) * scale[i]
    return out
'''

HELPER = '''\
def pad_rows(x, multiple):
    rows = (x.shape[0] + multiple - 1) // multiple * multiple
    return torch.nn.functional.pad(x, (0, 0, 0, rows - x.shape[0]))
'''

NEW_API = '''\
import torch


def mm_nt(lhs, rhs, lhs_scale, rhs_scale, acc=None, recipe=(1, 128, 128)):
    check_layout(lhs, rhs, recipe)
    result = launch_jit("mm_nt", lhs, rhs, lhs_scale, rhs_scale, acc)
    return result if acc is None else result + acc
'''

NEW_API_LATER = NEW_API.replace("result + acc", "acc.add_(result)")

SIBLING = '''

def mm_tn(lhs, rhs, lhs_scale, rhs_scale):
    return launch_jit("mm_tn", lhs.t(), rhs, lhs_scale, rhs_scale, None)
'''

PY_TREE = {
    "port/host.py": '''\
import torch


# portq: ports vllm:ops/gemm.py::scaled_mm
def scaled_mm(a, b, scale):
    out = torch.empty(a.shape[0], b.shape[1])
    for i in range(a.shape[0]):
        out[i] = (a[i] @ b) * scale[i]
    return out
''',
    "port/model.py": "from port.host import scaled_mm\n\n\ndef run(a, b, s):\n    return scaled_mm(a, b, s)\n",
}


def _python_history(lose: bool):
    base = "import torch\n\n\n" + OLD_HOST + "\n\n" + HELPER
    kept = "import torch\n\n\n" + (HELPER if lose else OLD_HOST + "\n\n" + HELPER)
    return [
        CommitSpec("base", files={"ops/gemm.py": base}),
        CommitSpec("rewrite the host", files={"ops/gemm.py": kept, "ops/api.py": NEW_API}),
        CommitSpec("accumulate in place", files={"ops/api.py": NEW_API.replace("result + acc", "acc.add_(result)")}),
        CommitSpec("pad to 64", files={"ops/gemm.py": kept.replace("- 1) // multiple", "- 1) // max(multiple, 64)")}),
        CommitSpec("a transposed variant", files={"ops/api.py": NEW_API_LATER + SIBLING}),
        CommitSpec("check the variant", files={"ops/api.py": NEW_API_LATER + SIBLING.replace(
            "    return", "    check_layout(lhs, rhs, (1, 128, 128))\n    return")}),
    ]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol.split("::")[-1] == name)


def test_a_definition_first_seen_when_an_anchor_was_lost_is_reviewed_not_unported(tmp_path):
    verdicts, shas = classify_history(tmp_path, _python_history(lose=True), PY_TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "mm_nt")
    assert later.verdict == NEEDS_REVIEW, later.reason
    assert "lost-anchor-successor" in later.rules
    assert "scaled_mm" in later.reason and shas[1][:10] in later.reason
    lost = [e for e in later.evidence if e.kind == "anchor-lost"]
    assert lost and "scaled_mm" in lost[0].message and shas[1][:10] in lost[0].message
    assert any(e.kind == "anchor" and "ops/gemm.py::scaled_mm" in (e.subject or "") for e in later.evidence)


def test_a_definition_that_was_there_before_the_loss_stays_not_ported(tmp_path):
    verdicts, _ = classify_history(tmp_path, _python_history(lose=True), PY_TREE, matrix=MATRIX)
    older = _symbol(verdicts[3], "pad_rows")
    assert (older.verdict, older.justification) == (NOT_APPLICABLE, "not-ported"), older.reason
    assert "lost-anchor-successor" not in older.rules


def test_a_definition_a_later_commit_adds_to_a_successor_file_is_a_new_sibling_not_ported(tmp_path):
    verdicts, _ = classify_history(tmp_path, _python_history(lose=True), PY_TREE, matrix=MATRIX)
    sibling = _symbol(verdicts[5], "mm_tn")
    assert (sibling.verdict, sibling.justification) == (NOT_APPLICABLE, "not-ported"), sibling.reason
    assert "lost-anchor-successor" not in sibling.rules


def test_with_no_anchor_lost_a_new_definition_stays_not_ported(tmp_path):
    verdicts, _ = classify_history(tmp_path, _python_history(lose=False), PY_TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "mm_nt")
    assert (later.verdict, later.justification) == (NOT_APPLICABLE, "not-ported"), later.reason
    assert "lost-anchor-successor" not in later.rules


# --- C++ ----------------------------------------------------------------------------------

OLD_KERNEL = '''\
template <int BLOCK>
__global__ void scaled_kernel(float *out, const float *a, const float *s, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) out[i] = a[i] * s[i / BLOCK];
}
'''

CPP_HELPER = '''\
__device__ int ceil_blocks(int n, int block) {
  return (n + block - 1) / block;
}
'''

NEW_KERNEL = '''\
template <int BLOCK_M, int BLOCK_N, int STAGES>
__global__ void impl_1d2d(float *d, const float *lhs, const float *rhs, const float *sfa, int m, int k) {
  __shared__ float tile[BLOCK_M * BLOCK_N];
  for (int stage = 0; stage < STAGES; ++stage) {
    tile[threadIdx.x] = lhs[blockIdx.x * k + stage] * sfa[stage];
  }
  __syncthreads();
  d[blockIdx.x * BLOCK_N + threadIdx.x] = tile[threadIdx.x] * rhs[threadIdx.x];
}
'''

CPP_TREE = {
    "port/kernel.cuh": '''\
// portq: ports vllm:kernels/gemm.cuh::scaled_kernel
template <int BLOCK>
__global__ void scaled_kernel(float *out, const float *a, const float *s, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) out[i] = a[i] * s[i / BLOCK];
}
''',
    "port/launch.cu": "#include \"kernel.cuh\"\nvoid run(float *o, const float *a, const float *s, int n) {\n"
                      "  scaled_kernel<128><<<(n + 127) / 128, 128>>>(o, a, s, n);\n}\n",
}


def _cpp_history(lose: bool):
    base = CPP_HELPER + "\n" + OLD_KERNEL
    after = CPP_HELPER + "\n" + (NEW_KERNEL if lose else OLD_KERNEL + "\n" + NEW_KERNEL)
    return [
        CommitSpec("base", files={"kernels/gemm.cuh": base}),
        CommitSpec("rewrite the kernel", renames={"kernels/gemm.cuh": "kernels/impl/gemm_1d2d.cuh"},
                   files={"kernels/impl/gemm_1d2d.cuh": after}),
        CommitSpec("scale the tile", files={"kernels/impl/gemm_1d2d.cuh": after.replace(
            "* rhs[threadIdx.x]", "* rhs[threadIdx.x] * 0.5f")}),
        CommitSpec("round up", files={"kernels/impl/gemm_1d2d.cuh": after.replace(
            "(n + block - 1) / block", "(n + block - 1) / block + 0")}),
    ]


def test_a_cpp_kernel_first_seen_when_an_anchor_was_lost_is_reviewed_not_unported(tmp_path):
    verdicts, shas = classify_history(tmp_path, _cpp_history(lose=True), CPP_TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "impl_1d2d")
    assert later.verdict == NEEDS_REVIEW, later.reason
    assert "lost-anchor-successor" in later.rules
    assert "scaled_kernel" in later.reason and shas[1][:10] in later.reason


def test_a_cpp_helper_that_was_there_before_the_loss_stays_not_ported(tmp_path):
    verdicts, _ = classify_history(tmp_path, _cpp_history(lose=True), CPP_TREE, matrix=MATRIX)
    older = _symbol(verdicts[3], "ceil_blocks")
    assert (older.verdict, older.justification) == (NOT_APPLICABLE, "not-ported"), older.reason


def test_with_no_cpp_anchor_lost_a_new_kernel_stays_not_ported(tmp_path):
    verdicts, _ = classify_history(tmp_path, _cpp_history(lose=False), CPP_TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "impl_1d2d")
    assert (later.verdict, later.justification) == (NOT_APPLICABLE, "not-ported"), later.reason


# --- the loss ends; the candidate's change set aside as a ported one's would be -------------------


def _python_history_redefined():
    """The lost name is defined again where it was: from then on the anchor names a definition again."""
    base = "import torch\n\n\n" + OLD_HOST + "\n\n" + HELPER
    kept = "import torch\n\n\n" + HELPER
    back = "import torch\n\n\n" + OLD_HOST.replace("out[i] = ", "out[i] = 1.0 * ") + "\n\n" + HELPER
    return [
        CommitSpec("base", files={"ops/gemm.py": base}),
        CommitSpec("rewrite the host", files={"ops/gemm.py": kept, "ops/api.py": NEW_API}),
        CommitSpec("accumulate in place", files={"ops/api.py": NEW_API_LATER}),
        CommitSpec("the host again", files={"ops/gemm.py": back}),
        CommitSpec("accumulate into the result", files={"ops/api.py": NEW_API.replace("result + acc", "result.add_(acc)")}),
    ]


def test_once_the_lost_name_is_defined_again_where_it_was_the_anchor_is_not_lost(tmp_path):
    verdicts, _ = classify_history(tmp_path, _python_history_redefined(), PY_TREE, matrix=MATRIX)
    before = _symbol(verdicts[2], "mm_nt")
    assert before.verdict == NEEDS_REVIEW and "lost-anchor-successor" in before.rules, before.reason
    after = _symbol(verdicts[4], "mm_nt")
    assert (after.verdict, after.justification) == (NOT_APPLICABLE, "not-ported"), after.reason
    assert "lost-anchor-successor" not in after.rules


UTIL = '''\
def check_layout(lhs, rhs, recipe):
    assert lhs.shape[1] == rhs.shape[0], recipe
'''


def _python_history_renamed_helper(body_changed: bool):
    """The candidate's only change calls a helper by the new name the same commit gives it."""
    api = NEW_API.replace("    check_layout(", "    util.check_layout(")
    renamed = UTIL.replace("def check_layout", "def verify_layout")
    if body_changed:
        renamed = renamed.replace("rhs.shape[0]", "rhs.shape[1]")
    base = "import torch\n\n\n" + OLD_HOST
    return [
        CommitSpec("base", files={"ops/gemm.py": base, "ops/util.py": UTIL}),
        CommitSpec("rewrite the host", files={"ops/gemm.py": "import torch\n", "ops/api.py": api}),
        CommitSpec("rename the check", files={"ops/util.py": renamed,
                                              "ops/api.py": api.replace("util.check_layout(", "util.verify_layout(")}),
    ]


def test_a_candidate_whose_change_a_ported_definition_would_have_set_aside_is_not_reviewed(tmp_path):
    verdicts, _ = classify_history(tmp_path, _python_history_renamed_helper(False), PY_TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "mm_nt")
    assert (later.verdict, later.justification) == (NOT_APPLICABLE, "cosmetic"), later.reason
    assert "lost-anchor-successor" not in later.rules


def test_a_candidate_calling_a_renamed_helper_whose_body_changed_is_reviewed(tmp_path):
    verdicts, _ = classify_history(tmp_path, _python_history_renamed_helper(True), PY_TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "mm_nt")
    assert later.verdict == NEEDS_REVIEW and "lost-anchor-successor" in later.rules, later.reason


CPP_CHECKED = NEW_KERNEL.replace("  __syncthreads();\n", "  __syncthreads();\n  LIB_ASSERT(m > 0, \"m must be positive\");\n")


def _cpp_history_message():
    """The candidate kernel's only change rewords an assertion's message."""
    return [
        CommitSpec("base", files={"kernels/gemm.cuh": CPP_HELPER + "\n" + OLD_KERNEL}),
        CommitSpec("rewrite the kernel", renames={"kernels/gemm.cuh": "kernels/impl/gemm_1d2d.cuh"},
                   files={"kernels/impl/gemm_1d2d.cuh": CPP_HELPER + "\n" + CPP_CHECKED}),
        CommitSpec("reword", files={"kernels/impl/gemm_1d2d.cuh": CPP_HELPER + "\n" + CPP_CHECKED.replace(
            "m must be positive", "expected a positive m")}),
        CommitSpec("scale the tile", files={"kernels/impl/gemm_1d2d.cuh": CPP_HELPER + "\n" + CPP_CHECKED.replace(
            "m must be positive", "expected a positive m").replace("* rhs[threadIdx.x]", "* rhs[threadIdx.x] * 0.5f")}),
    ]


def test_a_cpp_candidate_whose_assertion_message_alone_changed_is_cosmetic(tmp_path):
    verdicts, _ = classify_history(tmp_path, _cpp_history_message(), CPP_TREE, matrix=MATRIX)
    reworded = _symbol(verdicts[2], "impl_1d2d")
    assert (reworded.verdict, reworded.justification) == (NOT_APPLICABLE, "cosmetic"), reworded.reason
    changed = _symbol(verdicts[3], "impl_1d2d")
    assert changed.verdict == NEEDS_REVIEW and "lost-anchor-successor" in changed.rules, changed.reason


# --- identity: the candidate must be a plausible successor of the lost definition ------------------

REGISTRY = '''\
#include <vector>

std::vector<void *> g_handles;

void release_handles() {
  for (void *h : g_handles) free(h);
}
'''

LAUNCHER = '''\
void scaled_mm_launch(const float *a, const float *b, const float *scale, float *out, int n) {
  for (int i = 0; i < n; ++i) out[i] = a[i] * b[i] * scale[i];
}
'''


def _python_history_with_cpp_file(cpp: str, changed: str):
    base = "import torch\n\n\n" + OLD_HOST + "\n\n" + HELPER
    kept = "import torch\n\n\n" + HELPER
    return [
        CommitSpec("base", files={"ops/gemm.py": base}),
        CommitSpec("rewrite the host", files={"ops/gemm.py": kept, "ops/api.py": NEW_API,
                                              "kernels/native.cuh": cpp}),
        CommitSpec("change the native helper", files={"kernels/native.cuh": changed}),
    ]


def test_a_definition_of_another_language_sharing_no_name_with_the_lost_one_stays_not_ported(tmp_path):
    history = _python_history_with_cpp_file(REGISTRY, REGISTRY.replace("free(h);", "free(h);\n  g_handles.clear();"))
    verdicts, _ = classify_history(tmp_path, history, PY_TREE, matrix=MATRIX)
    helper = _symbol(verdicts[2], "release_handles")
    assert (helper.verdict, helper.justification) == (NOT_APPLICABLE, "not-ported"), helper.reason
    assert "lost-anchor-successor" not in helper.rules


def test_a_definition_of_another_language_named_after_the_lost_one_is_reviewed(tmp_path):
    history = _python_history_with_cpp_file(LAUNCHER, LAUNCHER.replace("* scale[i]", "* scale[i / 2]"))
    verdicts, shas = classify_history(tmp_path, history, PY_TREE, matrix=MATRIX)
    launcher = _symbol(verdicts[2], "scaled_mm_launch")
    assert launcher.verdict == NEEDS_REVIEW, launcher.reason
    assert "lost-anchor-successor" in launcher.rules
    assert "scaled_mm" in launcher.reason and shas[1][:10] in launcher.reason
