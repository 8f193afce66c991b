"""The engine's decoder layer over Transformer Engine's vendored CUDA kernels."""
