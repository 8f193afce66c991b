"""A ported definition that one commit renames in its own file while editing it (a template flag, a
new parameter, a branch added), keeping most of its old body, is followed by identity to the one
definition of the file that keeps it (rule ``renamed-with-edits``); and a ported definition deleted
after an earlier commit of the range copied it elsewhere is followed to that copy
(``copied-then-removed``). Either way the move is shown ("anchor lost at SHA: SYMBOL moved to
PATH::NAME?"), the move commit is decided as without the following, and a later change to the
definition at its new place is the port's, never a silent not-ported. A definition rewritten so that
little of the old body stays, one that drops a parameter, a copy whose original stays, and a symbol
the port never had are not followed."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "FWD"
title    = "Grouped forward kernel"
upstream = "vllm"
paths    = ["src/*.cu"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

OLD = """\
#include "common.h"

template <bool GROUPED>
__global__ void fwd_v2_kernel(const float *x, float *out, const float *scales, int n, int groupsize) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    if (GROUPED) {
        for (int k = 0; k < n; k += groupsize) {
            float s = scales[k / groupsize];
            acc += x[k] * s;
        }
    } else {
        for (int k = 0; k < n; k++) {
            float s = scales[k];
            acc += x[k] * s;
        }
    }
    out[i] = acc;
}

void run_fwd(const float *x, float *out, const float *scales, int n, int groupsize) {
    if (groupsize > 0) fwd_v2_kernel<true><<<(n + 255) / 256, 256>>>(x, out, scales, n, groupsize);
    else fwd_v2_kernel<false><<<(n + 255) / 256, 256>>>(x, out, scales, n, groupsize);
}
"""

# renamed, gains a template flag and a parameter, a zeroing step and a mapped read in each branch
EDITED = """\
#include "common.h"

template <bool GROUPED, bool MAPPED>
__global__ void fwd_kernel(const float *x, float *out, const float *scales, int n, int groupsize,
                           const int *map, bool skip_init) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (!skip_init) out[i] = 0.0f;
    __syncthreads();
    float acc = 0.0f;
    if (GROUPED) {
        for (int k = 0; k < n; k += groupsize) {
            float s = scales[k / groupsize];
            if constexpr (MAPPED) acc += x[map[k]] * s;
            else acc += x[k] * s;
        }
    } else {
        for (int k = 0; k < n; k++) {
            float s = scales[k];
            if constexpr (MAPPED) acc += x[map[k]] * s;
            else acc += x[k] * s;
        }
    }
    out[i] = acc;
}

void run_fwd(const float *x, float *out, const float *scales, int n, int groupsize) {
    if (groupsize > 0) fwd_kernel<true, false><<<(n + 255) / 256, 256>>>(x, out, scales, n, groupsize, 0, false);
    else fwd_kernel<false, false><<<(n + 255) / 256, 256>>>(x, out, scales, n, groupsize, 0, false);
}
"""

# renamed and rewritten: a tiled loop, little of the old body left
REWRITTEN = """\
#include "common.h"

template <bool GROUPED>
__global__ void fwd_kernel(const float *x, float *out, const float *scales, int n, int groupsize) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += 256) {
        tile[lane] = t + lane < n ? x[t + lane] : 0.0f;
        __syncthreads();
        for (int j = 0; j < 256 && t + j < n; j++) {
            int g = GROUPED ? (t + j) / groupsize : t + j;
            acc += tile[j] * scales[g];
        }
        __syncthreads();
    }
    if (i < n) out[i] = acc;
}

void run_fwd(const float *x, float *out, const float *scales, int n, int groupsize) {
    if (groupsize > 0) fwd_kernel<true><<<(n + 255) / 256, 256>>>(x, out, scales, n, groupsize);
    else fwd_kernel<false><<<(n + 255) / 256, 256>>>(x, out, scales, n, groupsize);
}
"""

TREE = {
    "kernels/fwd.py": """\
import torch


# portq: ports vllm:src/fwd.cu::fwd_v2_kernel
def fwd(x, scales, groupsize):
    n = x.numel()
    g = torch.arange(n, device=x.device) // groupsize if groupsize > 0 else torch.arange(n, device=x.device)
    return (x * scales[g]).sum().expand(n).clone()


# portq: ports vllm:src/fwd.cu::run_fwd
def run_fwd(x, scales, groupsize):
    return fwd(x, scales, groupsize)
