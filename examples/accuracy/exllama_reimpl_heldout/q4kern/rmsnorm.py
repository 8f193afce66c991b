"""RMSNorm, x * w / sqrt(mean(x * x) + epsilon), epsilon added to the mean
inside the root; the reciprocal root rounded to half, then two half
products (x times it, then times w) as upstream's half2 multiplies."""

import triton
import triton.language as tl


# portq: ports exllama:exllama_ext/cuda_func/rms_norm.cu::rms_norm_row_product_kernel @3dc7cd9
# portq: ports exllama:exllama_ext/cuda_func/rms_norm.cu::rms_norm_kernel @3dc7cd9
@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, out_ptr, epsilon, r_dim, dim, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, dim, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * dim + cols, mask=cols < dim, other=0.0).to(tl.float32)
        acc += v * v
    rm = (1.0 / tl.sqrt(tl.sum(acc, axis=0) * r_dim + epsilon)).to(tl.float16).to(tl.float32)
    for start in range(0, dim, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        keep = cols < dim
        v = tl.load(x_ptr + row * dim + cols, mask=keep, other=0.0).to(tl.float32)
        g = tl.load(w_ptr + cols, mask=keep, other=0.0).to(tl.float32)
        y = (v * rm).to(tl.float16).to(tl.float32) * g
        tl.store(out_ptr + row * dim + cols, y.to(tl.float16), mask=keep)


# portq: ports exllama:exllama_ext/cuda_func/rms_norm.cu::rms_norm_cuda @3dc7cd9
def rms_norm(x, w, out, epsilon):
    """x (rows, dim) half -> out; works in place when out is x."""
    rows, dim = x.shape
    block = min(triton.next_power_of_2(dim), 1024)
    _rms_norm_kernel[(rows,)](x, w, out, epsilon, 1.0 / dim, dim, BLOCK=block)
    return out
