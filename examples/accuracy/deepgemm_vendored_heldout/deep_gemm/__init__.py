"""The vendored DeepGEMM subset's package root. jit_kernels/gemm.py,
m_grouped_gemm.py, utils.py and tuner.py and the CUDA headers under
include/deep_gemm/ are upstream's, written by the accuracy scorer; this root
is the tree's own and imports nothing, so the host helpers load without the
JIT (the GEMMs themselves need it and a Hopper device)."""