""",
    "engine/run.py": "from kernels.fwd import run_fwd\n\n\ndef step(x, s):\n    return run_fwd(x, s, 128)\n",
}


def _fixed(source: str) -> str:
    return source.replace("float s = scales[k];", "float s = scales[k] * 0.5f;")


def _symbol(verdict, name, path=None):
    return next(s for s in verdict.symbols if s.symbol.split("::")[-1] == name and (path is None or s.path == path))


def test_a_kernel_renamed_with_edits_in_its_file_is_followed_and_a_later_change_is_flagged(tmp_path):
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"src/fwd.cu": OLD}),
        CommitSpec("rename and extend", files={"src/fwd.cu": EDITED}),
        CommitSpec("fix the kernel", files={"src/fwd.cu": _fixed(EDITED)}),
    ], TREE, matrix=MATRIX)
    old = _symbol(verdicts[1], "fwd_v2_kernel")
    assert old.verdict in FLAGGED and "renamed-with-edits" in old.rules, (old.rules, old.reason)
    line = f"anchor lost at {shas[1][:10]}: fwd_v2_kernel moved to src/fwd.cu::fwd_kernel?"
    assert line in [e.message for e in old.evidence if e.kind == "anchor-lost"], old.evidence
    later = _symbol(verdicts[2], "fwd_kernel")
    assert later.verdict in FLAGGED, (later.verdict, later.justification, later.reason)
    assert "moved-definition" in later.rules and "renamed-with-edits" in later.rules, later.rules
    assert verdicts[2].verdict in FLAGGED


def test_a_kernel_renamed_and_rewritten_is_not_followed(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/fwd.cu": OLD}),
        CommitSpec("rewrite", files={"src/fwd.cu": REWRITTEN}),
        CommitSpec("fix the kernel", files={"src/fwd.cu": REWRITTEN.replace("acc += tile[j] * scales[g];",
                                                                            "acc += tile[j] * scales[g] * 0.5f;")}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "fwd_kernel")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason
    assert "renamed-with-edits" not in later.rules


def test_a_kernel_renamed_with_edits_that_drops_a_parameter_is_not_followed(tmp_path):
    dropped = EDITED.replace("const float *scales, int n, int groupsize,\n", "const float *scales, int n,\n") \
        .replace("int groupsize, 0, false", "0, false").replace("k / groupsize", "k / 128") \
        .replace("k += groupsize", "k += 128")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/fwd.cu": OLD}),
        CommitSpec("rename and extend", files={"src/fwd.cu": dropped}),
        CommitSpec("fix the kernel", files={"src/fwd.cu": _fixed(dropped)}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "fwd_kernel")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason


def test_a_kernel_the_port_never_had_stays_not_ported(tmp_path):
    tree = {path: text.replace("# portq: ports vllm:src/fwd.cu::fwd_v2_kernel\n", "") for path, text in TREE.items()}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/fwd.cu": OLD}),
        CommitSpec("rename and extend", files={"src/fwd.cu": EDITED}),
        CommitSpec("fix the kernel", files={"src/fwd.cu": _fixed(EDITED)}),
    ], tree, matrix=MATRIX)
    later = _symbol(verdicts[2], "fwd_kernel")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason


SEQ = """\
__global__ void order_kernel(const int *idx, int *order, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int g = idx[i];
    int slot = atomicAdd(&order[n + g], 1);
    order[slot] = i;
}

void run_order(const int *idx, int *order, int n) {
    order_kernel<<<(n + 255) / 256, 256>>>(idx, order, n);
}
"""

HANDLE_CU = """\
#include "handle.h"

__global__ void build_order_kernel(const int *idx, int *order, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int g = idx[i];
    int slot = atomicAdd(&order[n + g], 1);
    order[slot] = i;
}

void Handle::build_order(const int *idx, int *order, int n) {
    build_order_kernel<<<(n + 255) / 256, 256>>>(idx, order, n);
}
"""

ORDER_TREE = {
    "kernels/order.py": """\
import torch


# portq: ports vllm:src/order.cu::order_kernel
def order(idx, n):
    return torch.argsort(idx, stable=True)


# portq: ports vllm:src/order.cu::run_order
def run_order(idx, n):
    return order(idx, n)
