"""The tree's own stand-in for the host helpers the vendored operations call
(upstream's trident.util is not vendored): the dtype map and the tile and
warp choice under a 64 KiB shared-memory budget."""

import torch
import triton

from trident import math

SHARED_BYTES_PER_BLOCK = 64 * 1024


def map_dtype(dtype):
    table = {torch.float32: triton.language.float32, torch.float16: triton.language.float16}
    if dtype not in table:
        raise NotImplementedError(dtype)
    return table[dtype]


def get_block_size(num_elem, elem_sz):
    return min(triton.next_power_of_2(num_elem), SHARED_BYTES_PER_BLOCK // elem_sz)


def get_num_warps(num_elem, elem_sz, corr=1):
    fit = SHARED_BYTES_PER_BLOCK // (get_block_size(num_elem, elem_sz) * elem_sz)
    return math.clamp(math.prev_pow2(fit) * corr, 4, 32)
