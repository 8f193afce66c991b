"""Batched bf16 matmul for the MLA weight absorption: our own Triton kernel
doing what aiter's ``batched_gemm_bf16`` does, with our own structure."""

from mlabmm.batched import bmm_bf16

__all__ = ["bmm_bf16"]
