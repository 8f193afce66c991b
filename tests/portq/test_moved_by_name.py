"""A ported definition whose file goes away (or that leaves its file) while the one definition of the
same qualified name appears in another file of the same commit is followed there by identity, even
when the commit rewrites its body so that no body pairing finds it (rule ``moved-by-name``): the move
is shown ("anchor lost at SHA: SYMBOL moved to PATH::NAME?"), the move commit is decided as it would
be without the following (never cleared by it), and every later change to the definition at its new
place is the port's, never a silent not-ported."""
from __future__ import annotations

import json

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_added_callee import KERNEL
from tests.portq.test_moved_definitions import _portq

CPP_MATRIX = """\
[[row]]
id       = "FWD"
title    = "Forward kernel"
upstream = "vllm"
paths    = ["src/*.h", "src/*.cu", "src/kernels/*.cu", "src/other/*.cu"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

OLD_HEADER = """\
#pragma once
namespace ops {

template <typename T>
__global__ void fwd_kernel(T *x, const T *w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = x[i];
        x[i] = v * w[i];
    }
}

template <typename T>
void run_fwd(T *x, const T *w, int n) {
    fwd_kernel<T><<<(n + 255) / 256, 256>>>(x, w, n);
}

}  // namespace ops
"""

NEW_SOURCE = """\
#include "config.h"

struct Pipeline {
    int stages;
    int depth;
};

__device__ int tile_of(int i, int stages) {
    return i / stages;
}

template <typename T>
__global__ void fwd_kernel(T *x, const T *w, int n) {
    __shared__ T buffer[256];
    int tile = tile_of(blockIdx.x, 4);
    int lane = threadIdx.x;
    buffer[lane] = w[tile * 256 + lane];
    __syncthreads();
    for (int k = 0; k < 4; ++k) {
        int j = (tile * 4 + k) * 256 + lane;
        if (j < n) {
            x[j] = x[j] * buffer[lane];
        }
    }
}

template <typename T>
void launch_fwd(T *x, const T *w, int n) {
    fwd_kernel<T><<<(n + 1023) / 1024, 256>>>(x, w, n);
}
"""

CPP_TREE = {
    "kernels/fwd.cu": """\
// portq: ports vllm:src/fwd.h::fwd_kernel
template <typename T>
__global__ void my_fwd(T *x, const T *w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * w[i];
    }
}

