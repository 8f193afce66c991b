"""The engine's transformer layer over its own CUDA kernels (csrc/)."""
