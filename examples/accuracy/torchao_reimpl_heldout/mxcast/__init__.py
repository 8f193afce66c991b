"""MX casts for the engine's low-precision weights and activations: fp4 (e2m1)
nibble packing and unpacking, and the mxfp8 cast along dim 1 with e8m0 block
scales. Kernels and launchers only; no module here imports the engine."""
