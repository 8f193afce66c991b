"""FP8 GEMMs with fine-grained scaling for the engine: per-token 1x128 LHS
scales, per-block 128x128 RHS scales, FP32 accumulation promoted once per
128-wide K block, bf16 output. Triton kernels, PyTorch host code, and a C++
tile scheduler for the engine's CUDA build. Must not import the engine."""
