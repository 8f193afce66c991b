"""Vendored LightLLM modules (written from upstream by the accuracy scorer)."""
