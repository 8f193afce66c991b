"""The engine's attention block over ExLlamaV2's vendored CUDA kernels."""
