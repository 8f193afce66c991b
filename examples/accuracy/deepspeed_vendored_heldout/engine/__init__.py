"""The engine's transformer layer over DeepSpeed's vendored inference kernels."""
