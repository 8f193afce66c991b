"""Row-wise RMSNorm for the decoder's hidden states: our own Triton kernel
doing what aiter's ``rms_norm`` does, written against its semantics."""

from normops.rmsnorm import rmsnorm

__all__ = ["rmsnorm"]
