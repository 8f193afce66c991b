"""The engine's decoder step over its CUDA kernels (csrc/, registered as torch.ops.engine_ct2)."""
