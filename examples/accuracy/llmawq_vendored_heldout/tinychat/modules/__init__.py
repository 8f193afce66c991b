"""The vendored fused norm module (upstream's fused_norm.py, written by the scorer)."""
