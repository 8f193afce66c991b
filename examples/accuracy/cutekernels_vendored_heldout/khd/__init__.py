"""The vendored cute-kernels subset's package root (upstream's package is
still named khd at the vendored commit). The RMSNorm and SwiGLU modules and
constants.py are upstream's, written by the accuracy scorer; this root, the
enums and utils stand-ins and the CUDA backend stand-in are the tree's own."""
