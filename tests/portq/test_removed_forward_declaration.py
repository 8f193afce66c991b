"""Forward declarations deleted once the functions they declare are defined
above their users (docs/tricky-cases.md, "forward declarations deleted past a
parse error"): ``removed-forward-declaration``.

A one-line declaration runs nothing. When upstream deletes declarations of
functions the file still defines, with the same parameters, the program
compiles only if every use now sees the definition, and what runs is the
same: cosmetic. A declaration spelled with a function macro before its return
type (``DEVICE_INLINE void f(...);``) was a parse error for tree-sitter, so the
proof reads the lines' text, and it holds on a file that parses too (the
specifier macro is read now). A declaration whose function the file no longer
defines, or one with other parameters (a default argument only it gave), stays
flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

KERNELS = "csrc/norm/rows.cu"

PROTOTYPES = '''DEVICE_INLINE void row_scale(vec4& dst, float s);
DEVICE_INLINE void row_shift(vec4& dst);
'''

HELPERS = '''__device__ __forceinline__ void row_scale(vec4& dst, float s) {
    dst.x *= s; dst.y *= s; dst.z *= s; dst.w *= s;
}

__device__ __forceinline__ void row_shift(vec4& dst) {
    dst.x += 1.0f;
}

'''

KERNEL = '''__global__ void norm_kernel(vec4* x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    vec4 v = x[i];
    row_scale(v, s);
    row_shift(v);
    if (v.x != v.x) {
        v.x = 0.0f;
    }
    x[i] = v;
}

'''

HEAD = '''#include <cuda_runtime.h>

#define DEVICE_INLINE __device__ __forceinline__

struct vec4 { float x, y, z, w; };

'''

BEFORE = HEAD + PROTOTYPES + KERNEL + HELPERS
AFTER = HEAD + HELPERS + KERNEL

PORT = {"engine/rows.cu": '''#include <cuda_runtime.h>

struct v4 { float x, y, z, w; };

__device__ void scale_row(v4& d, float s) { d.x *= s; d.y *= s; d.z *= s; d.w *= s; }
__device__ void shift_row(v4& d) { d.x += 1.0f; }

// portq: ports vllm:csrc/norm/rows.cu::norm_kernel
__global__ void rows_norm(v4* x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { scale_row(x[i], s); shift_row(x[i]); }
}

void launch_rows_norm(v4* x, float s, int n) { rows_norm<<<(n + 255) / 256, 256>>>(x, s, n); }
'''}


def _toplevel(tmp_path, before: str, after: str):
    commits = [CommitSpec("base", files={KERNELS: before}), CommitSpec("reorder", files={KERNELS: after})]
    verdicts, _ = classify_history(tmp_path, commits, PORT)
    verdict = verdicts[1]
    return verdict, next(s for s in verdict.symbols if s.symbol == "<toplevel>")


def test_declarations_deleted_once_the_file_defines_the_functions_above_their_users_are_cosmetic(tmp_path):
    verdict, toplevel = _toplevel(tmp_path, BEFORE, AFTER)
    assert (toplevel.verdict, toplevel.justification) == (NOT_APPLICABLE, "cosmetic"), toplevel.reason
    assert "removed-forward-declaration" in toplevel.rules
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason


def test_a_declaration_deleted_with_its_function_moved_out_of_the_file_stays_flagged(tmp_path):
    after = AFTER.replace(HELPERS.split("\n\n")[1] + "\n\n", "")
    verdict, toplevel = _toplevel(tmp_path, BEFORE, after)
    assert "removed-forward-declaration" not in toplevel.rules
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_declaration_that_gave_a_default_argument_stays_flagged(tmp_path):
    before = BEFORE.replace("DEVICE_INLINE void row_scale(vec4& dst, float s);",
                            "DEVICE_INLINE void row_scale(vec4& dst, float s = 1.0f);")
    verdict, toplevel = _toplevel(tmp_path, before, AFTER)
    assert "removed-forward-declaration" not in toplevel.rules
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
