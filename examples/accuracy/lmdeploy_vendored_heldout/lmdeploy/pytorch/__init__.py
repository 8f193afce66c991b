"""Vendored LMDeploy modules (written from upstream by the accuracy scorer)."""
