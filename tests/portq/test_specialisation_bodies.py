"""Changed C++ lines outside any extracted definition that all lie in explicit specialisations
(``template <> __global__ void ln_fw<__half>(...) { ... }``), each a function's own body for one type
(``specialisation-body``): decided per function as its body would be. A specialisation of a function the
tree declares not-carried is not carried; of a function the commit brings into the file (no definition or
specialisation of that name before) that the tree neither ports, declares nor names, not ported; of a
ported function, unchanged when it is the same before and after once pointer casts are read as one
spelling (``cosmetic-cast-spelling``). A specialisation of a ported function that changes a value, one
the commit adds to a ported function, or a specialisation of an old undeclared function stays flagged
(``toplevel-use``)."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm"
upstream = "vllm"
paths    = ["kernels/*.cu"]
tree     = ["csrc/"]
tests    = ["tests/"]
"""

BEFORE = '''\
#include <cuda_fp16.h>

const float EPSILON = 1e-6f;

template <typename T>
__global__ void ln_fw(T *out, const T *inp, int width) {
  const float4 *inp_f4 = (const float4 *)inp + blockIdx.x * width;
  float4 *out_f4 = (float4 *)out + blockIdx.x * width;
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    float4 v = inp_f4[i];
    v.x = v.x * rsqrtf(v.y + EPSILON);
    out_f4[i] = v;
  }
}

template <>
__global__ void ln_fw<__half>(__half *out, const __half *inp, int width) {
  const float4 *inp_f4 = (const float4 *)inp + blockIdx.x * width;
  float4 *out_f4 = (float4 *)out + blockIdx.x * width;
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    float4 v = inp_f4[i];
    __half2 *h = (__half2 *)(&v);
    h[0] = __hmul2(h[0], h[1]);
    out_f4[i] = v;
  }
}

template <typename T>
__global__ void ln_bw(T *grad, const T *out_grad) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  grad[i] = out_grad[i];
}

template <>
__global__ void ln_bw<__half>(__half *grad, const __half *out_grad) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  grad[i] = out_grad[i];
}
'''

RESPELLED = BEFORE.replace("(const float4 *)inp + blockIdx.x", "reinterpret_cast<const float4 *>(inp) + blockIdx.x") \
    .replace("(float4 *)out + blockIdx.x", "reinterpret_cast<float4 *>(out) + blockIdx.x") \
    .replace("(__half2 *)(&v)", "reinterpret_cast<__half2 *>(&v)")

BW_CHANGED = "  grad[i] = out_grad[i] * rsqrtf(EPSILON);\n}\n"

NEW_FUNCTION = '''
template <typename T>
__global__ void ln_fw_i8(int8_t *q, const T *inp, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  q[i] = (int8_t)(inp[i] * rsqrtf(EPSILON));
}

template <>
__global__ void ln_fw_i8<__half>(int8_t *q, const __half *inp, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  q[i] = (int8_t)(__half2float(inp[i]) * rsqrtf(EPSILON));
}
'''

TREE = {"csrc/norm.cu": "#include <cuda_fp16.h>\n"
                        "// portq: ports vllm:kernels/norm.cu::ln_fw\n"
                        "template <typename T>\n__global__ void rows_ln(T *y, const T *x, int width) {\n"
                        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  y[i] = x[i] * rsqrtf(1e-6f);\n}\n"
                        "// portq: not-carried vllm:kernels/norm.cu::ln_bw -- forward only\n",
        "csrc/ops.cu": "void run(float *y, const float *x, int n) { rows_ln<float><<<1, n>>>(y, x, n); }\n"}


def _entry(tmp_path, after: str):
    history = [CommitSpec("base", files={"kernels/norm.cu": BEFORE}),
               CommitSpec("edit", files={"kernels/norm.cu": after})]
    verdicts, _ = classify_history(tmp_path, history, TREE, matrix=MATRIX)
    return verdicts[1]


def _with_bw_changed(source: str) -> str:
    head, _, tail = source.rpartition("  grad[i] = out_grad[i];\n}\n")
    return head + BW_CHANGED + tail


def test_specialisations_of_a_ported_a_declared_and_a_new_function_are_their_bodies(tmp_path):
    entry = _entry(tmp_path, _with_bw_changed(RESPELLED) + NEW_FUNCTION)
    assert entry.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in entry.symbols]
    toplevel = next(s for s in entry.symbols if s.symbol == "<toplevel>")
    assert "specialisation-body" in toplevel.rules, toplevel.rules


def test_a_value_changed_in_a_specialisation_of_a_ported_function_stays_flagged(tmp_path):
    after = _with_bw_changed(RESPELLED.replace("h[0] = __hmul2(h[0], h[1]);", "h[0] = __hmul2(h[0], h[0]);"))
    entry = _entry(tmp_path, after + NEW_FUNCTION)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "specialisation-body" not in entry.rules


def test_a_specialisation_added_to_a_ported_function_stays_flagged(tmp_path):
    added = '''
template <>
__global__ void ln_fw<float>(float *out, const float *inp, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = inp[i] * rsqrtf(EPSILON);
}
'''
    entry = _entry(tmp_path, RESPELLED + added)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "specialisation-body" not in entry.rules


def test_a_specialisation_added_to_an_old_unported_function_stays_flagged(tmp_path):
    before_function = BEFORE + "\ntemplate <typename T>\n__global__ void ln_scale(T *y, float s) { y[0] = y[0] * s; }\n"
    added = '''
template <>
__global__ void ln_scale<__half>(__half *y, float s) {
  y[0] = __float2half(__half2float(y[0]) * s + EPSILON);
}
'''
    history = [CommitSpec("base", files={"kernels/norm.cu": before_function}),
               CommitSpec("edit", files={"kernels/norm.cu": before_function + added})]
    verdicts, _ = classify_history(tmp_path, history, TREE, matrix=MATRIX)
    entry = verdicts[1]
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "specialisation-body" not in entry.rules


def test_a_specialisation_of_a_ported_function_gaining_inline_stays_flagged(tmp_path):
    # an explicit specialisation is an ordinary function for the one-definition rule: inline decides whether
    # two translation units including it link, so it is not a qualifier erased as form
    after = BEFORE.replace("template <>\n__global__ void ln_fw<__half>", "template <>\ninline __global__ void ln_fw<__half>")
    entry = _entry(tmp_path, after)
    assert entry.verdict == NEEDS_REVIEW, entry.reason
    assert "specialisation-body" not in entry.rules
