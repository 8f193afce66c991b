"""Launch settings the row kernels share: the tile that holds one row, the
smallest tile a head's half may use, and the element block of the gates.

It only chooses numbers; it launches nothing and knows no device.
"""

import triton

# Widest row one program holds; a wider row is refused rather than split.
MAX_ROW_TILE = 65536
# tl.arange needs at least 16 lanes for a tile the dot-free kernels load.
MIN_HALF_TILE = 16
# Elements of the gated activations one program handles.
GATE_BLOCK = 1024


def row_tile(width: int) -> int:
    """The power-of-two tile that holds a row of ``width`` elements."""
    tile = triton.next_power_of_2(width)
    if tile > MAX_ROW_TILE:
        raise ValueError(f"a row of {width} elements needs a tile over {MAX_ROW_TILE}")
    return tile


def half_tile(head_dim: int) -> int:
    """The tile of one half of a rotated head (at least MIN_HALF_TILE)."""
    return max(triton.next_power_of_2(head_dim // 2), MIN_HALF_TILE)
