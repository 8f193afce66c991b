// Torch ops of the engine's 4-bit linear layers (csrc/*.cuh), compiled as one
// CUDA translation unit by the engine's build: each op checks its tensors,
// dispatches on the activation dtype and the 4-bit format, and calls one
// launcher under a guard for the tensors' device.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include "blockwise.cuh"
#include "gemv_4bit.cuh"

namespace {

using engine_q4::kFP4;
using engine_q4::kNF4;

void check_cuda(const at::Tensor& t, const char* what)
{
    TORCH_CHECK(t.is_cuda() && t.is_contiguous(), what, ": expected a contiguous CUDA tensor");
}

void check_blocksize(int64_t blocksize, const char* what)
{
    TORCH_CHECK(blocksize >= 64 && blocksize <= 4096 && (blocksize & (blocksize - 1)) == 0, what,
                ": blocksize must be a power of two from 64 to 4096");
}

void check_kind(int64_t kind, const char* what)
{
    TORCH_CHECK(kind == kFP4 || kind == kNF4, what, ": quant_kind must be 1 (FP4) or 2 (NF4)");
}

template <typename T>
void quantize_as(const at::Tensor& w, at::Tensor& packed, at::Tensor& absmax, int blocksize, int kind)
{
    const T* in = reinterpret_cast<const T*>(w.data_ptr());
    const int n = (int)w.numel();
    if (kind == kNF4)
        engine_q4::quantize_blockwise_4bit<T, kNF4>(in, absmax.data_ptr<float>(), packed.data_ptr<uint8_t>(), blocksize, n);
    else
        engine_q4::quantize_blockwise_4bit<T, kFP4>(in, absmax.data_ptr<float>(), packed.data_ptr<uint8_t>(), blocksize, n);
}

// weight: fp16/bf16, any shape; packed: (numel + 1) / 2 uint8; absmax: ceil(numel / blocksize) fp32.
void quantize_blockwise_4bit(const at::Tensor& weight, at::Tensor& packed, at::Tensor& absmax, int64_t blocksize,
                             int64_t quant_kind)
{
    check_cuda(weight, "quantize_blockwise_4bit: weight");
    check_cuda(packed, "quantize_blockwise_4bit: packed");
    check_cuda(absmax, "quantize_blockwise_4bit: absmax");
    check_blocksize(blocksize, "quantize_blockwise_4bit");
    check_kind(quant_kind, "quantize_blockwise_4bit");
    TORCH_CHECK(packed.numel() == (weight.numel() + 1) / 2, "quantize_blockwise_4bit: packed must hold (numel + 1) / 2 bytes");
    const c10::cuda::CUDAGuard guard(weight.device());
    if (weight.scalar_type() == at::kHalf)
        quantize_as<half>(weight, packed, absmax, (int)blocksize, (int)quant_kind);
    else if (weight.scalar_type() == at::kBFloat16)
        quantize_as<__nv_bfloat16>(weight, packed, absmax, (int)blocksize, (int)quant_kind);
    else
        TORCH_CHECK(false, "quantize_blockwise_4bit: weight must be fp16 or bf16");
}

template <typename T>
void dequantize_as(const at::Tensor& packed, const at::Tensor& absmax, at::Tensor& out, int blocksize, int kind)
{
    T* dst = reinterpret_cast<T*>(out.data_ptr());
    const int n = (int)out.numel();
    if (kind == kNF4)
        engine_q4::dequantize_blockwise_4bit<T, kNF4>(packed.data_ptr<uint8_t>(), absmax.data_ptr<float>(), dst, blocksize, n);
    else
        engine_q4::dequantize_blockwise_4bit<T, kFP4>(packed.data_ptr<uint8_t>(), absmax.data_ptr<float>(), dst, blocksize, n);
}

void dequantize_blockwise_4bit(const at::Tensor& packed, const at::Tensor& absmax, at::Tensor& out, int64_t blocksize,
                               int64_t quant_kind)
{
    check_cuda(packed, "dequantize_blockwise_4bit: packed");
    check_cuda(absmax, "dequantize_blockwise_4bit: absmax");
    check_cuda(out, "dequantize_blockwise_4bit: out");
    check_blocksize(blocksize, "dequantize_blockwise_4bit");
    check_kind(quant_kind, "dequantize_blockwise_4bit");
    const c10::cuda::CUDAGuard guard(out.device());
    if (out.scalar_type() == at::kHalf)
        dequantize_as<half>(packed, absmax, out, (int)blocksize, (int)quant_kind);
    else if (out.scalar_type() == at::kBFloat16)
        dequantize_as<__nv_bfloat16>(packed, absmax, out, (int)blocksize, (int)quant_kind);
    else
        TORCH_CHECK(false, "dequantize_blockwise_4bit: out must be fp16 or bf16");
}

// x: (k,) one token; packed: the (m, k) weight, (k + 1) / 2 bytes a row; table: 16 fp32
// levels; bias: (m,) or None; out: (m,).
void gemv_4bit_inference(const at::Tensor& x, const at::Tensor& packed, const at::Tensor& absmax,
                         const at::Tensor& table, const c10::optional<at::Tensor>& bias, at::Tensor& out, int64_t m,
                         int64_t k, int64_t blocksize)
{
    check_cuda(x, "gemv_4bit_inference: x");
    check_cuda(packed, "gemv_4bit_inference: packed");
    check_cuda(absmax, "gemv_4bit_inference: absmax");
    check_cuda(table, "gemv_4bit_inference: table");
    check_cuda(out, "gemv_4bit_inference: out");
    check_blocksize(blocksize, "gemv_4bit_inference");
    TORCH_CHECK(x.numel() == k && out.numel() == m && table.numel() == 16 && table.scalar_type() == at::kFloat,
                "gemv_4bit_inference: x (k,), out (m,), table (16,) fp32");
    TORCH_CHECK(!bias.has_value() || (bias->numel() == m && bias->scalar_type() == x.scalar_type()),
                "gemv_4bit_inference: bias must be (m,) in x's dtype");
    const c10::cuda::CUDAGuard guard(x.device());
    const int ldw = (int)((k + 1) / 2);
    if (x.scalar_type() == at::kHalf) {
        const half* b = bias.has_value() ? reinterpret_cast<const half*>(bias->data_ptr()) : nullptr;
        engine_q4::gemv_4bit_inference<half>((int)m, 1, (int)k, reinterpret_cast<const half*>(x.data_ptr()),
                                             packed.data_ptr<uint8_t>(), absmax.data_ptr<float>(),
                                             table.data_ptr<float>(), b, reinterpret_cast<half*>(out.data_ptr()), ldw,
                                             (int)blocksize);
    } else {
        TORCH_CHECK(x.scalar_type() == at::kBFloat16, "gemv_4bit_inference: x must be fp16 or bf16");
        const __nv_bfloat16* b = bias.has_value() ? reinterpret_cast<const __nv_bfloat16*>(bias->data_ptr()) : nullptr;
        engine_q4::gemv_4bit_inference<__nv_bfloat16>(
            (int)m, 1, (int)k, reinterpret_cast<const __nv_bfloat16*>(x.data_ptr()), packed.data_ptr<uint8_t>(),
            absmax.data_ptr<float>(), table.data_ptr<float>(), b, reinterpret_cast<__nv_bfloat16*>(out.data_ptr()),
            ldw, (int)blocksize);
    }
}

}  // namespace

TORCH_LIBRARY(engine_q4, m)
{
    m.def("quantize_blockwise_4bit(Tensor weight, Tensor(a!) packed, Tensor(b!) absmax, int blocksize, int quant_kind) -> ()");
    m.def("dequantize_blockwise_4bit(Tensor packed, Tensor absmax, Tensor(a!) out, int blocksize, int quant_kind) -> ()");
    m.def("gemv_4bit_inference(Tensor x, Tensor packed, Tensor absmax, Tensor table, Tensor? bias, Tensor(a!) out, int m, int k, int blocksize) -> ()");
}

TORCH_LIBRARY_IMPL(engine_q4, CUDA, m)
{
    m.impl("quantize_blockwise_4bit", &quantize_blockwise_4bit);
    m.impl("dequantize_blockwise_4bit", &dequantize_blockwise_4bit);
    m.impl("gemv_4bit_inference", &gemv_4bit_inference);
}
