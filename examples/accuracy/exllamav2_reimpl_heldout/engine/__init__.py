"""The engine's attention block over its own CUDA kernels (csrc/)."""
