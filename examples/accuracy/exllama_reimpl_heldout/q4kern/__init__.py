"""4-bit GPTQ inference kernels for the engine, in Triton with PyTorch host
code: the quantised matmul (per-group scales and packed zeros, act-order
through a sequentialised group index and a column map), the reconstruction
to half, the RMSNorm and the in-place rotary embedding, and the host layer
(``ops``) the model calls. Must not import the engine."""

from .ops import (dequantize_q4, llama_rms_norm, matmul_q4, rope_, sequentialize_q4)

__all__ = ["dequantize_q4", "llama_rms_norm", "matmul_q4", "rope_", "sequentialize_q4"]
