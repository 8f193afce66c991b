"""Vendored QuACK modules (written from upstream by the accuracy scorer)."""
