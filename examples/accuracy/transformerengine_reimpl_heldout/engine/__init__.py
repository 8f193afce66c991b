"""The engine's decoder layer over its own RoPE and SwiGLU CUDA kernels."""
