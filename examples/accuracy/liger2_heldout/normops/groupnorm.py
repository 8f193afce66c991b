"""GroupNorm forward over (batch, channels, *spatial) inputs, one program per
(sample, group): the group's statistics from running sums, then the
per-channel affine step. Inference only: the vision tower's norms are frozen.

It normalises; it does not own parameters or reshape outputs for callers.
"""

import torch
import triton
import triton.language as tl

# Largest tile one program streams a group through.
GROUP_TILE_CAP = 65536

# portq: not-carried liger:src/liger_kernel/ops/group_norm.py::_group_norm_backward_kernel -- inference only: the tower's GroupNorms are frozen
# portq: not-carried liger:src/liger_kernel/ops/group_norm.py::group_norm_backward -- inference only
# portq: not-carried liger:src/liger_kernel/ops/group_norm.py::LigerGroupNormFunction -- inference only: the engine calls the forward directly under no_grad


# portq: ports liger:src/liger_kernel/ops/group_norm.py::_group_norm_forward_kernel
@triton.jit
def _gn_groups_fwd(
    out_ptr, out_batch_stride, out_group_stride,
    in_ptr, in_batch_stride, in_group_stride,
    mean_ptr, mean_batch_stride, mean_group_stride,
    rstd_ptr, rstd_batch_stride, rstd_group_stride,
    scale_ptr, shift_ptr,
    group_len,
    channels_per_group,
    eps,
    TILE: tl.constexpr,
):
    sample = tl.program_id(0)
    group = tl.program_id(1)
    src = in_ptr + sample * in_batch_stride + group * in_group_stride
    dst = out_ptr + sample * out_batch_stride + group * out_group_stride
    lanes = tl.arange(0, TILE)

    total = 0.0
    total_sq = 0.0
    for start in tl.range(0, group_len, TILE):
        idx = start + lanes
        x = tl.load(src + idx, mask=idx < group_len, other=0.0)
        total += tl.sum(x)
        total_sq += tl.sum(x * x)
    mean = total / group_len
    var = total_sq / group_len - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)

    per_channel = group_len // channels_per_group
    for k in tl.range(0, channels_per_group):
        channel = group * channels_per_group + k
        w = tl.load(scale_ptr + channel)
        b = tl.load(shift_ptr + channel)
        base = k * per_channel
        for start in range(0, per_channel, TILE):
            idx = start + lanes
            live = idx < per_channel
            x = tl.load(src + base + idx, mask=live, other=0.0)
            tl.store(dst + base + idx, (x - mean) * rstd * w + b, mask=live)

    tl.store(mean_ptr + sample * mean_batch_stride + group * mean_group_stride, mean)
    tl.store(rstd_ptr + sample * rstd_batch_stride + group * rstd_group_stride, rstd)


# portq: ports liger:src/liger_kernel/ops/group_norm.py::group_norm_forward
def gn_forward(x, channels, groups, weight, bias, eps):
    """(y, x, mean, rstd, tile) of GroupNorm; y and x keep the input's shape."""
    if channels % groups:
        raise ValueError(f"channels {channels} is not a multiple of groups {groups}")
    shape = x.shape
    batch = shape[0]
    grouped = x.view(batch, groups, -1).contiguous()
    group_len = grouped.shape[-1]
    tile = min(GROUP_TILE_CAP, triton.next_power_of_2(group_len))
    y = torch.empty_like(grouped)
    mean = torch.zeros((batch, groups), dtype=x.dtype, device=x.device)
    rstd = torch.zeros((batch, groups), dtype=x.dtype, device=x.device)
    _gn_groups_fwd[(batch, groups)](
        y, y.stride(0), y.stride(1),
        grouped, grouped.stride(0), grouped.stride(1),
        mean, mean.stride(0), mean.stride(1),
        rstd, rstd.stride(0), rstd.stride(1),
        weight, bias,
        group_len, channels // groups, eps,
        TILE=tile,
    )
    return y.view(*shape), grouped.view(*shape), mean, rstd, tile
