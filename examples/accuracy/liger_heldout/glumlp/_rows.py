"""Row launch settings shared by the gated-activation kernels: the tile that
covers one row, the warps for it, and contiguous inputs for the ops.

It chooses settings only; it launches nothing and imports no kernel.
"""

import functools

import torch
import triton

# One program owns one whole row; rows wider than this are refused.
MAX_ROW_TILE = 65536

# Tile width from which each warp count applies (largest first).
WARPS_FROM_TILE = ((32768, 32), (8192, 16), (2048, 8))
DEFAULT_WARPS = 4


def row_tile(width):
    """(tile, warps) for a kernel that holds a row of ``width`` elements in one tile."""
    tile = triton.next_power_of_2(width)
    if tile > MAX_ROW_TILE:
        raise RuntimeError(f"rows of {width} elements need a tile over {MAX_ROW_TILE}; these ops do not split rows")
    for smallest, warps in WARPS_FROM_TILE:
        if tile >= smallest:
            return tile, warps
    return tile, DEFAULT_WARPS


def contiguous_inputs(op):
    """Make every tensor argument after ``ctx`` contiguous before ``op`` runs."""

    @functools.wraps(op)
    def run(ctx, *args, **kwargs):
        def fix(value):
            return value.contiguous() if isinstance(value, torch.Tensor) else value

        return op(ctx, *(fix(a) for a in args), **{k: fix(v) for k, v in kwargs.items()})

    return run