""",
    "engine/run.py": "from kernels.order import run_order\n\n\ndef step(i):\n    return run_order(i, i.numel())\n",
}


def _order_fixed(source: str) -> str:
    return source.replace("    if (i >= n) return;\n    int g", "    if (i >= n || idx[i] < 0) return;\n    int g")


def test_a_kernel_copied_then_deleted_is_followed_to_its_copy(tmp_path):
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"src/order.cu": SEQ}),
        CommitSpec("new handle path", files={"src/handle.cu": HANDLE_CU}),
        CommitSpec("remove the old path", files={"src/order.cu": None}),
        CommitSpec("fix the copy", files={"src/handle.cu": _order_fixed(HANDLE_CU)}),
    ], ORDER_TREE, matrix=MATRIX)
    old = _symbol(verdicts[2], "order_kernel")
    assert "copied-then-removed" in old.rules, (old.rules, old.reason)
    line = f"anchor lost at {shas[2][:10]}: order_kernel moved to src/handle.cu::build_order_kernel?"
    assert line in [e.message for e in old.evidence if e.kind == "anchor-lost"], old.evidence
    later = _symbol(verdicts[3], "build_order_kernel")
    assert later.verdict in FLAGGED, (later.verdict, later.justification, later.reason)
    assert "moved-definition" in later.rules and "copied-then-removed" in later.rules, later.rules


def test_a_copy_whose_original_stays_is_not_followed(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/order.cu": SEQ}),
        CommitSpec("new handle path", files={"src/handle.cu": HANDLE_CU}),
        CommitSpec("fix the copy", files={"src/handle.cu": _order_fixed(HANDLE_CU)}),
    ], ORDER_TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "build_order_kernel")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason


def test_a_different_kernel_added_before_the_original_is_deleted_is_not_followed(tmp_path):
    other = HANDLE_CU.replace("    int g = idx[i];\n    int slot = atomicAdd(&order[n + g], 1);\n    order[slot] = i;\n",
                              "    order[i] = idx[n - 1 - i];\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/order.cu": SEQ}),
        CommitSpec("new handle path", files={"src/handle.cu": other}),
        CommitSpec("remove the old path", files={"src/order.cu": None}),
        CommitSpec("fix the new kernel", files={"src/handle.cu": other.replace("order[i] = idx[n - 1 - i];",
                                                                              "order[i] = idx[n - 2 - i];")}),
    ], ORDER_TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "build_order_kernel")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason


TYPEDEF = """\
typedef void (*kernel_fn)
(
    const float*,
    float*,
    bool skip_init
);

template <bool GROUPED>
__global__ void fwd_kernel(const float *x, float *out, int n, bool skip_init) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (!skip_init) out[i] = 0.0f;
    out[i] += x[i];
}
"""


def test_a_parameter_name_dropped_from_a_function_pointer_typedef_names_nothing_a_port_reads(tmp_path):
    """A parameter name in a typedef's function declarator has prototype scope: it binds nothing at file
    scope, so dropping it ties the top-level change to no ported definition that spells the same name."""
    tree = {"kernels/fwd.py": "# portq: ports vllm:src/fwd.cu::fwd_kernel\ndef fwd(x, out, n, skip_init):\n"
                              "    if not skip_init:\n        out.zero_()\n    out += x\n"}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/fwd.cu": TYPEDEF}),
        CommitSpec("drop a name", files={"src/fwd.cu": TYPEDEF.replace("    bool skip_init\n);", "    bool\n);")}),
    ], tree, matrix=MATRIX)
    top = _symbol(verdicts[1], "<toplevel>")
    assert top.verdict == NOT_APPLICABLE, (top.rules, top.reason)


def test_a_typedef_renamed_that_a_port_reads_stays_flagged(tmp_path):
    source = TYPEDEF.replace("if (i >= n) return;", "if (i >= n) return;\n    kernel_fn f = 0;")
    tree = {"kernels/fwd.py": "# portq: ports vllm:src/fwd.cu::fwd_kernel\ndef fwd(x, out, n, skip_init):\n"
                              "    if not skip_init:\n        out.zero_()\n    out += x\n"}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/fwd.cu": source}),
        CommitSpec("change the type", files={"src/fwd.cu": source.replace("    bool skip_init\n);", "    int skip_init\n);")}),
    ], tree, matrix=MATRIX)
    top = _symbol(verdicts[1], "<toplevel>")
    assert top.verdict in FLAGGED, (top.rules, top.reason)


def test_a_copy_is_not_followed_when_the_original_leaves_a_file_that_stays(tmp_path):
    """Only a file deleted whole hands its definitions to copies made earlier: a definition dropped from a
    file that stays (one of two variants kept) leaves its role to what the file still holds, and an earlier
    sibling sharing its body is not the port's."""
    both = SEQ
    variant = SEQ[:SEQ.index("void run_order")]
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/order.cu": both}),
        CommitSpec("a sibling", files={"src/handle.cu": HANDLE_CU}),
        CommitSpec("drop the old variant", files={"src/order.cu": both.replace(variant, "")}),
        CommitSpec("fix the sibling", files={"src/handle.cu": _order_fixed(HANDLE_CU)}),
    ], ORDER_TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "build_order_kernel")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason
