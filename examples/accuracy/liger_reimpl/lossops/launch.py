"""Launch helpers shared by the ops: tile and warp choice for a row width,
and making tensor arguments contiguous before a kernel sees them.

It only chooses launch settings; it launches nothing itself.
"""

import functools

import torch
import triton

# Widest row a single tile may cover; wider rows are refused, not tiled.
ROW_TILE_LIMIT = 65536


# portq: ports liger:src/liger_kernel/ops/utils.py::ensure_contiguous
# portq: not-carried liger:src/liger_kernel/ops/utils.py::compare_version -- this tree pins its torch and triton, so nothing branches on versions
def contiguous_args(op):
    """Wrap an autograd ``forward``/``backward`` so that every tensor argument
    after ``ctx`` (positional or keyword) is contiguous."""

    @functools.wraps(op)
    def run(ctx, *args, **kwargs):
        def fix(value):
            return value.contiguous() if isinstance(value, torch.Tensor) else value

        return op(ctx, *[fix(a) for a in args], **{k: fix(v) for k, v in kwargs.items()})

    return run


# portq: ports liger:src/liger_kernel/ops/utils.py::calculate_settings
def row_launch(width):
    """(tile, warps) for kernels that hold a whole row of ``width`` in one tile."""
    tile = triton.next_power_of_2(width)
    if tile > ROW_TILE_LIMIT:
        raise RuntimeError(f"a row of {width} elements needs a tile over {ROW_TILE_LIMIT}; this op does not tile rows")
    if tile >= 32768:
        warps = 32
    elif tile >= 8192:
        warps = 16
    elif tile >= 2048:
        warps = 8
    else:
        warps = 4
    return tile, warps
