"""The tree's own stand-in for the device helpers the vendored kernels call
(upstream's trident.language is not vendored): tiles and masks, exponentials
in float32, the normalisation and the small matrix helpers of the backward."""

import triton
import triton.language as tl


@triton.jit
def make_block(max_sz, blk_sz: tl.constexpr, blk_off=0):
    idx = tl.arange(0, blk_sz) + blk_off
    return idx, idx < max_sz


@triton.jit
def exp(x):
    return tl.exp(x.to(tl.float32))


@triton.jit
def std(var, eps=1e-05):
    return tl.sqrt(var + eps)


@triton.jit
def norm(x, mean, std):
    return (x - mean) / std


@triton.jit
def pow2(x):
    return x * x


@triton.jit
def gemv(a, x):
    return tl.sum(a * x[None, :], 1)


@triton.jit
def diagflat(x, sz: tl.constexpr):
    idx = tl.arange(0, sz)
    return tl.where(idx[:, None] == idx[None, :], x[None, :], 0.0)
