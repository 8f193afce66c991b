"""The vendored GemLite subset's package root. core.py and the Triton
kernels under triton_kernels/ are upstream's, written by the accuracy
scorer; this root is the tree's own and imports nothing, so the Triton
kernels load without the CUDA extension (core.py still needs gemlite_lib
built beside it)."""
