"""The engine's encoder layer over its CUDA kernels (csrc/, registered as torch.ops.engine_lightseq)."""
