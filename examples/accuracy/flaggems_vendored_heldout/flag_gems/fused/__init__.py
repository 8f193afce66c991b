"""Vendored FlagGems modules (written from upstream by the accuracy scorer)."""
