"""Block-size choice for the fused quantised matmul: shrinks each candidate
tile to the problem's (power-of-two) extent and drops duplicates. It must not
time kernels: the engine launches the first candidate left, with no sweep.

# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/custom_autotune.py::CustomizedTritonAutoTuner -- no timed sweep: the first shrunk config is launched
# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/custom_autotune.py::autotune -- no timed sweep: the first shrunk config is launched
"""

import math

import triton


def _pow2_at_least_16(extent: int) -> int:
    return max(16, 1 << max(0, math.ceil(math.log2(max(extent, 1)))))


# portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/custom_autotune.py::matmul248_kernel_config_pruner
def shrink_block_configs(configs, sizes):
    """Candidates with BLOCK_SIZE_M/N/K capped at the next power of two of M/N/K
    (at least 16), in order, each distinct tile and pipeline shape once."""
    caps = {axis: _pow2_at_least_16(sizes[axis]) for axis in ("M", "N", "K")}
    seen = set()
    for cfg in configs:
        tile = {f"BLOCK_SIZE_{axis}": min(caps[axis], cfg.kwargs[f"BLOCK_SIZE_{axis}"]) for axis in ("M", "N", "K")}
        shape = (tile["BLOCK_SIZE_M"], tile["BLOCK_SIZE_N"], tile["BLOCK_SIZE_K"],
                 cfg.kwargs["GROUP_SIZE_M"], cfg.num_stages, cfg.num_warps)
        if shape in seen:
            continue
        seen.add(shape)
        yield triton.Config({**tile, "GROUP_SIZE_M": cfg.kwargs["GROUP_SIZE_M"]},
                            num_stages=cfg.num_stages, num_warps=cfg.num_warps)
