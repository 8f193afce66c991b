"""A close Triton port of aiter's 16-bit GEMM (``gemm_a16w16``)."""

from densegemm.gemm_a16w16 import gemm_a16w16

__all__ = ["gemm_a16w16"]
