"""LayerNorm forward in one read of each row for the statistics (Welford's
merge of per-tile mean and squared deviations) and a second read to
normalise. Mean and reciprocal standard deviation are written per row, as
upstream does for a backward it never ships. One kernel only: the
implementation is not selectable."""

import torch
import triton
import triton.language as tl

# largest tile of a row handled by one program
TILE_CAP = 4096


# portq: ports kernl:src/kernl/implementations/layer_norm.py::_layer_norm_fwd_fused_single_pass @71e8fb0975
# portq: not-carried kernl:src/kernl/implementations/layer_norm.py::layer_norm_xformers -- benchmark variant, one kernel only
# portq: not-carried kernl:src/kernl/implementations/layer_norm.py::_layer_norm_fwd_fused_multi_pass -- benchmark variant, one kernel only
# portq: not-carried kernl:src/kernl/implementations/layer_norm.py::pytorch_naive_layernorm -- benchmark reference
@triton.jit
def _ln_welford_row(Out, X, W, B, Mean, Rstd, row_stride, n_cols, eps, TILE: tl.constexpr):
    row = tl.program_id(0)
    x_row = X + row * row_stride
    o_row = Out + row * row_stride
    lanes = tl.arange(0, TILE)

    mean = tl.zeros([1], dtype=tl.float32)
    m2 = tl.zeros([1], dtype=tl.float32)
    for start in range(0, n_cols, TILE):
        offs = start + lanes
        live = offs < n_cols
        x = tl.load(x_row + offs, mask=live, other=0.0).to(tl.float32)
        count = tl.minimum(n_cols - start, TILE).to(tl.float32)
        seen = start + count
        tile_mean = tl.sum(x, 0) / count
        dev = tl.where(live, x - tile_mean, 0.0)
        tile_m2 = tl.sum(dev * dev, 0)
        delta = tile_mean - mean
        m2 += tile_m2 + delta * delta * (start * count / seen)
        mean += delta * (count / seen)

    rstd = 1.0 / tl.sqrt(m2 / n_cols + eps)
    tl.store(Mean + row + tl.arange(0, 1), mean)
    tl.store(Rstd + row + tl.arange(0, 1), rstd)

    for start in range(0, n_cols, TILE):
        offs = start + lanes
        live = offs < n_cols
        x = tl.load(x_row + offs, mask=live, other=0.0).to(tl.float32)
        w = tl.load(W + offs, mask=live, other=0.0).to(tl.float32)
        b = tl.load(B + offs, mask=live, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(o_row + offs, y.to(Out.dtype.element_ty), mask=live)


# portq: ports kernl:src/kernl/implementations/layer_norm.py::LayerNorm.forward @71e8fb0975
# portq: not-carried kernl:src/kernl/implementations/layer_norm.py::LayerNorm.forward[implementation] -- one kernel only
def launch_layernorm(x, weight, bias, eps):
    """Normalise the last axis of x; return the output only."""
    assert x.dtype == weight.dtype == bias.dtype, "input, weight and bias must share a dtype"
    if x.dtype == torch.float16:
        # fp16 cannot hold a smaller epsilon next to a variance of 1
        eps = max(eps, 1.6e-5)
    out = torch.empty_like(x)
    rows = x.reshape(-1, x.shape[-1])
    n_rows, n_cols = rows.shape
    mean = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    rstd = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    # a tile holds at most 64 KB of the row, at least 128 and at most TILE_CAP lanes
    tile = min(65536 // x.element_size(), triton.next_power_of_2(n_cols))
    tile = min(max(tile, 128), TILE_CAP)
    warps = min(max(tile // 256, 1), 8)
    _ln_welford_row[(n_rows,)](out, rows, weight, bias, mean, rstd, rows.stride(0), n_cols, eps,
                               TILE=tile, num_warps=warps)
    return out
