"""Vendored Liger-Kernel modules (written from upstream by the accuracy scorer)."""
