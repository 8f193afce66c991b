"""Branches only declared-off parameters decide (docs/tricky-cases.md, "a
reduction now keyed on an output the port does not carry"):
``declared-branch-off``.

A C/C++ parameter the tree declares not carried (``[PARAM]``) is absent for
the port: false, and a null pointer in a null test. An ``if`` (or ``?:``)
whose condition that decides, a local declared once from such a condition,
and statements that then only write a local nothing live reads (pure math on
the right) or only assume a fact about one, are not code the port runs. A
definition the same before and after once they are set aside (and its
parameters and locals renamed consistently, ``const`` aside) changed only what
the port does not carry: NOT_APPLICABLE/not-carried. Without the
declaration, or with a change on the live path, it stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

ACT = "csrc/act/act.cu"

BEFORE = '''#include <cuda_runtime.h>

template <bool kScaled>
__global__ void act_kernel(float* out, const float* x, float* peak, const float* scale, int n) {
    float m = 0;
    float s = 1;
    if constexpr (kScaled) {
        if (scale != nullptr) s = *scale;
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i] / (1.0f + expf(-x[i]));
        if constexpr (kScaled) {
            __builtin_assume(m >= 0);
            m = fmaxf(fabsf(v), m);
            v = v * s;
        }
        out[i] = v;
    }
    if constexpr (kScaled) {
        // reduce the peak over the block
        if (peak != nullptr) {
            atomicMax(reinterpret_cast<int*>(peak), __float_as_int(m));
        }
    }
}
'''

AFTER = '''#include <cuda_runtime.h>

template <bool kScaled>
__global__ void act_kernel(float* out, const float* x, float* peak, const float* scale, int n) {
    float m = 0;
    float s = 1;
    const bool wants_peak = (peak != nullptr);
    if constexpr (kScaled) {
        if (scale != nullptr) s = *scale;
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i] / (1.0f + expf(-x[i]));
        if (wants_peak) {
            __builtin_assume(m >= 0);
            m = fmaxf(fabsf(v), m);
        }
        if constexpr (kScaled) {
            v = v * s;
        }
        out[i] = v;
    }
    // reduce the peak over the block, whatever the output type
    if (wants_peak) {
        atomicMax(reinterpret_cast<int*>(peak), __float_as_int(m));
    }
}
'''

PORT = '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/act/act.cu::act_kernel
// portq: not-carried vllm:csrc/act/act.cu::act_kernel[peak] -- no quantised outputs
// portq: not-carried vllm:csrc/act/act.cu::act_kernel[scale] -- no quantised outputs
__global__ void silu_kernel(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = x[i] / (1.0f + expf(-x[i]));
    }
}
'''

ENGINE = '#include "act.cu"\n\nvoid mlp(float* o, const float* x, int n) { silu_kernel<<<(n + 255) / 256, 256>>>(o, x, n); }\n'


def _scan(tmp_path, after, port=PORT, before=BEFORE):
    tree = {"kernels/act/act.cu": port, "kernels/act/mlp.cu": ENGINE}
    return classify_commit(tmp_path, {ACT: before}, {ACT: after}, tree, message="reduce whenever asked")


def test_a_reduction_now_keyed_on_a_declared_off_output_is_not_carried(tmp_path):
    verdict = _scan(tmp_path, AFTER)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason
    assert "declared-branch-off" in verdict.rules, verdict.rules


def test_without_the_declaration_the_reduction_is_flagged(tmp_path):
    port = PORT.replace("// portq: not-carried vllm:csrc/act/act.cu::act_kernel[peak] -- no quantised outputs\n", "")
    verdict = _scan(tmp_path, AFTER, port)
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-branch-off" not in verdict.rules


def test_a_change_on_the_live_path_is_flagged(tmp_path):
    verdict = _scan(tmp_path, AFTER.replace("out[i] = v;", "out[i] = v * 0.5f;"))
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-branch-off" not in verdict.rules


def test_a_local_the_live_path_reads_is_no_dead_store(tmp_path):
    # the peak now also feeds the output: what only the declared-off path read is read on the live one
    verdict = _scan(tmp_path, AFTER.replace("out[i] = v;", "out[i] = v + 0.0f * m;"),
                    before=BEFORE.replace("out[i] = v;", "out[i] = v + 0.0f * m;"))
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-branch-off" not in verdict.rules


RESIDUAL = "csrc/act/residual.cu"

RES_BEFORE = '''__global__ void add_res(float* x, float* y, float* b, int n, bool pre) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float xv = x[i];
        float yv = y[i];
        if (pre) {
            xv = xv + yv + (b[i] + b[0]);
        } else {
            xv = xv + yv + b[i];
        }
        x[i] = xv;
    }
}
'''

RES_AFTER = '''__global__ void add_res(float* acc, const float* src, const float* b, const int n, const bool pre) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc_v = acc[i];
        const float src_v = src[i];
        if (pre) {
            acc_v = acc_v + src_v + b[i] + b[0];
        } else {
            // acc += src + bias
            acc_v = acc_v + src_v + b[i];
        }
        acc[i] = acc_v;
    }
}
'''

RES_PORT = '''// portq: ports vllm:csrc/act/residual.cu::add_res
// portq: not-carried vllm:csrc/act/residual.cu::add_res[pre] -- post-norm layers only
__global__ void residual_kernel(float* x, float* y, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { x[i] = x[i] + y[i] + b[i]; }
}
'''


def _residual(tmp_path, port):
    tree = {"kernels/act/residual.cu": port, "kernels/act/layer.cu":
            '#include "residual.cu"\n\nvoid close(float* x, float* y, float* b, int n) '
            '{ residual_kernel<<<(n + 255) / 256, 256>>>(x, y, b, n); }\n'}
    return classify_commit(tmp_path, {RESIDUAL: RES_BEFORE}, {RESIDUAL: RES_AFTER}, tree, message="readability")


def test_a_renaming_with_a_regrouping_only_in_a_declared_off_branch_is_not_carried(tmp_path):
    verdict = _residual(tmp_path, RES_PORT)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason
    assert "declared-branch-off" in verdict.rules, verdict.rules


def test_the_regrouping_without_the_declaration_is_flagged(tmp_path):
    verdict = _residual(tmp_path, RES_PORT.replace(
        "// portq: not-carried vllm:csrc/act/residual.cu::add_res[pre] -- post-norm layers only\n", ""))
    assert verdict.justification not in ("not-carried", "cosmetic"), verdict.reason


# --- a compile-time branch keyed on the type of a declared-off parameter ------------------------

GATED = "csrc/act/gated.cu"

GATED_BEFORE = '''#include <cuda_runtime.h>
#include <type_traits>

template <typename Param, float (*Act)(float, const Param &)>
__global__ void gated_kernel(float* out, const float* x, const Param p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float a = x[2 * i];
        const float g = x[2 * i + 1];
        out[i] = Act(a, p) * g;
    }
}
'''

GATED_AFTER = '''#include <cuda_runtime.h>
#include <type_traits>

template <typename Param, float (*Act)(float, const Param &)>
__global__ void gated_kernel(float* out, const float* x, const Param p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float a = x[2 * i];
        float g = x[2 * i + 1];
        if constexpr (std::is_same<Param, BoundedParam>::value) {
            const float bound = p.bound;
            g = fminf(fmaxf(-bound, g), bound) + 1.0f;
        }
        out[i] = Act(a, p) * g;
    }
}
'''

GATED_PORT = '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/act/gated.cu::gated_kernel
// portq: not-carried vllm:csrc/act/gated.cu::gated_kernel[p] -- the activation takes no parameter
__global__ void silu_gate_kernel(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = x[2 * i] / (1.0f + expf(-x[2 * i])) * x[2 * i + 1];
    }
}
'''

GATED_ENGINE = ('#include "gated.cu"\n\nvoid mlp(float* o, const float* x, int n) '
                '{ silu_gate_kernel<<<(n + 255) / 256, 256>>>(o, x, n); }\n')


def _gated(tmp_path, after, port=GATED_PORT, before=GATED_BEFORE):
    tree = {"kernels/act/gated.cu": port, "kernels/act/mlp.cu": GATED_ENGINE}
    return classify_commit(tmp_path, {GATED: before}, {GATED: after}, tree, message="bounded gate")


def test_a_branch_keyed_on_the_type_of_a_declared_off_parameter_that_reads_it_is_not_carried(tmp_path):
    verdict = _gated(tmp_path, GATED_AFTER)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason
    assert "declared-branch-off" in verdict.rules, verdict.rules


def test_the_same_spelled_with_is_same_v_is_not_carried(tmp_path):
    after = GATED_AFTER.replace("std::is_same<Param, BoundedParam>::value", "std::is_same_v<Param, BoundedParam>")
    verdict = _gated(tmp_path, after)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), verdict.reason


def test_a_type_keyed_branch_without_the_declaration_is_flagged(tmp_path):
    port = GATED_PORT.replace("// portq: not-carried vllm:csrc/act/gated.cu::gated_kernel[p] -- the activation "
                              "takes no parameter\n", "")
    verdict = _gated(tmp_path, GATED_AFTER, port)
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-branch-off" not in verdict.rules


def test_a_type_keyed_branch_that_does_not_read_the_parameter_is_flagged(tmp_path):
    # what the branch does needs nothing of the parameter: the port may well be the type it names
    after = GATED_AFTER.replace("            const float bound = p.bound;\n", "            const float bound = 7.0f;\n")
    verdict = _gated(tmp_path, after)
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-branch-off" not in verdict.rules


def test_a_type_keyed_branch_on_another_template_parameter_is_flagged(tmp_path):
    before = GATED_BEFORE.replace("template <typename Param,", "template <typename Param, typename Out,")
    after = GATED_AFTER.replace("template <typename Param,", "template <typename Param, typename Out,") \
        .replace("std::is_same<Param, BoundedParam>::value", "std::is_same<Out, BoundedParam>::value")
    verdict = _gated(tmp_path, after, before=before)
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-branch-off" not in verdict.rules


def test_a_live_change_beside_a_type_keyed_branch_is_flagged(tmp_path):
    verdict = _gated(tmp_path, GATED_AFTER.replace("out[i] = Act(a, p) * g;", "out[i] = Act(a, p) * g * 0.5f;"))
    assert verdict.justification != "not-carried", verdict.reason
    assert "declared-branch-off" not in verdict.rules
