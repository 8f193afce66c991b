"""The engine's decode-step preparation kernels: RoPE written straight into a
padded KV cache, and RMSNorm with its fused residual add. Triton, NVIDIA
only; inference only (no autograd)."""
