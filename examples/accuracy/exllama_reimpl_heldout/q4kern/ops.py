"""The host layer the model calls, with upstream's checks and its quant
arguments (qweight, scales, zeros, seq_g_idx, x_map): what the extension's
bindings and its Python wrapper do together, in one place, over the Triton
kernels. None stands for upstream's meta-tensor placeholder. The cuBLAS
and custom half matmuls, the fused MLP, the repetition penalty and the
autograd function are not carried: the reconstruct-then-multiply path
multiplies with torch.matmul."""

import torch

from .matmul import q4_matmul
from .recons import recons_q4
from .remap import column_remap
from .rmsnorm import rms_norm
from .rope import rope
from .sequential import sequentialize

# portq: not-carried exllama:exllama_ext/exllama_ext.cpp::half_matmul -- the engine multiplies half matrices with torch.matmul
# portq: not-carried exllama:exllama_ext/exllama_ext.cpp::half_matmul_cublas -- the engine multiplies half matrices with torch.matmul
# portq: not-carried exllama:exllama_ext/exllama_ext.cpp::q4v2_mlp -- the fused MLP is not carried; the engine chains the quantised matmuls
# portq: not-carried exllama:exllama_ext/exllama_ext.cpp::rep_penalty -- sampling is not part of the port
# portq: not-carried exllama:exllama_ext/exllama_ext.cpp::check_cuda -- Triton launches raise on their own
# portq: not-carried exllama:cuda_ext.py::matmul_half -- the engine multiplies half matrices with torch.matmul
# portq: not-carried exllama:cuda_ext.py::mlp_q4v2 -- the fused MLP is not carried
# portq: not-carried exllama:cuda_ext.py::rep_penalty_mask_cpu -- sampling is not part of the port
# portq: not-carried exllama:cuda_ext.py::ExAutogradMatmul4bitCuda -- inference only, no backward
# portq: not-carried exllama:cuda_ext.py::_dump_tensor -- debugging helper


def _check_quant(w, scales, zeros, seq_g_idx, x_map):
    assert w.dtype == torch.int32, "w is incorrect datatype, must be kInt"
    assert scales.dtype == torch.float16, "w_scales is incorrect datatype, must be kHalf"
    assert zeros.dtype == torch.int32, "w_zeros is incorrect datatype, must be kInt"
    assert seq_g_idx is None or seq_g_idx.dtype == torch.int16
    assert x_map is None or x_map.dtype == torch.int32
    assert seq_g_idx is None or seq_g_idx.shape[0] == w.shape[0] * 8 * 2
    assert x_map is None or x_map.shape[0] == w.shape[0] * 8


# portq: ports exllama:exllama_ext/exllama_ext.cpp::get_groupsize @3dc7cd9
def get_groupsize(w, zeros):
    groupsize = w.shape[0] * 8 // zeros.shape[0]
    assert groupsize * zeros.shape[0] == w.shape[0] * 8, "w.shape[-2] must be a multiple of zeros.shape[-2]"
    return groupsize


# portq: ports exllama:exllama_ext/exllama_ext.cpp::q4v2_matmul @3dc7cd9
def q4v2_matmul(x, w, out, scales, zeros, seq_g_idx=None):
    _check_quant(w, scales, zeros, seq_g_idx, None)
    assert x.dtype == torch.float16 and out.dtype == torch.float16
    assert x.shape[1] % 256 == 0, "x.shape[1] must be a multiple of 256"
    assert x.shape[1] == w.shape[0] * 8, "x and w have incompatible shapes"
    q4_matmul(x, w, out, scales, zeros, get_groupsize(w, zeros), seq_g_idx)


# portq: ports exllama:exllama_ext/exllama_ext.cpp::q4v2_recons @3dc7cd9
def q4v2_recons(w, out, scales, zeros, seq_g_idx=None):
    _check_quant(w, scales, zeros, seq_g_idx, None)
    assert out.dtype == torch.float16
    recons_q4(w, out, scales, zeros, get_groupsize(w, zeros), seq_g_idx)


# portq: ports exllama:exllama_ext/exllama_ext.cpp::q4v2_sequential @3dc7cd9
def q4v2_sequential(w, g_idx, seq_g_idx, x_map, num_groups):
    assert w.dtype == torch.int32 and g_idx.dtype == torch.int32
    assert seq_g_idx.dtype == torch.int16 and x_map.dtype == torch.int32
    assert g_idx.shape[0] == x_map.shape[0] and seq_g_idx.shape[0] == g_idx.shape[0] * 2
    assert g_idx.shape[0] == w.shape[0] * 8
    sequentialize(w, g_idx, seq_g_idx, x_map, num_groups)


