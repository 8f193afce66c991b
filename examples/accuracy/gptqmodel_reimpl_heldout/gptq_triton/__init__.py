"""GPTQ weight-only quantised matmuls in Triton for the engine's linear layers:
unpack-and-dequantise then a dense matmul, and a fused kernel that dequantises
tiles inside the matmul. Holds kernels and their launchers only; it must not
load checkpoints or choose a kernel per layer (the engine does)."""
