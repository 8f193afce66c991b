"""Block and stage selection: the fewest waves over the SMs, then the best
last-wave utilisation, then the deepest pipeline that fits shared memory,
and TMA multicast of 2 for large normal GEMMs. The Triton kernel uses the
chosen block M and the block N rounded up to a power of two."""

from .utils import ceil_div, m_alignment_for_contiguous_layout

SM90_SMEM_CAPACITY = 232448


# portq: ports deepgemm:deep_gemm/jit_kernels/gemm.py::is_tma_multicast_legal @a6d97a1
def multicast_legal(n: int, block_n: int, multicast: int, num_sms: int) -> bool:
    if multicast == 1:
        return True
    return n % (block_n * multicast) == 0 and num_sms % multicast == 0


# portq: ports deepgemm:deep_gemm/jit_kernels/gemm.py::get_smem_size @a6d97a1
def smem_bytes(num_stages: int, k: int, block_m: int, block_n: int, block_k: int = 128) -> int:
    per_stage = block_m * block_k + block_m * 4 + block_n * block_k
    scales_b = ceil_div(k, block_k) * 4 * (1 if block_k % block_n == 0 else 2)
    return block_m * block_n * 2 + num_stages * per_stage + scales_b + num_stages * 8 * 2


def _waves(m, n, groups, num_sms, bm, bn):
    return ceil_div(ceil_div(m, bm) * ceil_div(n, bn) * groups, num_sms)


def _last_wave(m, n, groups, num_sms, bm, bn):
    left = (ceil_div(m, bm) * ceil_div(n, bn) * groups) % num_sms
    return num_sms if left == 0 else left


# portq: ports deepgemm:deep_gemm/jit_kernels/gemm.py::get_best_configs @a6d97a1
def best_config(m: int, n: int, k: int, num_groups: int, num_sms: int, is_grouped_contiguous: bool = False):
    """(block_m, block_n, num_stages, tma_multicast, smem_bytes)."""
    block_ms = (m_alignment_for_contiguous_layout(),) if is_grouped_contiguous else (64 if m <= 64 else 128,)
    best = None
    for bm in block_ms:
        for bn in range(16, 129, 8):
            if best is None:
                best = (bm, bn)
                continue
            waves, best_waves = _waves(m, n, num_groups, num_sms, bm, bn), _waves(m, n, num_groups, num_sms, *best)
            if waves < best_waves:
                best = (bm, bn)
            elif waves == best_waves:
                util, best_util = _last_wave(m, n, num_groups, num_sms, bm, bn), _last_wave(m, n, num_groups, num_sms, *best)
                if util > best_util or (util == best_util and bn >= best[1] and bm <= best[0]):
                    best = (bm, bn)
    block_m, block_n = best
    stages, size = None, None
    for s in ((6, 5, 4) if 128 % block_n != 0 else (8, 7, 6, 5, 4)):
        size = smem_bytes(s, k, block_m, block_n)
        if size <= SM90_SMEM_CAPACITY:
            stages = s
            break
    assert stages is not None
    multicast = 2 if m >= 1024 and num_groups == 1 and multicast_legal(n, block_n, 2, num_sms) else 1
    return block_m, block_n, stages, multicast, size
