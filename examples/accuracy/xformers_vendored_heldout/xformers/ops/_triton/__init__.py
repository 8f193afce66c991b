"""Vendored xformers Triton kernels (written from upstream by the accuracy scorer)."""
