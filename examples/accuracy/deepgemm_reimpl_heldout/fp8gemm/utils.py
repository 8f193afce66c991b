"""Host helpers: ceiling division, the SM budget, the grouped layout's M
alignment, and the TMA-aligned column-major layout of the LHS scales."""

import torch

_sm_budget = None


# portq: ports deepgemm:deep_gemm/jit_kernels/utils.py::set_num_sms @a6d97a1
def set_num_sms(num_sms: int) -> None:
    """Cap the number of SMs the GEMMs plan for."""
    global _sm_budget
    if torch.cuda.is_available():
        assert 0 < num_sms <= torch.cuda.get_device_properties(device="cuda").multi_processor_count
    assert num_sms > 0
    _sm_budget = num_sms


# portq: ports deepgemm:deep_gemm/jit_kernels/utils.py::get_num_sms @a6d97a1
def get_num_sms() -> int:
    """The SM budget, the device's SM count unless set_num_sms lowered it."""
    global _sm_budget
    if _sm_budget is None:
        _sm_budget = torch.cuda.get_device_properties(device="cuda").multi_processor_count
    return _sm_budget


# portq: ports deepgemm:deep_gemm/jit_kernels/utils.py::cell_div @a6d97a1
def ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


# portq: ports deepgemm:deep_gemm/jit_kernels/utils.py::get_m_alignment_for_contiguous_layout @a6d97a1
def m_alignment_for_contiguous_layout() -> int:
    """Every group's rows in the contiguous grouped layout are padded to a
    multiple of this (one GEMM block of M)."""
    return 128


# portq: ports deepgemm:deep_gemm/jit_kernels/utils.py::get_tma_aligned_size @a6d97a1
def tma_aligned_size(x: int, element_size: int) -> int:
    """x rounded up so that x elements take a multiple of 16 bytes."""
    alignment_bytes = 16
    assert alignment_bytes % element_size == 0
    per = alignment_bytes // element_size
    return ceil_div(x, per) * per


# portq: ports deepgemm:deep_gemm/jit_kernels/utils.py::get_col_major_tma_aligned_tensor @a6d97a1
def col_major_tma_aligned(x: torch.Tensor) -> torch.Tensor:
    """x (M, K) or (G, M, K) in column-major storage with M padded to 16
    bytes; returned unchanged when it already is."""
    assert x.dim() in (2, 3)
    squeeze = x.dim() == 2
    if squeeze:
        x = x.unsqueeze(0)
    b, m, n = x.shape
    aligned_m = tma_aligned_size(m, x.element_size())
    if x.stride(0) == aligned_m * n and x.stride(1) == 1 and x.stride(2) == aligned_m:
        return x.squeeze(0) if squeeze else x
    out = torch.empty((b, n, aligned_m), device=x.device, dtype=x.dtype).transpose(1, 2)
    out[:, :m, :] = x
    return out.squeeze(0) if squeeze else out
