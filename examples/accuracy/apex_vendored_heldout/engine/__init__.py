"""The engine's encoder layer over Apex's vendored CUDA kernels (csrc/, registered as torch.ops.engine_apexv)."""
