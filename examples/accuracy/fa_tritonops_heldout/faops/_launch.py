"""Launch helpers shared by the ops: the device a kernel is launched on and
the warp count for a tile width.

It chooses launch settings only; it launches nothing itself.
"""

import contextlib

import torch


def device_guard(tensor: torch.Tensor):
    """Make ``tensor``'s GPU the current device for a launch (a no-op for CPU
    tensors, which only the Triton interpreter runs)."""
    if tensor.is_cuda:
        return torch.cuda.device(tensor.device.index)
    return contextlib.nullcontext()


def warps_for(tile: int, caps=((2048, 4), (8192, 8), (128 * 1024, 16))) -> int:
    """Warps for a program that reduces a row tile of ``tile`` elements:
    the first cap the tile is under, else 32."""
    for limit, warps in caps:
        if tile < limit:
            return warps
    return 32
