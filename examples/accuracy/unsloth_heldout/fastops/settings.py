"""Launch settings shared by the row kernels: the tile that holds a whole
row and the warps for it.

It only chooses settings; it launches nothing and knows no device.
"""

import triton

# Widest tile one program may hold; a wider row is refused, not split.
FUSED_LIMIT = 65536


# portq: ports unsloth:unsloth/kernels/utils.py::calculate_settings
# portq: not-carried unsloth:unsloth/kernels/utils.py::is_cdna -- NVIDIA only: no AMD warp tuning
# portq: not-carried unsloth:unsloth/kernels/utils.py::torch_gpu_device -- one GPU per process: no device guard around launches
def row_block_and_warps(width: int) -> tuple[int, int]:
    """(tile, warps) for a kernel that keeps a row of ``width`` elements in one tile."""
    tile = triton.next_power_of_2(width)
    if tile > FUSED_LIMIT:
        raise RuntimeError(f"a row of {width} elements needs a tile over {FUSED_LIMIT}")
    if tile >= 32768:
        return tile, 32
    if tile >= 8192:
        return tile, 16
    if tile >= 2048:
        return tile, 8
    return tile, 4
