"""The linear layer the engine drops in: packs uint8 codes of an
(out, in) weight into int32 words along the input axis, lays scales and
zeros out as (groups, out), and runs the GEMM or the GEMV, choosing by
timing once per (batch, shape) on a CUDA device (by batch size
elsewhere, where nothing can be timed)."""

import numpy as np
import torch
import triton.language as tl
from triton.testing import do_bench

from .dtypes import DType
from .gemm import GEMM
from .gemv import GEMV

# portq: not-carried gemlite:gemlite/core.py::GemLiteLinearCUDA -- the CUDA-extension backend; the engine runs the Triton kernels only
# portq: not-carried gemlite:gemlite/cuda_kernels/gemv_A16fWnO16f_int32packing.cu::gemv_A16fWniO16f -- CUDA backend
# portq: not-carried gemlite:gemlite/cuda_kernels/gemv_A8iWnO32i_int32packing.cu::gemv_A8iWniO32i -- CUDA backend, int8 activations

_CHOSEN = {}

# upstream's GEMLITE_TRITON_MAPPING: (input dtype value, matmul type) -> kernel
_BY_TYPE = {
    ("FP16", "GEMV"): GEMV,
    ("FP16", "GEMM"): GEMM,
    ("BF16", "GEMM"): GEMM,
}


# portq: ports gemlite:gemlite/core.py::eval_time @1fc7d50
def time_call(fn, args, warmup=25, rep=200, return_mode="min"):
    if isinstance(args, dict):
        return do_bench(lambda: fn(**args), warmup=warmup, rep=rep, return_mode=return_mode)
    return do_bench(lambda: fn(*args), warmup=warmup, rep=rep, return_mode=return_mode)


def unpack_columns(packed, nbits, dtype=torch.uint8):
    """Inverse of LowBitLinear.pack's word layout: (rows, N) int32 -> (rows * 32/nbits, N) codes."""
    per_word = 32 // nbits
    shifts = (torch.arange(per_word, device=packed.device, dtype=torch.int32) * nbits)[None, :, None]
    codes = (packed[:, None, :] >> shifts) & (2**nbits - 1)
    return codes.reshape(-1, packed.shape[1]).to(dtype)


# portq: ports gemlite:gemlite/core.py::GemLiteLinearTriton @1fc7d50
class LowBitLinear(torch.nn.Module):
    BITS = (1, 2, 4, 8)

    def __init__(self, W_nbits, group_size, in_features, out_features,
                 input_dtype=DType.FP16, output_dtype=DType.FP16, acc_dtype=None):
        super().__init__()
        if W_nbits not in self.BITS:
            raise NotImplementedError("Only 2,4,8 W_nbits are supported.")
        if in_features % 128 != 0 or out_features % 128 != 0:
            raise NotImplementedError("Invalid input shapes")

        self.in_features, self.out_features = in_features, out_features
        self.orig_shape = (out_features, in_features)
        self.W_nbits = W_nbits
        self.group_size = in_features if group_size == -1 else group_size
        self.unpack_mask = 2**W_nbits - 1
        self.elements_per_sample = 32 // W_nbits
        self.signature = (in_features, out_features, W_nbits, group_size)
        self.input_dtype, self.output_dtype = input_dtype, output_dtype

        self.compute_dtype = None
        if input_dtype == DType.FP16 and output_dtype == DType.FP16:
            self.kernels, self.compute_dtype = [GEMM, GEMV], torch.float16
        if input_dtype == DType.BF16 and output_dtype == DType.BF16:
            self.kernels, self.compute_dtype = [GEMM], torch.bfloat16
        if self.compute_dtype is None:
            raise NotImplementedError("Unsupport settings: ", (input_dtype, output_dtype, W_nbits))

        if acc_dtype is None:
            acc_dtype = DType.FP16 if self.compute_dtype == torch.float16 else DType.FP32
        self.acc_dtype = tl.float16 if acc_dtype == DType.FP16 else tl.float32

        groups = int(np.ceil(in_features / self.group_size))
        with torch.device("meta"):
            self.register_buffer("W_q", torch.zeros((in_features // 32 * W_nbits, out_features), dtype=torch.int32))
            self.register_buffer("scales", torch.zeros(groups, out_features, dtype=self.compute_dtype))
            self.register_buffer("zeros", torch.zeros(groups, out_features, dtype=self.compute_dtype))
        self.forward = self.forward_auto

    # portq: ports gemlite:gemlite/core.py::GemLiteLinearTriton.pack @1fc7d50
    def pack(self, W_q, scales, zeros, bias=None):
        """uint8 codes (out, in) -> int32 (in * nbits / 32, out): input row
        j of each run of 32/nbits goes to bits nbits*j of the word."""
        w = W_q.reshape(self.orig_shape).t().contiguous().to(torch.int32)
        per_word = 32 // self.W_nbits
        packed = torch.zeros((w.shape[0] // 32 * self.W_nbits, w.shape[1]), dtype=torch.int32, device=w.device)
        for j in range(per_word):
            packed |= w[j::per_word] << (self.W_nbits * j)
        self.W_q = packed.contiguous()
        self.scales = scales.reshape((self.out_features, -1)).t().contiguous()
        self.zeros = zeros.reshape((self.out_features, -1)).t().contiguous()
        self.bias = None if bias is None else torch.nn.Parameter(bias.to(device=self.W_q.device, dtype=self.compute_dtype))
        self.device = self.W_q.device
        return self

    def _args(self, x2d):
        return [x2d, self.W_q, self.scales, self.zeros, self.W_nbits, self.group_size,
                self.unpack_mask, self.elements_per_sample, self.acc_dtype]

    # portq: ports gemlite:gemlite/core.py::GemLiteLinearTriton.warmup @1fc7d50
    def warmup(self, signature, args):
        candidates = [k for k in self.kernels if not (signature[0] > 8 and k.matmul_type == "GEMV")]
        if args[0].is_cuda:
            times = [time_call(k.forward, args) for k in candidates]
        else:
            times = [0.0 if (k.matmul_type == "GEMV") == (signature[0] == 1) else 1.0 for k in candidates]
        best = int(np.argmin(times))
        _CHOSEN[signature] = {"forward": candidates[best].forward, "time": times[best]}

    # portq: ports gemlite:gemlite/core.py::GemLiteLinearTriton.forward_auto @1fc7d50
    def forward_auto(self, x):
        out_shape = x.shape[:-1] + (self.out_features,)
        args = self._args(x.view(-1, x.shape[-1]))
        signature = (x.shape[0],) + self.signature
        if signature not in _CHOSEN:
            self.warmup(signature, args)
        out = _CHOSEN[signature]["forward"](*args).view(out_shape)
        if self.bias is not None:
            out += self.bias
        return out

    # portq: ports gemlite:gemlite/core.py::GemLiteLinearTriton.forward_manual @1fc7d50
    def forward_manual(self, x, matmul_type="GEMM"):
        out_shape = x.shape[:-1] + (self.out_features,)
        kernel = _BY_TYPE[(self.input_dtype.value, matmul_type)]
        out = kernel.forward(*self._args(x.view(-1, x.shape[-1]))).view(out_shape)
        if self.bias is not None:
            out += self.bias
        return out