# portq: ports exllama:exllama_ext/exllama_ext.cpp::column_remap @3dc7cd9
def column_remap_(x, x_new, x_map):
    assert x.dtype == torch.float16 and x_new.dtype == torch.float16 and x_map.dtype == torch.int32
    assert x_map.shape[0] == x.shape[1], "x_map and x have incompatible shapes"
    column_remap(x, x_new, x_map)


# portq: ports exllama:exllama_ext/exllama_ext.cpp::rms_norm @3dc7cd9
def rms_norm_(x, w, out, epsilon):
    rms_norm(x, w, out, epsilon)


# portq: ports exllama:exllama_ext/exllama_ext.cpp::rope @3dc7cd9
def rope_ext(x, sin, cos, past_len, num_heads, head_dim):
    assert x.dtype == torch.float16 and sin.dtype == torch.float16 and cos.dtype == torch.float16
    assert head_dim == cos.shape[-1], "cos table does not match head_dim"
    assert head_dim == sin.shape[-1], "sin table does not match head_dim"
    rope(x, sin, cos, x.numel() // head_dim, head_dim, num_heads, past_len)


def _remapped(x, x_map):
    shape = x.shape
    flat = x.view(-1, shape[-1])
    mapped = torch.empty_like(flat)
    column_remap_(flat, mapped, x_map)
    return mapped.view(shape)


# portq: ports exllama:cuda_ext.py::_matmul_q4v2_matmul @3dc7cd9
def _matmul_q4_fused(x, w, scales, zeros, seq_g_idx, x_map):
    if x_map is not None:
        x = _remapped(x, x_map)
    outshape = x.shape[:-1] + (w.shape[1],)
    x = x.view(-1, x.shape[-1])
    output = torch.empty((x.shape[0], w.shape[-1]), dtype=torch.float16, device=x.device)
    q4v2_matmul(x, w, output, scales, zeros, seq_g_idx)
    return output.view(outshape)


# portq: ports exllama:cuda_ext.py::_matmul_q4v2_recons @3dc7cd9
def _matmul_q4_recons(x, w, scales, zeros, seq_g_idx, x_map):
    assert w.shape[0] * 8 == x.shape[-1]
    weight = torch.empty((w.shape[0] * 8, w.shape[1]), dtype=torch.float16, device=w.device)
    q4v2_recons(w, weight, scales, zeros, seq_g_idx)
    if x_map is not None:
        x = _remapped(x, x_map)
    return torch.matmul(x, weight)


# portq: ports exllama:cuda_ext.py::dequantize_q4v2 @3dc7cd9
def dequantize_q4(quant_args):
    w = quant_args["qweight"]
    weight = torch.empty((w.shape[0] * 8, w.shape[1]), dtype=torch.float16, device=w.device)
    q4v2_recons(w, weight, quant_args["scales"], quant_args["zeros"], quant_args["seq_g_idx"])
    if quant_args["x_map"] is not None:
        # rows were sequentialised: undo it
        weight = weight[torch.argsort(quant_args["x_map"].long())]
    return weight


# portq: ports exllama:cuda_ext.py::matmul_q4v2 @3dc7cd9
def matmul_q4(x, quant_args, switch):
    args = (x, quant_args["qweight"], quant_args["scales"], quant_args["zeros"],
            quant_args["seq_g_idx"], quant_args["x_map"])
    return _matmul_q4_recons(*args) if switch else _matmul_q4_fused(*args)


# portq: ports exllama:cuda_ext.py::rope_ @3dc7cd9
def rope_(x, sin, cos, past_len, num_heads, head_dim):
    assert past_len + x.shape[-2] <= sin.shape[-2]
    rope_ext(x, sin, cos, past_len, num_heads, head_dim)


# portq: ports exllama:cuda_ext.py::sequential_q4v2 @3dc7cd9
def sequentialize_q4(w, g_idx, num_groups):
    seq_g_idx = torch.zeros((w.shape[0] * 8 * 2,), dtype=torch.int16, device=w.device)
    x_map = torch.zeros_like(g_idx)
    q4v2_sequential(w, g_idx, seq_g_idx, x_map, num_groups)
    return seq_g_idx, x_map


# portq: ports exllama:cuda_ext.py::llama_rms_norm @3dc7cd9
def llama_rms_norm(x, w, epsilon):
    outshape = x.shape
    x = x.view(-1, x.shape[-1])
    output = torch.empty_like(x)
    rms_norm_(x, w, output, epsilon)
    return output.view(outshape)
