"""Launch choices of the head's kernels: the element-wise tile list the
activation kernel is launched with and the rows a softmax program takes. Reads
nothing but the sizes it is given; must not launch kernels."""

import triton

# Element-wise tiles, smallest first; the widest one also sizes the engine's own launches.
ELEMENTWISE_TILES = ((64, 2), (128, 2), (256, 4), (512, 4), (1024, 4))

# Rows a softmax program may take at most when rows are short.
MAX_ROWS_PER_PROGRAM = 128


# portq: ports attorch:attorch/utils.py::element_wise_kernel_configs
def elementwise_configs() -> list:
    """One autotuning candidate per element-wise tile (block size, warps)."""
    return [triton.Config({"BLOCK": block}, num_warps=warps) for block, warps in ELEMENTWISE_TILES]


def elementwise_config(n: int):
    """The engine's own choice among the candidates, instead of timing them:
    the smallest tile that covers `n` elements, else the widest."""
    configs = elementwise_configs()
    return next((c for c in configs if c.kwargs["BLOCK"] >= n), configs[-1])


# portq: ports attorch:attorch/softmax_kernels.py::BLOCK_SIZE_BATCH_heuristic
def rows_per_program(n_rows: int, width: int) -> int:
    """Rows one softmax program normalises: rows shorter than 64 are packed,
    one more doubling per doubling of the row count past 1024, at most
    MAX_ROWS_PER_PROGRAM; wider rows get a program each."""
    if width >= 64:
        return 1
    return min(max(1, triton.next_power_of_2(n_rows // 1024)), MAX_ROWS_PER_PROGRAM)
