"""The same stores once a declared-off flag's branch is taken (docs/tricky-cases.md,
"a mask folded into a temporary"): ``declared-stores``.

Read with the parameters the tree declares not carried absent
(``declared-branch-off``), both sides of a kernel may still differ in how
they compute what the port's path computes: a value once stored in two arms
of an ``if`` is now built in a temporary and stored once. Each run of
straight-line statements where the sides differ is evaluated symbolically;
every place it writes (its own locals aside) holding the same value on both
sides, the change only reorganised that path: NOT_APPLICABLE/not-carried. A
different value, a local read before its store, a call with effects, a
conversion the value did not have, or no declaration stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

SOFT = "csrc/soft/soft.cu"

BEFORE = '''#include <cuda_runtime.h>

__global__ void row_max_kernel(float* out, const float* x, const float* mask, bool causal, int n) {
    int row = blockIdx.x;
    float val[4];
    float top = -1e30f;
    for (int j = 0; j < 4; j++) {
        if (mask) {
            val[j] = (float)x[row * n + j] + (float)mask[j];
        } else {
            if (causal && j > row) {
                val[j] = -1e30f;
            } else {
                val[j] = (float)x[row * n + j];
            }
        }
        top = fmaxf(top, val[j]);
    }
    out[row] = top;
}
'''

AFTER = '''#include <cuda_runtime.h>

__global__ void row_max_kernel(float* out, const float* x, const float* mask, bool causal, int n) {
    int row = blockIdx.x;
    float val[4];
    float top = -1e30f;
    for (int j = 0; j < 4; j++) {
        float t;
        if (causal && j > row) {
            t = -1e30f;
        } else {
            t = (float)x[row * n + j];
            if (mask) {
                t += (float)mask[j];
            }
        }
        val[j] = t;
        top = fmaxf(top, t);
    }
    out[row] = top;
}
'''

PORT = '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/soft/soft.cu::row_max_kernel
// portq: not-carried vllm:csrc/soft/soft.cu::row_max_kernel[causal] -- no causal mask
__global__ void row_peak_kernel(float* out, const float* x, const float* mask, int n) {
    int row = blockIdx.x;
    float top = -1e30f;
    for (int j = 0; j < 4; j++) {
        float v = x[row * n + j] + (mask ? mask[j] : 0.0f);
        top = fmaxf(top, v);
    }
    out[row] = top;
}
'''

ENGINE = ('#include "soft.cu"\n\nvoid peak(float* o, const float* x, const float* m, int r, int n) '
          '{ row_peak_kernel<<<r, 1>>>(o, x, m, n); }\n')


def _scan(tmp_path, after=AFTER, port=PORT, before=BEFORE):
    tree = {"kernels/soft/soft.cu": port, "kernels/soft/peak.cu": ENGINE}
    return classify_commit(tmp_path, {SOFT: before}, {SOFT: after}, tree, message="mask the future with a mask too")


def _flagged(verdict):
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-stores" not in verdict.rules


def test_a_mask_folded_into_a_temporary_is_not_carried(tmp_path):
    verdict = _scan(tmp_path)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason
    assert "declared-stores" in verdict.rules, verdict.rules


def test_without_the_declaration_the_temporary_is_flagged(tmp_path):
    _flagged(_scan(tmp_path, port=PORT.replace(
        "// portq: not-carried vllm:csrc/soft/soft.cu::row_max_kernel[causal] -- no causal mask\n", "")))


def test_a_different_value_on_the_path_taken_is_flagged(tmp_path):
    _flagged(_scan(tmp_path, after=AFTER.replace("t += (float)mask[j];", "t += 2.0f * (float)mask[j];")))


def test_a_temporary_read_before_its_store_is_flagged(tmp_path):
    # without a mask the temporary is never stored on the path taken
    _flagged(_scan(tmp_path, after=AFTER.replace("            t = (float)x[row * n + j];\n", "")))


def test_a_call_with_effects_in_the_run_is_flagged(tmp_path):
    _flagged(_scan(tmp_path, after=AFTER.replace("        val[j] = t;\n", "        val[j] = t;\n        atomicAdd(out, 0.0f);\n")))


def test_a_conversion_the_value_did_not_have_is_flagged(tmp_path):
    # an integer temporary truncates what the float arms stored
    _flagged(_scan(tmp_path, after=AFTER.replace("float t;", "int t;")))


def test_a_store_to_another_element_is_flagged(tmp_path):
    _flagged(_scan(tmp_path, after=AFTER.replace("val[j] = t;", "val[0] = t;")))


def test_a_store_through_one_pointer_moved_before_a_load_through_another_is_flagged(tmp_path):
    # out and x may be one buffer: zeroing out[j] before reading x is not zeroing it after
    before = BEFORE.replace("        top = fmaxf(top, val[j]);\n", "        top = fmaxf(top, val[j]);\n        out[j] = 0.0f;\n")
    after = AFTER.replace("        float t;\n", "        out[j] = 0.0f;\n        float t;\n")
    _flagged(_scan(tmp_path, after=after, before=before))
