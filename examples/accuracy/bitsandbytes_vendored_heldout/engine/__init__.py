"""The engine's 4-bit linear layers over bitsandbytes' vendored CUDA kernels."""
