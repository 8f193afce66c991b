"""Vendored GPTQModel modules (written from upstream by the accuracy scorer)."""
