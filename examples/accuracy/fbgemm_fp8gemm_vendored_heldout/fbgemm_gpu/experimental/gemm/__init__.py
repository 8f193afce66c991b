"""Vendored FBGEMM modules (written from upstream by the accuracy scorer)."""
