"""Device-side row reductions the softmax and layer-norm kernels call (the
row's maximum, mean and variance, each walking the row in tiles), and the
host-side tile and warp choice their launchers share.

Holds no kernels of its own and launches nothing.
"""

import triton
import triton.language as tl

# Bytes of shared memory one program may stage; bounds a row's tile.
SHARED_BYTES_PER_PROGRAM = 64 * 1024
# The warp counts a row's program may run with.
MIN_WARPS = 4
MAX_WARPS = 32


def tile_and_warps(width: int, elem_bytes: int, warp_scale: int = 1) -> tuple[int, int]:
    """The tile (a power of two, at most the shared budget) and the warps one row uses."""
    tile = min(triton.next_power_of_2(width), SHARED_BYTES_PER_PROGRAM // elem_bytes)
    fit = SHARED_BYTES_PER_PROGRAM // (tile * elem_bytes)
    lower_pow2 = 1 << (fit.bit_length() - 1) if fit > 0 else 0
    return tile, max(MIN_WARPS, min(MAX_WARPS, lower_pow2 * warp_scale))


# portq: ports trident:trident/kernel/math.py::maximum
@triton.jit
def row_max(row_ptr, width, TILE: tl.constexpr):
    best = tl.full([TILE], float("-inf"), tl.float32)
    for start in range(0, width, TILE):
        cols = start + tl.arange(0, TILE)
        vals = tl.load(row_ptr + cols, mask=cols < width, other=float("-inf"))
        best = tl.maximum(best, vals.to(tl.float32))
    return tl.max(best, 0)


# portq: ports trident:trident/kernel/math.py::mean
@triton.jit
def row_mean(row_ptr, width, TILE: tl.constexpr, ACC: tl.constexpr):
    total = tl.zeros([TILE], ACC)
    for start in range(0, width, TILE):
        cols = start + tl.arange(0, TILE)
        total += tl.load(row_ptr + cols, mask=cols < width, other=0.0).to(ACC)
    return tl.sum(total, 0) / width


# portq: ports trident:trident/kernel/math.py::variance
@triton.jit
def row_variance(row_ptr, width, centre, TILE: tl.constexpr, ACC: tl.constexpr):
    squares = tl.zeros([TILE], tl.float32)
    for start in range(0, width, TILE):
        cols = start + tl.arange(0, TILE)
        inside = cols < width
        vals = tl.load(row_ptr + cols, mask=inside, other=0.0).to(tl.float32)
        diff = tl.where(inside, vals - centre, 0.0)
        squares += diff * diff
    return (tl.sum(squares, 0) / width).to(ACC)
