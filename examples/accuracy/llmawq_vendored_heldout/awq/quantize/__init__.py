"""The vendored quantised linear layer (upstream's qmodule.py, written by the scorer)."""
