"""Vendored xformers ops (written from upstream by the accuracy scorer)."""
