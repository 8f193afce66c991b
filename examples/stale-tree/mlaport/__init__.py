"""mlaport: Triton ports of the MLA cache, sparse-index and prefix kernels."""
