"""The engine's decoder step over CTranslate2's vendored CUDA kernels (csrc/, registered as torch.ops.engine_ct2v)."""
