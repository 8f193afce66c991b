"""RMSNorm forward of the engine: one Triton program per row, the row held in
registers, optional weight, bias and residual add, optional per-row rstd (and
mean, for the LayerNorm variant that shares the kernel).

Forward only; it must not allocate on behalf of a backward, and it does not
tile a row across programs (no clusters): rows wider than MAX_ROW_WIDTH are
rejected.
"""

from typing import Optional, Tuple

import torch
import triton
import triton.language as tl

# Activations, weights and residuals the kernel reads; accumulation is fp32.
SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
# One program holds a whole row; wider rows would spill.
MAX_ROW_WIDTH = 65536
# Width thresholds -> threads that share one row (a warp is 32 threads).
ROW_THREADS = ((64, 8), (128, 16), (3072, 32), (6144, 64), (16384, 128))
WIDEST_ROW_THREADS = 256


# portq: ports quack:quack/rmsnorm.py::RMSNorm._calculate_threads_per_row
def warps_for_width(n_cols: int) -> int:
    """Warps one program uses for a row of n_cols elements."""
    threads = WIDEST_ROW_THREADS
    for limit, count in ROW_THREADS:
        if n_cols <= limit:
            threads = count
            break
    return max(1, threads // 32)


# portq: not-carried quack:quack/rmsnorm.py::RMSNorm.__init__ -- the row stays in registers; no shared-memory reload or delayed weight load to configure
# portq: not-carried quack:quack/rmsnorm.py::RMSNorm._set_cluster_n -- one program per row, no thread-block clusters
# portq: ports quack:quack/rmsnorm.py::RMSNorm.kernel
@triton.jit
def _row_norm_kernel(
    X, W, B, RES, OUT, RES_OUT, RSTD, MEAN,
    stride_x, stride_res, stride_out, stride_res_out,
    n_cols, eps,
    HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr, HAS_RESIDUAL: tl.constexpr,
    WRITE_RESIDUAL: tl.constexpr, WRITE_RSTD: tl.constexpr, WRITE_MEAN: tl.constexpr,
    CENTERED: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    in_row = cols < n_cols
    h = tl.load(X + row * stride_x + cols, mask=in_row, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        h += tl.load(RES + row * stride_res + cols, mask=in_row, other=0.0).to(tl.float32)
    if WRITE_RESIDUAL:
        tl.store(RES_OUT + row * stride_res_out + cols,
                 h.to(RES_OUT.dtype.element_ty), mask=in_row)
    if CENTERED:
        mu = tl.sum(h, axis=0) / n_cols
        if WRITE_MEAN:
            tl.store(MEAN + row, mu)
        h = tl.where(in_row, h - mu, 0.0)
    inv_rms = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    if WRITE_RSTD:
        tl.store(RSTD + row, inv_rms)
    y = h * inv_rms
    if HAS_WEIGHT:
        y *= tl.load(W + cols, mask=in_row, other=0.0).to(tl.float32)
    if HAS_BIAS:
        y += tl.load(B + cols, mask=in_row, other=0.0).to(tl.float32)
    tl.store(OUT + row * stride_out + cols, y.to(OUT.dtype.element_ty), mask=in_row)


# portq: ports quack:quack/rmsnorm.py::RMSNorm.__call__
def launch_row_norm(x, weight, bias, residual, out, residual_out, rstd, mean,
                    eps: float, centered: bool) -> None:
    """Launch one program per row of x (M, N) with the width's warp count."""
    n_rows, n_cols = x.shape
    absent = x  # never read: its constexpr flag is off
    _row_norm_kernel[(n_rows,)](
        x,
        weight if weight is not None else absent,
        bias if bias is not None else absent,
        residual if residual is not None else absent,
        out,
        residual_out if residual_out is not None else absent,
        rstd if rstd is not None else absent,
        mean if mean is not None else absent,
        x.stride(0),
        residual.stride(0) if residual is not None else 0,
        out.stride(0),
        residual_out.stride(0) if residual_out is not None else 0,
        n_cols, eps,
        HAS_WEIGHT=weight is not None, HAS_BIAS=bias is not None,
        HAS_RESIDUAL=residual is not None, WRITE_RESIDUAL=residual_out is not None,
        WRITE_RSTD=rstd is not None, WRITE_MEAN=mean is not None,
        CENTERED=centered, BLOCK=triton.next_power_of_2(n_cols),
        num_warps=warps_for_width(n_cols),
    )


# portq: ports quack:quack/rmsnorm.py::_rmsnorm_fwd
def row_norm_(x: torch.Tensor, weight: Optional[torch.Tensor], out: torch.Tensor,
              bias: Optional[torch.Tensor] = None, rstd: Optional[torch.Tensor] = None,
              mean: Optional[torch.Tensor] = None, residual: Optional[torch.Tensor] = None,
              residual_out: Optional[torch.Tensor] = None, eps: float = 1e-6,
              is_layernorm: bool = False) -> None:
    """Normalise the rows of x into out (and residual_out, rstd, mean where given)."""
    if x.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"x: expected float16, bfloat16 or float32, got {x.dtype}")
    for name, t in (("weight", weight), ("residual", residual)):
        if t is not None and t.dtype not in SUPPORTED_DTYPES:
            raise TypeError(f"{name}: expected float16, bfloat16 or float32, got {t.dtype}")
    if x.shape[1] > MAX_ROW_WIDTH:
        raise ValueError(f"x: rows of at most {MAX_ROW_WIDTH} columns, got {x.shape[1]}")
    if x.numel() == 0:
        return  # nothing to launch for an empty batch
    launch_row_norm(x, weight, bias, residual, out, residual_out, rstd, mean, eps, is_layernorm)


# portq: ports quack:quack/rmsnorm.py::rmsnorm_fwd
def rmsnorm_fwd(x: torch.Tensor, weight: Optional[torch.Tensor] = None,
                bias: Optional[torch.Tensor] = None, residual: Optional[torch.Tensor] = None,
                out_dtype: Optional[torch.dtype] = None,
                residual_dtype: Optional[torch.dtype] = None, eps: float = 1e-6,
                store_rstd: bool = False) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    """RMSNorm of x (M, N): (out, the pre-norm sum, rstd or None)."""
    out = torch.empty_like(x, dtype=x.dtype if out_dtype is None else out_dtype)
    rstd = torch.empty(x.shape[0], device=x.device, dtype=torch.float32) if store_rstd else None
    if residual is not None:
        residual_dtype = residual.dtype
    needs_sum = residual is not None or (residual_dtype is not None and residual_dtype != x.dtype)
    residual_out = (torch.empty_like(x, dtype=residual_dtype or x.dtype) if needs_sum else None)
    row_norm_(x, weight, out, bias, rstd, None, residual, residual_out, eps, False)
    return out, (x if residual_out is None else residual_out), rstd


# portq: ports quack:quack/rmsnorm.py::rmsnorm_ref
def rmsnorm_reference(x, w=None, bias=None, residual=None, eps=1e-6):
    """Plain torch RMSNorm in fp32, the kernels' yardstick."""
    h = x.float()
    if residual is not None:
        h = h + residual.float()
    y = h * torch.rsqrt(h.square().mean(dim=-1, keepdim=True) + eps)
    if w is not None:
        y = y * w.float()
    if bias is not None:
        y = y + bias.float()
    if residual is None:
        return y.to(x.dtype)
    return y.to(x.dtype), h.to(residual.dtype)


# portq: ports quack:quack/rmsnorm.py::RMSNormFunction.forward
# portq: not-carried quack:quack/rmsnorm.py::RMSNormFunction.backward -- inference only, no backward
def _rmsnorm_rows(x, weight, bias, residual, out_dtype, residual_dtype, eps, prenorm):
    """rmsnorm_fwd over the last dimension of any-rank x."""
    shape = x.shape
    x = x.reshape(-1, shape[-1])
    if residual is not None:
        residual = residual.reshape(-1, shape[-1])
    out, summed, _ = rmsnorm_fwd(x, weight, bias=bias, residual=residual, out_dtype=out_dtype,
                                 residual_dtype=residual_dtype, eps=eps)
    if residual is None or not prenorm:
        return out.reshape(shape)
    return out.reshape(shape), summed.reshape(shape)


# portq: ports quack:quack/rmsnorm.py::rmsnorm
def rmsnorm(x: torch.Tensor, weight: Optional[torch.Tensor] = None,
            bias: Optional[torch.Tensor] = None, residual: Optional[torch.Tensor] = None,
            out_dtype: Optional[torch.dtype] = None,
            residual_dtype: Optional[torch.dtype] = None, eps: float = 1e-6,
            prenorm: bool = False):
    """RMSNorm of x's last dimension; with prenorm and a residual, also the sum."""
    return _rmsnorm_rows(x, weight, bias, residual, out_dtype, residual_dtype, eps, prenorm)


def add_rmsnorm_(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                 eps: float = 1e-6) -> torch.Tensor:
    """The engine's own fused step: residual += x in place, return RMSNorm(residual)."""
    flat_x = x.reshape(-1, x.shape[-1])
    flat_res = residual.view(-1, residual.shape[-1])
    out = torch.empty_like(flat_x)
    row_norm_(flat_x, weight, out, residual=flat_res, residual_out=flat_res, eps=eps)
    return out.reshape(x.shape)


class RMSNormLayer(torch.nn.RMSNorm):
    """torch.nn.RMSNorm with the engine's kernel as its forward."""

    # portq: ports quack:quack/rmsnorm.py::QuackRMSNorm.forward
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rmsnorm(x, self.weight, eps=self.eps)
