// Torch ops of the engine's 4-bit linear layers over bitsandbytes' kernels,
// which are vendored unmodified under third_party/bitsandbytes/: NF4/FP4
// blockwise quantisation of a weight, its dequantisation, the 8-bit dynamic
// dequantisation of double-quantised absmax, and the 4-bit GEMV of decode.
// This file only checks tensors, fills the launchers' arguments and binds them.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <torch/all.h>

#include "third_party/bitsandbytes/ops.cuh"

namespace engine_bnb {

static void check_cuda(const at::Tensor& t, const char* name)
{
    TORCH_CHECK(t.is_cuda() && t.is_contiguous(), name, " must be a contiguous CUDA tensor");
}

static void check_blocksize(int64_t blocksize, const char* name)
{
    TORCH_CHECK(blocksize == 64 || blocksize == 128 || blocksize == 256 || blocksize == 512 || blocksize == 1024 ||
                    blocksize == 2048 || blocksize == 4096,
                name, ": blocksize must be a power of two from 64 to 4096");
}

// weight: any shape, fp16 or bf16; packed: (numel + 1) / 2 uint8; absmax: ceil(numel / blocksize) fp32.
// quant_type 1 is FP4, 2 is NF4 (DataType_t).
void quantize_4bit(const at::Tensor& weight, at::Tensor& packed, at::Tensor& absmax, int64_t blocksize,
                   int64_t quant_type)
{
    check_cuda(weight, "quantize_4bit: weight");
    check_cuda(packed, "quantize_4bit: packed");
    check_cuda(absmax, "quantize_4bit: absmax");
    check_blocksize(blocksize, "quantize_4bit");
    TORCH_CHECK(quant_type == FP4 || quant_type == NF4, "quantize_4bit: quant_type must be 1 (FP4) or 2 (NF4)");
    at::cuda::CUDAGuard guard{weight.device()};
    const int n = (int)weight.numel();
    unsigned char* out = packed.data_ptr<unsigned char>();
    float* amax = absmax.data_ptr<float>();
    if (weight.scalar_type() == at::kHalf) {
        half* a = (half*)weight.data_ptr();
        if (quant_type == NF4)
            quantizeBlockwise<half, 0, NF4>(nullptr, a, amax, out, nullptr, 0, (int)blocksize, n);
        else
            quantizeBlockwise<half, 0, FP4>(nullptr, a, amax, out, nullptr, 0, (int)blocksize, n);
    } else {
        TORCH_CHECK(weight.scalar_type() == at::kBFloat16, "quantize_4bit: weight must be fp16 or bf16");
        __nv_bfloat16* a = (__nv_bfloat16*)weight.data_ptr();
        if (quant_type == NF4)
            quantizeBlockwise<__nv_bfloat16, 0, NF4>(nullptr, a, amax, out, nullptr, 0, (int)blocksize, n);
        else
            quantizeBlockwise<__nv_bfloat16, 0, FP4>(nullptr, a, amax, out, nullptr, 0, (int)blocksize, n);
    }
}

// The inverse of quantize_4bit into out (fp16 or bf16, numel elements).
void dequantize_4bit(const at::Tensor& packed, const at::Tensor& absmax, at::Tensor& out, int64_t blocksize,
                     int64_t quant_type)
{
    check_cuda(packed, "dequantize_4bit: packed");
    check_cuda(absmax, "dequantize_4bit: absmax");
    check_cuda(out, "dequantize_4bit: out");
    check_blocksize(blocksize, "dequantize_4bit");
    TORCH_CHECK(quant_type == FP4 || quant_type == NF4, "dequantize_4bit: quant_type must be 1 (FP4) or 2 (NF4)");
    at::cuda::CUDAGuard guard{out.device()};
    const int n = (int)out.numel();
    unsigned char* a = packed.data_ptr<unsigned char>();
    float* amax = absmax.data_ptr<float>();
    if (out.scalar_type() == at::kHalf) {
        half* o = (half*)out.data_ptr();
        if (quant_type == NF4)
            dequantizeBlockwise<half, NF4>(nullptr, a, amax, o, (int)blocksize, n);
        else
            dequantizeBlockwise<half, FP4>(nullptr, a, amax, o, (int)blocksize, n);
    } else {
        TORCH_CHECK(out.scalar_type() == at::kBFloat16, "dequantize_4bit: out must be fp16 or bf16");
        __nv_bfloat16* o = (__nv_bfloat16*)out.data_ptr();
        if (quant_type == NF4)
            dequantizeBlockwise<__nv_bfloat16, NF4>(nullptr, a, amax, o, (int)blocksize, n);
        else
            dequantizeBlockwise<__nv_bfloat16, FP4>(nullptr, a, amax, o, (int)blocksize, n);
    }
}

// Double-quantised checkpoints store each weight's absmax as 8-bit dynamic
// codes (code: 256 fp32 values) with their own fp32 absmax per 256 codes.
void dequantize_absmax(const at::Tensor& codes, const at::Tensor& code, const at::Tensor& nested_absmax,
                       at::Tensor& out, int64_t blocksize)
{
    check_cuda(codes, "dequantize_absmax: codes");
    check_cuda(code, "dequantize_absmax: code");
    check_cuda(nested_absmax, "dequantize_absmax: nested_absmax");
    check_cuda(out, "dequantize_absmax: out");
    check_blocksize(blocksize, "dequantize_absmax");
    TORCH_CHECK(code.numel() == 256 && out.scalar_type() == at::kFloat, "dequantize_absmax: code (256,), out fp32");
    at::cuda::CUDAGuard guard{out.device()};
    dequantizeBlockwise<float, General8bit>(code.data_ptr<float>(), codes.data_ptr<unsigned char>(),
                                            nested_absmax.data_ptr<float>(), out.data_ptr<float>(), (int)blocksize,
                                            (int)out.numel());
}

// Decode-time GEMV: x (1, k) times the packed 4-bit weight (n, k) into out (1, n);
// code is the 16-entry NF4/FP4 lookup table the kernel reads.
void gemv_4bit(const at::Tensor& x, const at::Tensor& packed, const at::Tensor& absmax, const at::Tensor& code,
               at::Tensor& out, int64_t n, int64_t k, int64_t blocksize)
{
    check_cuda(x, "gemv_4bit: x");
    check_cuda(packed, "gemv_4bit: packed");
    check_cuda(absmax, "gemv_4bit: absmax");
    check_cuda(code, "gemv_4bit: code");
    check_cuda(out, "gemv_4bit: out");
    TORCH_CHECK(x.numel() == k && out.numel() == n && code.numel() == 16, "gemv_4bit: x (k,), out (n,), code (16,)");
    at::cuda::CUDAGuard guard{x.device()};
    // Leading dimensions as bitsandbytes' own Python side passes them for one row of x.
    const int lda = (int)n, ldb = (int)((k + 1) / 2), ldc = (int)n;
    unsigned char* b = packed.data_ptr<unsigned char>();
    float* amax = absmax.data_ptr<float>();
    float* table = code.data_ptr<float>();
    if (x.scalar_type() == at::kHalf)
        gemm_4bit_inference_naive<half, 16>((int)n, 1, (int)k, (half*)x.data_ptr(), b, amax, table,
                                            (half*)out.data_ptr(), lda, ldb, ldc, (int)blocksize);
    else {
        TORCH_CHECK(x.scalar_type() == at::kBFloat16, "gemv_4bit: x must be fp16 or bf16");
        gemm_4bit_inference_naive<__nv_bfloat16, 16>((int)n, 1, (int)k, (__nv_bfloat16*)x.data_ptr(), b, amax,
                                                     table, (__nv_bfloat16*)out.data_ptr(), lda, ldb, ldc,
                                                     (int)blocksize);
    }
}

}  // namespace engine_bnb

TORCH_LIBRARY(engine_bnb, m)
{
    m.def("quantize_4bit(Tensor weight, Tensor(a!) packed, Tensor(b!) absmax, int blocksize, int quant_type) -> ()");
    m.def("dequantize_4bit(Tensor packed, Tensor absmax, Tensor(a!) out, int blocksize, int quant_type) -> ()");
    m.def("dequantize_absmax(Tensor codes, Tensor code, Tensor nested_absmax, Tensor(a!) out, int blocksize) -> ()");
    m.def("gemv_4bit(Tensor x, Tensor packed, Tensor absmax, Tensor code, Tensor(a!) out, int n, int k, int blocksize) -> ()");
}

TORCH_LIBRARY_IMPL(engine_bnb, CUDA, m)
{
    m.impl("quantize_4bit", &engine_bnb::quantize_4bit);
    m.impl("dequantize_4bit", &engine_bnb::dequantize_4bit);
    m.impl("dequantize_absmax", &engine_bnb::dequantize_absmax);
    m.impl("gemv_4bit", &engine_bnb::gemv_4bit);
}
