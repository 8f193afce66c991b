"""The engine's FP8 linear layers, on the vendored FBGEMM kernels."""
