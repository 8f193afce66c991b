"""The engine's encoder layer over LightSeq's vendored CUDA kernels (csrc/, registered as torch.ops.engine_lightseqv)."""
