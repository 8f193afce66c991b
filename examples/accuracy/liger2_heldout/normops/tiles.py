"""Launch settings the norm ops share: the tile and warp count for a row
held whole in one tile, and how many resident programs a persistent
reduction launches on a device.

It chooses settings only; it launches nothing and allocates nothing.
"""

import torch
import triton

# Widest row one tile may hold; wider rows are refused rather than looped over.
ROW_TILE_LIMIT = 65536

# Programs a persistent reduction launches where the device reports no multiprocessor count.
FALLBACK_PROGRAMS = 4


def row_tile(width):
    """(tile, warps) for a kernel that keeps a row of ``width`` elements in one tile."""
    tile = triton.next_power_of_2(width)
    if tile > ROW_TILE_LIMIT:
        raise RuntimeError(f"a row of {width} elements needs a tile over {ROW_TILE_LIMIT}")
    warps = 32 if tile >= 32768 else 16 if tile >= 8192 else 8 if tile >= 2048 else 4
    return tile, warps


def resident_programs(device):
    """How many programs keep every multiprocessor of ``device`` busy once."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return FALLBACK_PROGRAMS
