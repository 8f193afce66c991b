"""The engine's 4-bit linear layers over its own CUDA kernels (csrc/)."""