// portq: ports vllm:src/fwd.h::run_fwd
template <typename T>
void my_run(T *x, const T *w, int n) {
    my_fwd<T><<<(n + 255) / 256, 256>>>(x, w, n);
}
""",
    "engine/run.cu": '#include "../kernels/fwd.cu"\nvoid run(float *x, const float *w, int n) {\n    my_run(x, w, n);\n}\n',
}


def _symbol(verdict, name, path=None):
    return next(s for s in verdict.symbols if s.symbol.split("::")[-1] == name and (path is None or s.path == path))


def _fixed(source: str) -> str:
    return source.replace("x[j] = x[j] * buffer[lane];", "x[j] = x[j] * buffer[lane] + 1;")


def test_a_cpp_kernel_rewritten_into_a_new_file_is_followed_and_a_later_change_there_is_flagged(tmp_path):
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"src/fwd.h": OLD_HEADER}),
        CommitSpec("rewrite", files={"src/fwd.h": None, "src/kernels/fwd_pipelined.cu": NEW_SOURCE}),
        CommitSpec("fix the kernel", files={"src/kernels/fwd_pipelined.cu": _fixed(NEW_SOURCE)}),
    ], CPP_TREE, matrix=CPP_MATRIX)
    move = verdicts[1]
    assert move.verdict in FLAGGED, move.reason
    old = _symbol(move, "fwd_kernel", "src/fwd.h")
    assert old.verdict in FLAGGED and "moved-by-name" in old.rules, old.reason
    line = f"anchor lost at {shas[1][:10]}: ops::fwd_kernel moved to src/kernels/fwd_pipelined.cu::fwd_kernel?"
    assert line in [e.message for e in old.evidence if e.kind == "anchor-lost"], old.evidence
    later = _symbol(verdicts[2], "fwd_kernel")
    assert later.verdict in FLAGGED, later.reason
    assert "moved-definition" in later.rules and "moved-by-name" in later.rules, later.rules
    assert later.ports
    assert line in _portq(tmp_path, "scan", f"{shas[0][:12]}..{shas[2][:12]}")
    problems = json.loads(_portq(tmp_path, "matrix", "--json"))["problems"]
    assert [p["detail"] for p in problems if p["kind"] == "anchor-lost" and p["subject"].endswith("fwd_kernel")] \
        == [line]


def test_a_cpp_kernel_rewritten_into_a_new_file_in_the_same_namespace_is_followed(tmp_path):
    new = "namespace ops {\n" + NEW_SOURCE + "}  // namespace ops\n"
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"src/fwd.h": OLD_HEADER}),
        CommitSpec("rewrite", files={"src/fwd.h": None, "src/kernels/fwd_pipelined.cu": new}),
        CommitSpec("fix the kernel", files={"src/kernels/fwd_pipelined.cu": _fixed(new)}),
    ], CPP_TREE, matrix=CPP_MATRIX)
    later = _symbol(verdicts[2], "fwd_kernel")
    assert later.verdict in FLAGGED and "moved-by-name" in later.rules, later.reason


PY_MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row normalisation"
upstream = "vllm"
paths    = ["ops/*.py", "ops/impl/*.py", "ops/other/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

PY_OLD = KERNEL  # the same Triton row norm the moved-callee tests start from

PY_NEW = '''\
import triton
import triton.language as tl


@triton.jit
def _norm_fwd(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    inside = offsets < n_cols
    xs = tl.load(x_ptr + pid * n_cols + offsets, mask=inside, other=0.0).to(tl.float32)
    gain = tl.load(w_ptr + offsets, mask=inside, other=1.0)
    inv = tl.rsqrt(tl.sum(xs * xs, axis=0) / n_cols + 1e-6)
    tl.store(y_ptr + pid * n_cols + offsets, xs * inv * gain, mask=inside)
'''

PY_TREE = {
    "kernels/rownorm.py": '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/norm.py::_norm_fwd
@triton.jit
def row_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols)
    tl.store(y_ptr + row * n_cols + cols, x / rms * w, mask=mask)


def row_norm(x, w, y):
    row_norm_kernel[(x.shape[0],)](x, w, y, x.shape[1], BLOCK=1024)
''',
    "engine/model.py": "from kernels.rownorm import row_norm\n\n\ndef run(x, w, y):\n    return row_norm(x, w, y)\n",
}


def _py_fixed(source: str) -> str:
    return source.replace("mask=inside)\n", "mask=inside & (pid >= 0))\n")


def test_a_python_kernel_rewritten_into_another_module_is_followed_and_a_later_change_there_is_flagged(tmp_path):
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": PY_OLD}),
        CommitSpec("rewrite", files={"ops/norm.py": None, "ops/impl/rms.py": PY_NEW}),
        CommitSpec("fix the store", files={"ops/impl/rms.py": _py_fixed(PY_NEW)}),
    ], PY_TREE, matrix=PY_MATRIX)
    old = _symbol(verdicts[1], "_norm_fwd", "ops/norm.py")
    assert old.verdict in FLAGGED and "moved-by-name" in old.rules, old.reason
    assert f"anchor lost at {shas[1][:10]}: _norm_fwd moved to ops/impl/rms.py::_norm_fwd?" in \
        [e.message for e in old.evidence if e.kind == "anchor-lost"]
    later = _symbol(verdicts[2], "_norm_fwd")
    assert later.verdict in FLAGGED and "moved-by-name" in later.rules, later.reason


def test_two_same_named_candidates_in_other_files_are_reported_ambiguous_and_followed_to_neither(tmp_path):
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": PY_OLD}),
        CommitSpec("rewrite twice", files={"ops/norm.py": None, "ops/impl/rms.py": PY_NEW,
                                           "ops/other/rms.py": PY_NEW.replace("1e-6", "1e-5")}),
        CommitSpec("fix the store", files={"ops/impl/rms.py": _py_fixed(PY_NEW)}),
    ], PY_TREE, matrix=PY_MATRIX)
    old = _symbol(verdicts[1], "_norm_fwd", "ops/norm.py")
    assert old.verdict in FLAGGED, old.reason
    lost = [e.message for e in old.evidence if e.kind == "anchor-lost"]
    assert lost == [f"anchor lost at {shas[1][:10]}: _norm_fwd moved to ops/impl/rms.py::_norm_fwd or "
                    "ops/other/rms.py::_norm_fwd? (ambiguous: not followed)"], lost
    later = _symbol(verdicts[2], "_norm_fwd")
    assert "moved-definition" not in later.rules and "moved-by-name" not in later.rules, later.rules


def test_a_same_named_definition_in_a_new_file_while_the_old_one_stays_is_not_followed(tmp_path):
    kept = PY_OLD.replace("other=0.0)\n    w", "other=0.0)\n\n    w", 1)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": PY_OLD}),
        CommitSpec("another kernel", files={"ops/norm.py": kept, "ops/impl/rms.py": PY_NEW}),
        CommitSpec("fix the new one", files={"ops/impl/rms.py": _py_fixed(PY_NEW)}),
        CommitSpec("fix the old one", files={"ops/norm.py": kept.replace("mask=mask)\n", "mask=mask & (row >= 0))\n")}),
    ], PY_TREE, matrix=PY_MATRIX)
    assert all("moved-by-name" not in s.rules for s in verdicts[1].symbols)
    new = _symbol(verdicts[2], "_norm_fwd")
    assert new.verdict == NOT_APPLICABLE and new.justification == "not-ported", new.reason
    assert "moved-definition" not in new.rules
    old = _symbol(verdicts[3], "_norm_fwd")
    assert old.verdict in FLAGGED, old.reason
