"""Tile sizes the feed-forward kernels are launched with. Reads nothing but
the row width it is given; must not launch kernels."""

import triton

# The block sizes upstream's constants.py lists at the base (BLOCK_SIZES_POWERS_OF_2).
POW2_BLOCKS = [64, 128, 256, 512, 1024]


def norm_tiles(width: int) -> tuple[int, int]:
    """Rows per program and columns per step for a row of `width` elements:
    one column step when the row fits the largest tile, else the largest tile.
    The engine's own choice; upstream leaves both to its autotuner."""
    cols = min(max(triton.next_power_of_2(width), POW2_BLOCKS[0]), POW2_BLOCKS[-1])
    rows = max(1, POW2_BLOCKS[0] * 16 // cols)
    return rows, cols
