"""C++ definitions renamed in place (docs/tricky-cases.md, "a C++ kernel renamed
in place"): ``cpp-alpha-equivalence``.

A C++ definition whose whole change is one consistent, one-to-one renaming of
its parameters (each in its own position: C++ binds arguments by position) and
its locals, with ``const`` qualifiers added or dropped and comments rewritten,
computes the same from the same arguments: NOT_APPLICABLE/cosmetic. Two
parameters trading roles, a changed operand or three terms regrouped (not
exact in IEEE arithmetic) stay flagged, and so does a renamed name a macro of
the file reads.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

RESIDUAL = "csrc/fused/acc.cu"

BEFORE = '''#include <cuda_fp16.h>

__global__ void fused_add(float* input, float* output, float* bias, int total_count, int width, bool preln)
{
    float4* input_cast = reinterpret_cast<float4*>(input);
    float4* output_cast = reinterpret_cast<float4*>(output);
    float4* bias_cast = reinterpret_cast<float4*>(bias);
    int offset = blockIdx.x * blockDim.x + threadIdx.x;
    if (offset < total_count) {
        float4 data = input_cast[offset];
        float4 out = output_cast[offset];
        float4 b = bias_cast[offset % width];
        if (preln) {
            data.x = (data.x + b.x + (out.x + b.x)) * 0.5f;
        } else {
            data.x = data.x + out.x + b.x;
        }
        input_cast[offset] = data;
    }
}

void launch_fused_add(float* input, float* output, float* bias, int count, int width, bool preln,
                           cudaStream_t stream)
{
    fused_add<<<(count + 255) / 256, 256, 0, stream>>>(input, output, bias, count, width, preln);
}
'''

RENAMED = '''#include <cuda_fp16.h>

__global__ void fused_add(float* acc,
                               const float* shortcut,
                               const float* bias,
                               const int total_count,
                               const int width,
                               const bool preln)
{
    float4* res_ptr = reinterpret_cast<float4*>(acc);
    const float4* hs_ptr = reinterpret_cast<const float4*>(shortcut);
    const float4* bias_ptr = reinterpret_cast<const float4*>(bias);
    const int offset = blockIdx.x * blockDim.x + threadIdx.x;
    if (offset < total_count) {
        float4 res = res_ptr[offset];
        const float4 hs = hs_ptr[offset];
        const float4 bias_fl4 = bias_ptr[offset % width];
        if (preln) {
            // acc = (acc + bias + shortcut + bias) / 2
            res.x = (res.x + bias_fl4.x + (hs.x + bias_fl4.x)) * 0.5f;
        } else {
            // acc += shortcut + bias
            res.x = res.x + hs.x + bias_fl4.x;
        }
        res_ptr[offset] = res;
    }
}

void launch_fused_add(float* acc, float* shortcut, float* bias, int count, int width, bool preln,
                           cudaStream_t stream)
{
    fused_add<<<(count + 255) / 256, 256, 0, stream>>>(acc, shortcut, bias, count, width, preln);
}
'''

TREE = {"kernels/fused/acc.cu": '''#include <cuda_fp16.h>

// portq: ports vllm:csrc/fused/acc.cu::fused_add
__global__ void add_acc(float* x, float* y, float* bias, int n, int width, bool preln)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] + y[i] + bias[i % width];
    }
}

// portq: ports vllm:csrc/fused/acc.cu::launch_fused_add
void acc_add(float* x, float* y, float* bias, int n, int width, bool preln, cudaStream_t stream)
{
    add_acc<<<(n + 255) / 256, 256, 0, stream>>>(x, y, bias, n, width, preln);
}
''', "kernels/fused/layer.cu": '''#include "acc.cu"

void close_layer(float* x, float* y, float* bias, int n, int width, cudaStream_t s) { acc_add(x, y, bias, n, width, false, s); }
'''}


def _scan(tmp_path, after, before=BEFORE):
    return classify_commit(tmp_path, {RESIDUAL: before}, {RESIDUAL: after}, TREE, message="readability")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_parameters_and_locals_renamed_in_place_with_const_added_are_cosmetic(tmp_path):
    verdict = _scan(tmp_path, RENAMED)
    for name in ("fused_add", "launch_fused_add"):
        symbol = _symbol(verdict, name)
        assert (symbol.verdict, symbol.justification) == (NOT_APPLICABLE, "cosmetic"), (name, symbol.reason)
    assert "cpp-alpha-equivalence" in _symbol(verdict, "fused_add").rules
    assert "input → acc" in _symbol(verdict, "fused_add").reason
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason


def test_two_parameters_trading_roles_are_no_renaming(tmp_path):
    # the kernel now accumulates into its second pointer: the caller's buffers swap roles
    swapped = RENAMED.replace("float* acc,\n                               const float* shortcut,",
                              "const float* shortcut,\n                               float* acc,")
    verdict = _scan(tmp_path, swapped)
    kernel = _symbol(verdict, "fused_add")
    assert kernel.justification != "cosmetic", kernel.reason
    assert "cpp-alpha-equivalence" not in kernel.rules


def test_a_changed_operand_is_no_renaming(tmp_path):
    changed = RENAMED.replace("res.x = res.x + hs.x + bias_fl4.x;", "res.x = res.x + hs.x + hs.x;")
    kernel = _symbol(_scan(tmp_path, changed), "fused_add")
    assert kernel.justification != "cosmetic", kernel.reason
    assert "cpp-alpha-equivalence" not in kernel.rules


def test_three_terms_regrouped_are_no_renaming(tmp_path):
    # (a + b) + c and a + (b + c) round differently in floating point
    regrouped = RENAMED.replace("res.x = res.x + hs.x + bias_fl4.x;", "res.x = res.x + (hs.x + bias_fl4.x);")
    kernel = _symbol(_scan(tmp_path, regrouped), "fused_add")
    assert kernel.justification != "cosmetic", kernel.reason
    assert "cpp-alpha-equivalence" not in kernel.rules


def test_a_renamed_local_a_macro_of_the_file_reads_is_no_renaming(tmp_path):
    macro = "#define ROW_OFFSET (offset % width)\n"
    before = BEFORE.replace("#include <cuda_fp16.h>\n", "#include <cuda_fp16.h>\n" + macro) \
        .replace("bias_cast[offset % width]", "bias_cast[ROW_OFFSET]")
    after = RENAMED.replace("#include <cuda_fp16.h>\n", "#include <cuda_fp16.h>\n" + macro) \
        .replace("bias_ptr[offset % width]", "bias_ptr[ROW_OFFSET]").replace("const int width,", "const int cols,")
    kernel = _symbol(_scan(tmp_path, after, before), "fused_add")
    assert kernel.justification != "cosmetic", kernel.reason
    assert "cpp-alpha-equivalence" not in kernel.rules
