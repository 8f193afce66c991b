"""Vendored torchao modules (written from upstream by the accuracy scorer)."""
