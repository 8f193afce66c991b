"""A C-style pointer cast respelled as ``reinterpret_cast`` (docs/tricky-cases.md,
"a cast respelled"): ``(float4 *)p`` and ``reinterpret_cast<float4 *>(p)``
are one conversion when the pointee is a fundamental type or one of CUDA's
vector and half types (no class derives from it, so the C cast cannot be a
``static_cast`` that adjusts the pointer). The respelling alone is
NOT_APPLICABLE/cosmetic (``cosmetic-cast-spelling``); a cast to a pointer to a
class type, a changed target type or any other edit beside it stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

NORM = "csrc/norm/norm.cu"

NORM_BEFORE = '''#include <cuda_fp16.h>

struct Base { int a; };
struct Derived : Base { float b; };

template <typename T>
__global__ void norm_kernel(T *out, const T *inp, const T *scale, int width) {
  const float4 *inp_f4 = (const float4 *)inp + blockIdx.x * width;
  float4 *out_f4 = (float4 *)out + blockIdx.x * width;
  for (int idx = threadIdx.x; idx < width; idx += blockDim.x) {
    float4 vscale = __ldg((const float4 *)scale + idx);
    float4 val = inp_f4[idx];
    __half2 *val_h2 = (__half2 *)(&val);
    val_h2[0] = __hmul2(val_h2[0], val_h2[1]);
    val.x = val.x * vscale.x;
    out_f4[idx] = val;
  }
}

__device__ float first_field(Base *base) {
  Derived *d = (Derived *)base;
  return d->b;
}

void run_norm(float *out, const float *inp, const float *scale, int rows, int width, cudaStream_t s) {
  norm_kernel<float><<<rows, 128, 0, s>>>(out, inp, scale, width);
}
'''

NORM_TREE = {"kernels/norm/norm.cu": '''#include <cuda_fp16.h>

struct Base { int a; };
struct Derived : Base { float b; };

// portq: ports vllm:csrc/norm/norm.cu::norm_kernel
template <typename T>
__global__ void rows_norm(T *out, const T *inp, const T *scale, int width) {
  const float4 *inp_f4 = (const float4 *)inp + blockIdx.x * width;
  float4 *out_f4 = (float4 *)out + blockIdx.x * width;
  for (int idx = threadIdx.x; idx < width; idx += blockDim.x) {
    float4 vscale = __ldg((const float4 *)scale + idx);
    float4 val = inp_f4[idx];
    __half2 *val_h2 = (__half2 *)(&val);
    val_h2[0] = __hmul2(val_h2[0], val_h2[1]);
    val.x = val.x * vscale.x;
    out_f4[idx] = val;
  }
}

// portq: ports vllm:csrc/norm/norm.cu::first_field
__device__ float field_of(Base *base) {
  Derived *d = (Derived *)base;
  return d->b;
}

// portq: ports vllm:csrc/norm/norm.cu::run_norm
void rows_norm_launch(float *out, const float *inp, const float *scale, int rows, int width, cudaStream_t s) {
  rows_norm<float><<<rows, 128, 0, s>>>(out, inp, scale, width);
}
''', "kernels/norm/ops.cu": '''#include "norm.cu"

void engine_norm(float *o, const float *i, const float *g, int r, int w, cudaStream_t s) {
  rows_norm_launch(o, i, g, r, w, s);
}
'''}


def _norm(tmp_path, after):
    return classify_commit(tmp_path, {NORM: NORM_BEFORE}, {NORM: after}, NORM_TREE, message="edit")


def test_c_pointer_casts_respelled_as_reinterpret_cast_are_cosmetic(tmp_path):
    after = NORM_BEFORE.replace("(const float4 *)inp + blockIdx.x * width",
                                "reinterpret_cast<const float4 *>(inp) + blockIdx.x * width") \
        .replace("(float4 *)out + blockIdx.x", "reinterpret_cast<float4 *>(out) + blockIdx.x") \
        .replace("__ldg((const float4 *)scale + idx)", "__ldg(reinterpret_cast<const float4 *>(scale) + idx)") \
        .replace("(__half2 *)(&val)", "reinterpret_cast<__half2 *>(&val)")
    verdict = _norm(tmp_path, after)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "cosmetic-cast-spelling" in verdict.rules, verdict.rules


def test_a_cast_to_a_pointer_to_a_class_respelled_stays_flagged(tmp_path):
    # `(Derived *)base` is a static_cast (it adjusts the pointer to the derived object); reinterpret_cast does not
    after = NORM_BEFORE.replace("Derived *d = (Derived *)base;", "Derived *d = reinterpret_cast<Derived *>(base);")
    verdict = _norm(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "cosmetic-cast-spelling" not in verdict.rules


def test_a_respelled_cast_to_another_type_stays_flagged(tmp_path):
    after = NORM_BEFORE.replace("__ldg((const float4 *)scale + idx)",
                                "__ldg(reinterpret_cast<const float4 *>(scale + idx))")
    verdict = _norm(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "cosmetic-cast-spelling" not in verdict.rules


def test_a_respelled_cast_beside_another_edit_stays_flagged(tmp_path):
    after = NORM_BEFORE.replace("(float4 *)out + blockIdx.x", "reinterpret_cast<float4 *>(out) + blockIdx.x") \
        .replace("val.x = val.x * vscale.x;", "val.x = val.x * vscale.y;")
    verdict = _norm(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "cosmetic-cast-spelling" not in verdict.rules
