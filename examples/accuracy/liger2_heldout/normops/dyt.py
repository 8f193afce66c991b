"""Dynamic Tanh (gamma * tanh(alpha * x) + beta), the normalisation-free
replacement for LayerNorm: a tiled forward, a persistent backward that
reduces alpha, gamma and beta gradients per program, the autograd op and
the module holding the three parameters.

It computes DyT; it does not choose where a model uses it.
"""

import torch
import triton
import triton.language as tl

from . import tiles

# Column tile of the forward: rows at least DYT_WIDE_ROW wide take the wide tile.
DYT_NARROW_TILE = 1024
DYT_WIDE_TILE = 2048
DYT_WIDE_ROW = 4096


@triton.jit
def _tanh(z):
    return 2.0 * tl.sigmoid(2.0 * z) - 1.0


# portq: ports liger:src/liger_kernel/ops/dyt.py::_dyt_fwd_kernel
@triton.jit
def _dyt_tile_fwd(x_ptr, y_ptr, alpha_ptr, gamma_ptr, beta_ptr, HAS_BETA: tl.constexpr, WIDTH: tl.constexpr, TILE: tl.constexpr):
    cols = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    live = cols < WIDTH
    row = tl.program_id(1).to(tl.int64)
    alpha = tl.load(alpha_ptr).to(tl.float32)
    gamma = tl.load(gamma_ptr + cols, mask=live, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + row * WIDTH + cols, mask=live, other=0.0).to(tl.float32)
    y = _tanh(alpha * x) * gamma
    if HAS_BETA:
        y += tl.load(beta_ptr + cols, mask=live, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * WIDTH + cols, y, mask=live)


# portq: ports liger:src/liger_kernel/ops/dyt.py::_dyt_bwd_kernel
@triton.jit
def _dyt_rows_bwd(
    dy_ptr, dx_ptr, dalpha_ptr, dgamma_ptr, dbeta_ptr, x_ptr, alpha_ptr, gamma_ptr,
    HAS_BETA: tl.constexpr, n_rows, WIDTH: tl.constexpr, TILE: tl.constexpr,
):
    tile_idx = tl.program_id(0)
    cols = tile_idx.to(tl.int64) * TILE + tl.arange(0, TILE)
    live = cols < WIDTH
    first = tl.program_id(1).to(tl.int64)
    alpha = tl.load(alpha_ptr).to(tl.float32)
    gamma = tl.load(gamma_ptr + cols, mask=live, other=0.0).to(tl.float32)
    dalpha = 0.0
    dgamma = tl.zeros((TILE,), dtype=tl.float32)
    dbeta = tl.zeros((TILE,), dtype=tl.float32)
    for row in range(first, n_rows, tl.num_programs(1)):
        x = tl.load(x_ptr + row * WIDTH + cols, mask=live, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * WIDTH + cols, mask=live, other=0.0).to(tl.float32)
        t = _tanh(alpha * x)
        dbeta += dy
        dgamma += dy * t
        inner = (1.0 - t * t) * dy * gamma
        dalpha += tl.sum(x * inner, 0)
        tl.store(dx_ptr + row * WIDTH + cols, alpha * inner, mask=live)
    tl.store(dgamma_ptr + first * WIDTH + cols, dgamma, mask=live)
    if HAS_BETA:
        tl.store(dbeta_ptr + first * WIDTH + cols, dbeta, mask=live)
    tl.store(dalpha_ptr + first * tl.num_programs(0) + tile_idx, dalpha)


# portq: ports liger:src/liger_kernel/ops/dyt.py::liger_dyt_fwd
def dyt_forward(x, alpha, gamma, beta, out=None):
    """DyT of a contiguous ``x``; ``out`` (x's shape and dtype) receives it when given."""
    shape = x.shape
    rows = x.view(-1, shape[-1])
    n_rows, width = rows.shape
    y = torch.empty_like(rows) if out is None else out.view(n_rows, width)
    cap = DYT_WIDE_TILE if width >= DYT_WIDE_ROW else DYT_NARROW_TILE
    tile = min(triton.next_power_of_2(width), cap)
    _dyt_tile_fwd[(triton.cdiv(width, tile), n_rows)](
        rows, y, alpha, gamma, beta, beta is not None, width, TILE=tile, num_warps=4, num_stages=1,
    )
    return y.view(shape)


# portq: ports liger:src/liger_kernel/ops/dyt.py::liger_dyt_bwd
def dyt_backward(dy, x, alpha, gamma, beta):
    """(dx, dalpha, dgamma, dbeta) of DyT; dbeta is None without beta."""
    shape = x.shape
    rows = x.view(-1, shape[-1])
    n_rows, width = rows.shape
    programs = tiles.resident_programs(x.device)
    tile = min(triton.next_power_of_2(width), DYT_NARROW_TILE)
    col_tiles = triton.cdiv(width, tile)
    dalpha = torch.zeros(programs, col_tiles, dtype=torch.float32, device=x.device)
    dgamma = torch.zeros(programs, width, dtype=torch.float32, device=x.device)
    dbeta = torch.zeros(programs, width, dtype=torch.float32, device=x.device) if beta is not None else None
    dx = torch.empty_like(dy)
    _dyt_rows_bwd[(col_tiles, programs)](
        dy, dx, dalpha, dgamma, dbeta, rows, alpha, gamma,
        beta is not None, n_rows, width, TILE=tile, num_warps=8, num_stages=2,
    )
    if dbeta is not None:
        dbeta = dbeta.sum(0).to(x.dtype)
    return dx.view(shape), dalpha.sum().to(x.dtype).unsqueeze(0), dgamma.sum(0).to(gamma.dtype), dbeta


# portq: ports liger:src/liger_kernel/ops/dyt.py::LigerDyTFunction
class DyTOp(torch.autograd.Function):
    """Autograd DyT: apply(x, alpha, gamma, beta); beta may be None."""

    @staticmethod
    def forward(ctx, x, alpha, gamma, beta):
        x = x.contiguous()
        ctx.save_for_backward(x, alpha, gamma, beta)
        return dyt_forward(x, alpha, gamma, beta)

    @staticmethod
    def backward(ctx, dy):
        x, alpha, gamma, beta = ctx.saved_tensors
        return dyt_backward(dy.contiguous(), x, alpha, gamma, beta)


# portq: ports liger:src/liger_kernel/transformers/dyt.py::LigerDyT
class DynamicTanh(torch.nn.Module):
    """DyT layer with a learned scalar alpha, per-channel gamma and optional beta."""

    def __init__(self, width, beta=True, init_alpha=0.5):
        super().__init__()
        self.width = width
        self.init_alpha = init_alpha
        self.alpha = torch.nn.Parameter(torch.full((1,), float(init_alpha)))
        self.gamma = torch.nn.Parameter(torch.ones(width))
        self.beta = torch.nn.Parameter(torch.zeros(width)) if beta else None

    def forward(self, x):
        return DyTOp.apply(x, self.alpha, self.gamma, self.beta)
